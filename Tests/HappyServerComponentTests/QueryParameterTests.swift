import HappyCore
@testable import HappyServer
import XCTest

/// Issue 26 point 9: a query parameter a route does not know is refused with
/// a 400 `invalid_value` naming it and the known ones, before the route does
/// anything; `room` and `token` are known on every route that reads a room.
final class QueryParameterTests: XCTestCase {
    private let unknown: [(method: String, path: String, query: [String: String], named: String, known: String)] = [
        ("GET", "/api/state", ["room": "a", "bogus": "1"], "bogus", "room, token, seq"),
        ("GET", "/api/history", ["room": "a", "sinse": "3"], "sinse", "room, token, since, limit"),
        ("POST", "/api/intent", ["rooom": "a"], "rooom", "room, token"),
        ("GET", "/frame/scene.png", ["width": "5"], "width", "room, token, w, h, phase, seq, v"),
        ("GET", "/stream/face.png", ["room": "a", "phase": "3"], "phase", "room, token, w, h, fps"),
    ]

    func testAnUnknownParameterIsRefusedNamingItAndTheKnownOnes() {
        let test = TestServer()
        for entry in unknown {
            let body = entry.method == "POST" ? #"{"action":"dragon.forward"}"# : nil
            let answer = test.request(entry.method, entry.path, query: entry.query, body: body)
            let label = "\(entry.method) \(entry.path)"
            XCTAssertEqual(answer.status, 400, "\(label): \(answer.text)")
            XCTAssertEqual(answer.json?["code"]?.stringValue, "invalid_value", label)
            XCTAssertEqual(answer.json?["message"]?.stringValue,
                           "unknown query parameter \"\(entry.named)\" on \(entry.path) (known: \(entry.known))", label)
        }
        XCTAssertEqual(test.server.directory["lobby"]?.room?.committed.seq ?? 0, 0, "the refused intent was not applied")
        XCTAssertTrue(test.server.streams.open.isEmpty, "no stream was opened")
    }

    func testSeveralUnknownParametersAreAllNamed() {
        let test = TestServer()
        let answer = test.request("GET", "/api/state", query: ["zeta": "", "alpha": "1", "room": "a"])
        XCTAssertEqual(answer.status, 400)
        XCTAssertEqual(answer.json?["message"]?.stringValue,
                       #"unknown query parameters "alpha", "zeta" on /api/state (known: room, token, seq)"#)
    }

    func testKnownParametersPass() throws {
        let test = TestServer()
        let client = test.joined(room: "a")
        test.sendIntent(client, "dragon.forward", id: "f")
        XCTAssertEqual(test.request("GET", "/api/state", query: ["room": "a", "token": "ignored-without-a-secret"]).status, 200)
        XCTAssertEqual(test.request("GET", "/api/state", query: ["room": "a", "seq": "1"]).status, 200)
        XCTAssertEqual(test.request("GET", "/api/history", query: ["room": "a", "since": "0", "limit": "5"]).status, 200)
        let post = test.request("POST", "/api/intent", query: ["room": "a", "token": "t"], body: #"{"action":"dragon.back"}"#)
        XCTAssertEqual(post.status, 200, post.text)
        let frame = test.begin("GET", "/frame/heart.png",
                               query: ["room": "a", "token": "t", "w": "32", "h": "32", "phase": "1", "v": "7"])
        test.finish(frame)
        XCTAssertEqual(frame.status, 200, frame.text)
    }

    func testStatusRoutesTakeAnyParameter() {
        let test = TestServer()
        XCTAssertEqual(test.request("GET", "/healthz", query: ["probe": "1"]).status, 200)
        XCTAssertEqual(test.request("GET", "/metrics", query: ["cache": "0"]).status, 200)
    }

    func testAnUnknownRouteIsStillA404BeforeItsParametersAreLookedAt() {
        let test = TestServer()
        XCTAssertEqual(test.request("GET", "/api/nothing", query: ["bogus": "1"]).status, 404)
        XCTAssertEqual(test.request("PUT", "/api/state", query: ["bogus": "1"]).status, 405)
    }
}
