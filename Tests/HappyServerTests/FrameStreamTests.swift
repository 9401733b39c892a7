import Foundation
import HappyCore
import XCTest

/// `GET /stream/{view}.png`: multipart/x-mixed-replace PNG streams on a
/// live server, read part by part from a raw socket.
final class FrameStreamTests: XCTestCase {
    private var server: ServerProcess!
    private let boundary = "happyframe"

    override func setUpWithError() throws {
        server = try ServerProcess()
    }

    override func tearDown() {
        server?.stop()
        server = nil
    }

    private func openStream(_ path: String) throws -> RawHTTPConnection {
        let connection = try RawHTTPConnection(port: server.port)
        connection.get(path)
        let head = try connection.readHead()
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.headers["content-type"], "multipart/x-mixed-replace; boundary=\(boundary)")
        XCTAssertEqual(head.headers["cache-control"], "no-store")
        return connection
    }

    private func nextPNG(_ stream: RawHTTPConnection, timeout: Double = 10) throws -> [UInt8] {
        let part = try stream.readPart(boundary: boundary, timeout: timeout)
        XCTAssertEqual(part.headers["content-type"], "image/png")
        XCTAssertNotNil(PNGHeader.size(part.body), "a part is not a PNG")
        return part.body
    }

    private func intent(_ body: String) throws {
        XCTAssertEqual(try HTTP.post("\(server.httpBase)/api/intent", body: body).status, 200)
    }

    func testFirstPartAtOnceThenANewPartAfterAnIntent() throws {
        let stream = try openStream("/stream/face.png")
        let first = try nextPNG(stream, timeout: 5)
        XCTAssertTrue(PNGHeader.size(first).map { $0 == (300, 300) } ?? false)

        try intent(#"{"action":"face.setHappiness","value":100}"#)
        let second = try nextPNG(stream, timeout: 5)
        XCTAssertNotEqual(second, first)
        let direct = try HTTP.get("\(server.httpBase)/frame/face.png")
        XCTAssertEqual(Array(direct.body), second, "the stream shows what /frame shows")
    }

    func testAViewOnlyChangesWithWhatItShows() throws {
        let face = try openStream("/stream/face.png?w=64&h=64")
        let dragon = try openStream("/stream/dragon.png")
        _ = try nextPNG(face)
        _ = try nextPNG(dragon)

        try intent(#"{"action":"dragon.forward"}"#)
        _ = try nextPNG(dragon, timeout: 5)
        XCTAssertFalse(face.hasData(within: 0.7), "a dragon change does not redraw the face")

        try intent(#"{"action":"face.pinch","factor":0.5}"#)
        _ = try nextPNG(face, timeout: 5)
        XCTAssertFalse(dragon.hasData(within: 0.7), "a face change does not redraw the dragon")
    }

    func testHeartStreamFollowsTheWaveAtFps() throws {
        let stream = try openStream("/stream/heart.png?w=100&h=100&fps=20")
        let started = Date()
        var parts: [[UInt8]] = []
        while Date().timeIntervalSince(started) < 1.5 { parts.append(try nextPNG(stream, timeout: 2)) }
        XCTAssertGreaterThanOrEqual(parts.count, 12, "about 20 frames a second")
        XCTAssertLessThanOrEqual(parts.count, 40)
        XCTAssertGreaterThan(Set(parts).count, parts.count / 2, "the wave moves between frames")
    }

    func testStreamsEndCleanlyOnShutdown() throws {
        let stream = try openStream("/stream/scene.png?fps=5")
        _ = try nextPNG(stream)
        let started = Date()
        server.stop()
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "streams do not hold shutdown up")
        let rest = stream.readToEnd(timeout: 3)
        XCTAssertTrue(stream.reachedEOF)
        XCTAssertTrue(rest.suffix(16) == Array("--\(boundary)--\r\n".utf8), "closing boundary")
    }

    func testClientsThatGoAwayAreForgotten() throws {
        do {
            let stream = try openStream("/stream/face.png")
            _ = try nextPNG(stream)
            XCTAssertEqual(try server.metric("happy_frame_streams"), 1, "the open stream is counted")
        }
        let deadline = Date(timeIntervalSinceNow: 5)
        var open = -1.0
        while Date() < deadline {
            open = try server.metric("happy_frame_streams")
            if open == 0 { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        XCTAssertEqual(open, 0, "the stream of a client that hung up is closed")
    }
}
