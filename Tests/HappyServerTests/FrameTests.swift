import Foundation
import HappyCore
import XCTest

/// Server-rendered frames on a live server: `GET /frame/{view}.png`
/// (PROTOCOL.md section 6) with its validation, ETags and cache.
final class FrameTests: XCTestCase {
    private var server: ServerProcess!

    /// Big frames cost much of an address's HTTP rate (SecurityRequestTests): lifted here, where drawing is the subject.
    static var unlimitedHTTP: [String: Any] { ["httpPerSecond": 1_000_000, "httpBurst": 1_000_000] }

    override func setUpWithError() throws {
        server = try ServerProcess(["limits": Self.unlimitedHTTP])
    }

    override func tearDown() {
        server?.stop()
        server = nil
    }

    private func get(_ path: String, headers: [String: String] = [:]) throws -> (head: RawHTTPConnection.Head, body: [UInt8]) {
        let connection = try RawHTTPConnection(port: server.port)
        connection.get(path, headers: headers)
        return try connection.readResponse(timeout: 30)
    }

    private func metric(_ name: String) throws -> Double {
        try server.metric(name)
    }

    private func intent(_ body: String, room: String = "lobby") throws {
        let response = try HTTP.post("\(server.httpBase)/api/intent?room=\(room)", body: body)
        XCTAssertEqual(response.status, 200, response.text)
    }

    // MARK: sizes and format

    func testEveryViewAtDefaultSmallestAndLargestSize() throws {
        let defaults = ["face": (300, 300), "heart": (300, 300), "dragon": (375, 310), "scene": (1015, 330)]
        for (view, size) in defaults.sorted(by: { $0.key < $1.key }) {
            for (query, expected) in [("", size), ("?w=16&h=16", (16, 16)), ("?w=2048&h=2048", (2048, 2048))] {
                let (head, body) = try get("/frame/\(view).png\(query)")
                XCTAssertEqual(head.status, 200, "\(view)\(query)")
                XCTAssertEqual(head.headers["content-type"], "image/png")
                XCTAssertEqual(head.headers["content-length"], String(body.count))
                let png = try XCTUnwrap(PNGHeader.size(body), "\(view)\(query) is not a PNG")
                XCTAssertEqual(png.width, expected.0, "\(view)\(query)")
                XCTAssertEqual(png.height, expected.1, "\(view)\(query)")
            }
        }
    }

    func testOneSideFollowsTheDefaultAspect() throws {
        let dragon = try get("/frame/dragon.png?w=750")
        XCTAssertTrue(PNGHeader.size(dragon.body).map { $0 == (750, 620) } ?? false)
        let face = try get("/frame/face.png?h=64")
        XCTAssertTrue(PNGHeader.size(face.body).map { $0 == (64, 64) } ?? false)
    }

    func testETagNamesEpochSeqViewSizeAndStep() throws {
        let epoch = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state").json?["epoch"]?.stringValue)
        XCTAssertEqual(try get("/frame/face.png").head.headers["etag"], "\"\(epoch)-0-face-300x300-0\"")
        XCTAssertEqual(try get("/frame/heart.png?w=200&h=100&phase=42").head.headers["etag"],
                       "\"\(epoch)-0-heart-200x100-42\"")
        XCTAssertEqual(try get("/frame/dragon.png?phase=42").head.headers["etag"],
                       "\"\(epoch)-0-dragon-375x310-0\"", "views without the wave ignore the step")
    }

    // MARK: validation

    func testBadParametersAreFourHundredsWithJSONErrors() throws {
        let cases: [(String, Int, String)] = [
            ("/frame/nose.png", 404, "not_found"),
            ("/frame/face", 404, "not_found"),
            ("/frame/face.jpg", 404, "not_found"),
            ("/frame/face.png?w=15", 400, "invalid_value"),
            ("/frame/face.png?h=2049", 400, "invalid_value"),
            ("/frame/face.png?w=abc", 400, "invalid_value"),
            ("/frame/face.png?w=300.5", 400, "invalid_value"),
            ("/frame/face.png?w=-300", 400, "invalid_value"),
            ("/frame/face.png?w=", 400, "invalid_value"),
            ("/frame/heart.png?phase=100", 400, "invalid_value"),
            ("/frame/heart.png?phase=-1", 400, "invalid_value"),
            ("/frame/heart.png?phase=x", 400, "invalid_value"),
            ("/frame/face.png?room=bad!room", 400, "invalid_value"),
            ("/frame/face.png?room=" + String(repeating: "a", count: 65), 400, "invalid_value"),
            ("/stream/face.png?fps=0", 400, "invalid_value"),
            ("/stream/face.png?fps=31", 400, "invalid_value"),
            ("/stream/face.png?w=9999", 400, "invalid_value"),
            ("/stream/nose.png", 404, "not_found"),
        ]
        for (path, status, code) in cases {
            let (head, body) = try get(path)
            XCTAssertEqual(head.status, status, path)
            XCTAssertEqual(head.headers["content-type"], "application/json", path)
            let json = try JSONParser.parse(body)
            XCTAssertEqual(json["type"]?.stringValue, "error", path)
            XCTAssertEqual(json["code"]?.stringValue, code, path)
            XCTAssertFalse(json["message"]?.stringValue?.isEmpty ?? true, path)
        }
        let post = try HTTP.post("\(server.httpBase)/frame/face.png", body: "")
        XCTAssertEqual(post.status, 405)
        XCTAssertEqual(post.json?["code"]?.stringValue, "method_not_allowed")
    }

