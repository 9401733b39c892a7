import HappyCore
@testable import HappyServer
import XCTest

/// Issue 26 point 10: the read-only routes a page on another origin needs
/// (`/api/state`, `/api/history`, `/frame/`) answer with
/// `Access-Control-Allow-Origin` as `auth.allowedOrigins` says, errors too;
/// the others send none. The static files' headers are in
/// HappyServerTests.CrossOriginFileTests (they come from lws's file mount).
final class CrossOriginTests: XCTestCase {
    private let elsewhere = "http://pages.example:9000"

    func testAnyOriginMayReadTheReadOnlyRoutesWhenNoOriginsAreListed() {
        let test = TestServer()
        for (path, query) in [("/api/state", [:]), ("/api/history", [:]), ("/api/state", ["seq": "0"]),
                              ("/api/state", ["room": "no room"]), ("/api/history", ["bogus": "1"])] as [(String, [String: String])] {
            let answer = test.request("GET", path, query: query, headers: ["origin": elsewhere])
            XCTAssertEqual(answer.header("Access-Control-Allow-Origin"), "*", "\(path) \(query): \(answer.status ?? 0)")
            XCTAssertNil(answer.header("Vary"), "\(path) \(query)")
        }
        let noOrigin = test.request("GET", "/api/state")
        XCTAssertEqual(noOrigin.header("Access-Control-Allow-Origin"), "*", "the same answer with or without Origin")

        let frame = test.begin("GET", "/frame/face.png", query: ["w": "32"], headers: ["origin": elsewhere])
        test.finish(frame)
        XCTAssertEqual(frame.status, 200)
        XCTAssertEqual(frame.header("Access-Control-Allow-Origin"), "*")
        XCTAssertEqual(frame.header("ETag").map { !$0.isEmpty }, true, "the route's own headers stay")
        let notModified = test.request("GET", "/frame/face.png", query: ["w": "32"],
                                       headers: ["origin": elsewhere, "if-none-match": frame.header("ETag") ?? ""])
        XCTAssertEqual(notModified.status, 304)
        XCTAssertEqual(notModified.header("Access-Control-Allow-Origin"), "*")
    }

    func testAListedOriginIsEchoedAndOthersGetNone() {
        let test = TestServer(config: TestServer.config { $0.auth.allowedOrigins = [self.elsewhere, "https://b.example"] })
        let listed = test.request("GET", "/api/state", headers: ["origin": elsewhere])
        XCTAssertEqual(listed.header("Access-Control-Allow-Origin"), elsewhere)
        XCTAssertEqual(listed.header("Vary"), "Origin")
        let other = test.request("GET", "/api/history", headers: ["origin": "https://b.example"])
        XCTAssertEqual(other.header("Access-Control-Allow-Origin"), "https://b.example")

        for origin in ["http://evil.example", "http://pages.example:9001", nil] as [String?] {
            let answer = test.request("GET", "/api/state", headers: origin.map { ["origin": $0] } ?? [:])
            XCTAssertEqual(answer.status, 200, "the answer itself is the same")
            XCTAssertNil(answer.header("Access-Control-Allow-Origin"), "\(origin ?? "no origin")")
            XCTAssertEqual(answer.header("Vary"), "Origin", "caches keep answers per origin")
        }
    }

    func testRoutesThatChangeOrStreamSendNone() {
        let test = TestServer()
        let post = test.request("POST", "/api/intent", headers: ["origin": elsewhere], body: #"{"action":"dragon.forward"}"#)
        XCTAssertEqual(post.status, 200, post.text)
        XCTAssertNil(post.header("Access-Control-Allow-Origin"), "a page elsewhere sends intents over its WebSocket")
        for path in ["/healthz", "/metrics", "/api/nothing"] {
            XCTAssertNil(test.request("GET", path, headers: ["origin": elsewhere]).header("Access-Control-Allow-Origin"), path)
        }
    }
}
