import Foundation
import HappyCore
import XCTest

/// With `auth.secret` set, `/frame` and `/stream` need a token like the API
/// (PROTOCOL.md section 7): any role may read, only the token's room.
final class FrameAccessTests: XCTestCase {
    private var server: ServerProcess!

    override func setUpWithError() throws {
        server = try ServerProcess(["auth": ["secret": "frames-\(UUID().uuidString)"]])
    }

    override func tearDown() {
        server?.stop()
        server = nil
    }

    private func frame(_ query: String, headers: [String: String] = [:]) throws -> HTTP.Response {
        try HTTP.get("\(server.httpBase)/frame/face.png?w=64&h=64&\(query)", headers: headers)
    }

    /// Opens `/stream/face.png` and returns its status, with the first PNG when it is served.
    private func stream(_ query: String) throws -> (status: Int, png: [UInt8]?, body: String) {
        let connection = try RawHTTPConnection(port: server.port)
        connection.get("/stream/face.png?w=64&h=64&\(query)")
        let head = try connection.readHead()
        guard head.status == 200 else {
            let length = head.headers["content-length"].flatMap(Int.init) ?? 0
            return (head.status, nil, String(decoding: try connection.readExactly(length, timeout: 5), as: UTF8.self))
        }
        XCTAssertEqual(head.headers["content-type"], "multipart/x-mixed-replace; boundary=happyframe")
        let part = try connection.readPart(boundary: "happyframe", timeout: 10)
        return (200, part.body, "")
    }

    func testAValidTokenIsServedFramesAndStreams() throws {
        let token = try TokenMinter.mint(server, subject: "pat", role: "player", room: "art")
        let byQuery = try frame("room=art&token=\(token)")
        XCTAssertEqual(byQuery.status, 200)
        XCTAssertEqual(byQuery.headers["content-type"], "image/png")
        XCTAssertTrue(PNGHeader.size(Array(byQuery.body)).map { $0 == (64, 64) } ?? false)
        let byHeader = try frame("room=art", headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(byHeader.status, 200)
        XCTAssertEqual(byHeader.body, byQuery.body)

        let streamed = try stream("room=art&token=\(token)")
        XCTAssertEqual(streamed.status, 200)
        XCTAssertEqual(streamed.png.map { Data($0) }, byQuery.body, "the stream's first frame is the room's frame")
    }

    func testAViewerMayWatch() throws {
        let viewer = try TokenMinter.mint(server, subject: "vic", role: "viewer", room: "art")
        XCTAssertEqual(try frame("room=art&token=\(viewer)").status, 200)
        let streamed = try stream("room=art&token=\(viewer)")
        XCTAssertEqual(streamed.status, 200)
        XCTAssertNotNil(streamed.png.flatMap { PNGHeader.size($0) })
    }

    func testATokenForAnotherRoomIs403AndNoTokenIs401() throws {
        let token = try TokenMinter.mint(server, subject: "pat", role: "player", room: "art")
        try assertRefused("room=gallery&token=\(token)", status: 403, code: "forbidden")
        try assertRefused("room=art", status: 401, code: "unauthorized")
        XCTAssertEqual(try frame("room=art&token=not.a.token").status, 401)
        XCTAssertEqual(try server.metric("happy_frame_streams"), 0, "no refused stream stays open")
    }

    /// `/frame` and `/stream` both refuse `query` with `status` and the error `code`.
    private func assertRefused(_ query: String, status: Int, code: String, line: UInt = #line) throws {
        let framed = try frame(query)
        XCTAssertEqual(framed.status, status, "/frame?\(query)", line: line)
        XCTAssertEqual(framed.json?["code"]?.stringValue, code, "/frame?\(query)", line: line)
        let streamed = try stream(query)
        XCTAssertEqual(streamed.status, status, "/stream?\(query)", line: line)
        XCTAssertEqual(JSONValue.parse(streamed.body)["code"]?.stringValue, code, "/stream?\(query)", line: line)
    }
}