    func testTokenIsRequiredWhenAuthIsOn() throws {
        server.stop()
        server = try ServerProcess(["auth": ["secret": "frames-test-secret"], "limits": Self.unlimitedHTTP])
        for path in ["/frame/face.png", "/stream/face.png"] {
            let (head, body) = try get(path)
            XCTAssertEqual(head.status, 401, path)
            XCTAssertEqual(try JSONParser.parse(body)["code"]?.stringValue, "unauthorized")
        }
    }

    // MARK: caching

    func testIfNoneMatchGives304AndAChangeChangesTheETag() throws {
        let first = try get("/frame/face.png")
        let etag = try XCTUnwrap(first.head.headers["etag"])
        XCTAssertEqual(first.head.headers["cache-control"], "no-cache")

        let again = try get("/frame/face.png", headers: ["If-None-Match": etag])
        XCTAssertEqual(again.head.status, 304)
        XCTAssertEqual(again.head.headers["etag"], etag)
        XCTAssertTrue(again.body.isEmpty)
        XCTAssertEqual(try get("/frame/face.png", headers: ["If-None-Match": "\"other\", W/\(etag)"]).head.status, 304)
        XCTAssertEqual(try get("/frame/face.png", headers: ["If-None-Match": "\"other\""]).head.status, 200)

        try intent(#"{"action":"face.setHappiness","value":90}"#)
        let changed = try get("/frame/face.png", headers: ["If-None-Match": etag])
        XCTAssertEqual(changed.head.status, 200)
        let newTag = try XCTUnwrap(changed.head.headers["etag"])
        XCTAssertNotEqual(newTag, etag)
        XCTAssertTrue(newTag.contains("-1-face-"), newTag)
        XCTAssertNotEqual(changed.body, first.body, "the picture changed with the smile")
    }

    func testHeartPhasePinsTheWave() throws {
        let zero = try get("/frame/heart.png?phase=0")
        let fifty = try get("/frame/heart.png?phase=50")
        XCTAssertNotEqual(zero.head.headers["etag"], fifty.head.headers["etag"])
        XCTAssertNotEqual(zero.body, fifty.body)
        let hitsBefore = try metric("happy_render_cache_hits_total")
        let zeroAgain = try get("/frame/heart.png?phase=0")
        XCTAssertEqual(zeroAgain.body, zero.body)
        XCTAssertEqual(zeroAgain.head.headers["etag"], zero.head.headers["etag"])
        XCTAssertEqual(try metric("happy_render_cache_hits_total"), hitsBefore + 1)
        let face = try get("/frame/face.png?phase=50")
        XCTAssertEqual(face.body, try get("/frame/face.png?phase=0").body, "the face has no wave")
    }

    func testConcurrentIdenticalRequestsCauseOneRender() throws {
        _ = try get("/frame/face.png?w=16&h=16")  // the room is loaded
        let rendersBefore = try metric("happy_renders_total")
        let path = "/frame/scene.png?w=2048&h=2048&phase=7"
        let connections = try (0..<4).map { _ in try RawHTTPConnection(port: server.port) }
        for connection in connections { connection.get(path) }
        let responses = try connections.map { try $0.readResponse(timeout: 30) }
        XCTAssertEqual(Set(responses.map(\.head.status)), [200])
        XCTAssertEqual(Set(responses.map(\.body)).count, 1, "all got the same bytes")
        XCTAssertEqual(try metric("happy_renders_total"), rendersBefore + 1, "four requests, one render")
        XCTAssertEqual(try metric("happy_render_coalesced_total") + (try metric("happy_render_cache_hits_total")),
                       3, accuracy: 0.1)
    }

    // MARK: the dragon status label

    func testDragonStatusFollowsEventsAndSurvivesARestart() throws {
        let before = try get("/frame/dragon.png?room=status").body
        try intent(#"{"action":"dragon.forward"}"#, room: "status")
        try intent(#"{"action":"face.setHappiness","value":10}"#, room: "status")
        let after = try get("/frame/dragon.png?room=status").body
        XCTAssertNotEqual(after, before, "the dragon moved and the label changed")
        server.stop()
        try server.start()
        let restarted = try get("/frame/dragon.png?room=status").body
        XCTAssertEqual(restarted, after, "the label is recovered from the room's history")
    }
}
