import HappyCore
@testable import HappyServer
import XCTest

/// The HTTP routes (PROTOCOL.md section 6) through the intake and router:
/// every route, its methods, and what is refused before routing.
final class HTTPRouterTests: XCTestCase {
    func testMountPointsAreTheRoutesFirstSegments() {
        let test = TestServer()
        XCTAssertEqual(test.server.http.router.mountPoints, ["/healthz", "/metrics", "/api", "/admin", "/frame", "/stream"])
        XCTAssertTrue(test.server.http.router.routes.contains { $0.path.mountPoint == "/api" && $0.methods == ["GET"] })
    }

    func testHealthzAnswersOKToGetAndHead() {
        let test = TestServer()
        for method in ["GET", "HEAD"] {
            let health = test.request(method, "/healthz")
            XCTAssertEqual(health.status, 200, method)
            XCTAssertEqual(health.text, "ok", method)
            XCTAssertEqual(health.transport.head?.contentType, "text/plain")
            XCTAssertEqual(health.transport.head?.contentLength, 2)
            XCTAssertEqual(health.transport.head?.cacheControl, "no-store")
            XCTAssertTrue(health.completed)
            XCTAssertTrue(health.transport.finalWritten)
        }
        XCTAssertEqual(test.metrics.httpRequests["2xx"], 2)
    }

    func testMetricsAreServedAsPrometheusText() {
        let test = TestServer()
        _ = test.joined()
        let metrics = test.request("GET", "/metrics")

        XCTAssertEqual(metrics.status, 200)
        XCTAssertEqual(metrics.transport.head?.contentType, "text/plain; version=0.0.4")
        XCTAssertTrue(metrics.text.contains("\nhappy_connections 1\n"), metrics.text)
        XCTAssertTrue(metrics.text.contains("\nhappy_rooms_occupied 1\n"))
        XCTAssertTrue(metrics.text.contains("\nhappy_store_healthy 1\n"))
    }

    func testStateOfTheDefaultRoom() {
        let test = TestServer()
        let client = test.joined(name: "alice")
        let state = test.request("GET", "/api/state")

        XCTAssertEqual(state.status, 200)
        XCTAssertEqual(state.transport.head?.contentType, "application/json")
        XCTAssertEqual(state.json?["room"]?.stringValue, "lobby")
        XCTAssertEqual(state.json?["seq"]?.intValue, 0)
        XCTAssertEqual(state.json?["epoch"]?.stringValue, test.server.directory["lobby"]?.room?.epoch)
        XCTAssertEqual(state.json?["presenceCount"]?.intValue, 1)
        XCTAssertEqual(state.json?["presence"]?.arrayValue?.first?["id"]?.stringValue, client.id)
        XCTAssertEqual(state.json?["state"]?["face"]?["happiness"]?.intValue, 50)
    }

    func testHistoryAndPastStateOfARoom() {
        let test = TestServer()
        let client = test.joined(name: "alice")
        test.sendIntent(client, "dragon.forward", id: "a")
        test.sendIntent(client, "face.setHappiness", id: "b", #""value":90"#)
        let history = test.request("GET", "/api/history", query: ["since": "1"])
        XCTAssertEqual(history.status, 200, history.text)
        XCTAssertEqual(history.json?["seq"]?.intValue, 2)
        XCTAssertEqual(history.json?["first"]?.intValue, 1)
        XCTAssertEqual(history.json?["events"]?.arrayValue?.map { $0["seq"]?.intValue }, [2])

        let past = test.request("GET", "/api/state", query: ["seq": "1"])
        XCTAssertEqual(past.status, 200, past.text)
        XCTAssertEqual(past.json?["seq"]?.intValue, 1)
        XCTAssertEqual(past.json?["state"]?["face"]?["happiness"]?.intValue, 50)
        XCTAssertEqual(past.json?["dragonStatus"]?.stringValue, "forward, (x,y) = (20, 10)")
        XCTAssertNil(past.json?["presence"], "a past state has no presence")

        let beyond = test.request("GET", "/api/state", query: ["seq": "3"])
        XCTAssertEqual(beyond.status, 400)
        XCTAssertEqual(test.request("GET", "/api/history", query: ["limit": "0"]).status, 400)
    }

    func testStateOfANamedRoomAndAnInvalidName() {
        let test = TestServer()
        let named = test.request("GET", "/api/state", query: ["room": "attic"])
        XCTAssertEqual(named.json?["room"]?.stringValue, "attic")
        XCTAssertEqual(named.json?["presenceCount"]?.intValue, 0)

        let invalid = test.request("GET", "/api/state", query: ["room": "a b"])
        XCTAssertEqual(invalid.status, 400)
        XCTAssertEqual(invalid.json?["code"]?.stringValue, "invalid_value")
    }

    func testPostedIntentIsAppliedAckedAndBroadcast() {
        let test = TestServer()
        let watcher = test.joined()
        let post = test.request("POST", "/api/intent", body: #"{"id":"p1","action":"face.setHappiness","value":77}"#)

        XCTAssertEqual(post.status, 200)
        XCTAssertEqual(post.json?["type"]?.stringValue, "ack")
        XCTAssertEqual(post.json?["id"]?.stringValue, "p1")
        XCTAssertEqual(post.json?["seq"]?.intValue, 1)
        XCTAssertEqual(post.json?["result"]?.stringValue, "applied")
        let event = test.messages(of: watcher).first
        XCTAssertEqual(event?["type"]?.stringValue, "event")
        XCTAssertEqual(event?["sender"]?["id"]?.stringValue, "http")
        XCTAssertEqual(event?["sender"]?["name"]?.stringValue, "http")
        XCTAssertEqual(event?["state"]?["face"]?["happiness"]?.intValue, 77)
    }

    func testPostedIntentTakesItsSenderNameFromXHappyName() {
        let test = TestServer()
        let watcher = test.joined(room: "den")
        let post = test.request("POST", "/api/intent", query: ["room": "den"], headers: ["x-happy-name": "zoe"],
                                body: #"{"type":"intent","action":"dragon.forward"}"#)

        XCTAssertEqual(post.status, 200)
        XCTAssertEqual(test.messages(of: watcher).first?["sender"]?["name"]?.stringValue, "zoe")
    }

    func testInvalidXHappyNameIsRefused() {
        let test = TestServer()
        let post = test.request("POST", "/api/intent", headers: ["x-happy-name": String(repeating: "z", count: 40)],
                                body: #"{"action":"dragon.forward"}"#)
        XCTAssertEqual(post.status, 400)
        XCTAssertEqual(post.json?["code"]?.stringValue, "invalid_value")
        XCTAssertEqual(post.json?["message"]?.stringValue, "X-Happy-Name must be 1-32 printable characters")
    }

    func testInvalidIntentBodiesAreRefusedWithTheirCodes() {
        let test = TestServer()
        let cases: [(body: String, status: Int, code: String)] = [
            ("{oops", 400, "bad_json"),
            ("[1]", 400, "bad_message"),
            (#"{"type":"ping"}"#, 400, "bad_message"),
            (#"{"action":"face.explode"}"#, 400, "unknown_action"),
            (#"{"action":"face.setHappiness","value":"lots"}"#, 400, "invalid_value"),
            (#"{"action":"face.setHappiness"}"#, 400, "invalid_value"),
        ]
        for entry in cases {
            let post = test.request("POST", "/api/intent", body: entry.body)
            XCTAssertEqual(post.status, entry.status, entry.body)
            XCTAssertEqual(post.json?["type"]?.stringValue, "error", entry.body)
            XCTAssertEqual(post.json?["code"]?.stringValue, entry.code, entry.body)
        }
        XCTAssertEqual(test.server.directory["lobby"]?.room?.committed.seq ?? 0, 0, "nothing was applied")
    }

    func testOversizedBodyIsRefusedBeforeItIsRead() {
        let test = TestServer()
        let body = Array(repeating: UInt8(ascii: " "), count: test.server.http.maxRequestBody + 1)
        let post = test.begin("POST", "/api/intent", body: body)
        test.pump(post)

        XCTAssertEqual(post.status, 413)
        XCTAssertEqual(post.transport.head?.close, true, "the unread body ends the connection")
        XCTAssertTrue(post.exchange.incomingBody.bytes.isEmpty)
    }

    func testPostedIntentsAreRateLimitedPerAddress() {
        let test = TestServer(config: TestServer.config {
            $0.limits.intentsPerSecond = 1
            $0.limits.intentBurst = 1
        })
        let body = #"{"action":"dragon.forward"}"#
        XCTAssertEqual(test.request("POST", "/api/intent", body: body, peer: "198.51.100.1").status, 200)
        let limited = test.request("POST", "/api/intent", body: body, peer: "198.51.100.1")
        XCTAssertEqual(limited.status, 429)
        XCTAssertEqual(limited.json?["code"]?.stringValue, "rate_limited")
        XCTAssertEqual(test.request("POST", "/api/intent", body: body, peer: "198.51.100.2").status, 200,
                       "another address has its own bucket")
    }

    func testTokensGuardTheAPI() {
        let test = TestTokens.server()
        XCTAssertEqual(test.request("GET", "/api/state").status, 401)
        let elsewhere = TestTokens.mint("pat", role: .player, room: "other")
        XCTAssertEqual(test.request("GET", "/api/state", query: ["token": elsewhere]).status, 403)
        let viewer = TestTokens.mint("vic", role: .viewer)
        XCTAssertEqual(test.request("GET", "/api/state", headers: ["authorization": "Bearer \(viewer)"]).status, 200)
        let post = test.request("POST", "/api/intent", query: ["token": viewer], body: #"{"action":"dragon.back"}"#)
        XCTAssertEqual(post.status, 403)
        XCTAssertEqual(post.json?["code"]?.stringValue, "forbidden")
    }

    func testUnknownPathsAreNotFound() {
        let test = TestServer()
        for path in ["/api/x", "/api", "/nothing", "/healthz/deeper", "/metricsx"] {
            let response = test.request("GET", path)
            XCTAssertEqual(response.status, 404, path)
            XCTAssertEqual(response.json?["code"]?.stringValue, "not_found", path)
            XCTAssertEqual(response.json?["message"]?.stringValue, "no route GET \(path)", path)
        }
    }

    func testErrorAnswersNameTheirCodeOnTheWireWithItsStatus() {
        let answers: [(ErrorCode, status: Int, wire: String)] = [
            (.unauthorized, 401, "unauthorized"), (.forbidden, 403, "forbidden"), (.notFound, 404, "not_found"),
            (.methodNotAllowed, 405, "method_not_allowed"), (.unsupported, 409, "unsupported"), (.gone, 410, "gone"),
            (.rateLimited, 429, "rate_limited"), (.renderFailed, 500, "render_failed"),
            (.unavailable, 503, "unavailable"),
        ]
        for (code, status, wire) in answers {
            let error = HTTPError(code, "why")
            XCTAssertEqual(error.status, status, wire)
            XCTAssertEqual(String(decoding: error.body, as: UTF8.self),
                           #"{"type":"error","code":"\#(wire)","message":"why"}"#)
        }
        let intentError = HTTPError(WireError(.invalidValue, "happiness must be an integer", id: "a1"))
        XCTAssertEqual(String(decoding: intentError.body, as: UTF8.self),
                       #"{"type":"error","id":"a1","code":"invalid_value","message":"happiness must be an integer"}"#)
        XCTAssertEqual(intentError.status, 400)
    }

    func testWrongMethodsAreNotAllowedOnEveryRoute() {
        let test = TestServer()
        let cases: [(method: String, path: String)] = [
            ("POST", "/healthz"), ("DELETE", "/healthz"),
            ("POST", "/metrics"), ("HEAD", "/metrics"),
            ("POST", "/api/state"), ("PUT", "/api/state"),
            ("GET", "/api/intent"), ("HEAD", "/api/intent"),
            ("POST", "/frame/face.png"), ("DELETE", "/stream/face.png"),
            ("POST", "/api/history"), ("DELETE", "/api/history"),
        ]
        for (method, path) in cases {
            let response = test.request(method, path)
            XCTAssertEqual(response.status, 405, "\(method) \(path)")
            XCTAssertEqual(response.json?["code"]?.stringValue, "method_not_allowed")
            XCTAssertEqual(response.json?["message"]?.stringValue, "\(method) is not allowed on \(path)")
        }
        XCTAssertEqual(test.metrics.httpRequests["4xx"], cases.count)
    }

    func testControlCharacterInTheQueryIsRefused() {
        let test = TestServer()
        let response = test.request("GET", "/api/state", query: ["room": "lobby", "note": "a\nb"])
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(response.json?["message"]?.stringValue, "query argument note holds a control character")
        XCTAssertEqual(response.transport.head?.close, true)
    }

    func testScreenedRequestsAreRefusedBeforeRouting() {
        let test = TestServer()
        let cut = test.begin("GET", "/healthz", screen: .cutRequestLine)
        test.pump(cut)
        XCTAssertEqual(cut.status, 400)
        XCTAssertEqual(cut.json?["message"]?.stringValue, HTTPIntake.cutRequestLineMessage)

        let capped = test.begin("GET", "/healthz", peer: "203.0.113.5", screen: .overAddressCap)
        test.pump(capped)
        XCTAssertEqual(capped.status, 429)
        XCTAssertEqual(capped.json?["message"]?.stringValue, "too many connections from 203.0.113.5")
        XCTAssertEqual(capped.transport.head?.close, true)
    }

    func testWebSocketUpgradesAreScreened() {
        let test = TestServer(config: TestServer.config { $0.auth.allowedOrigins = ["https://happy.example"] })
        let http = test.server.http
        XCTAssertNil(http.upgradeRefusal(.pass, client: "c", path: "/ws", origin: "https://happy.example"))
        XCTAssertNil(http.upgradeRefusal(.pass, client: "c", path: "/ws", origin: nil), "not a browser page")
        XCTAssertEqual(http.upgradeRefusal(.pass, client: "c", path: "/ws", origin: "https://evil.example")?.status, 403)
        XCTAssertEqual(http.upgradeRefusal(.pass, client: "c", path: "/echo", origin: nil)?.status, 404,
                       "the echo endpoint is off unless configured")
        XCTAssertEqual(http.upgradeRefusal(.pass, client: "c", path: "/other", origin: nil)?.message,
                       "no WebSocket endpoint at /other")
        XCTAssertEqual(http.upgradeRefusal(.overAddressCap, client: "c", path: "/ws", origin: nil)?.status, 429)
        XCTAssertEqual(http.upgradeRefusal(.cutRequestLine, client: "c", path: "/ws", origin: nil)?.status, 400)
        XCTAssertEqual(test.metrics.connectionsRefused["origin"], 1)
        XCTAssertEqual(test.metrics.connectionsRefused["path"], 2)
    }

    func testBodyArrivingAfterTheRequestTimeoutDropsTheConnection() {
        let test = TestServer()
        let transport = FakeExchangeTransport()
        let exchange = HTTPExchange(transport: transport, method: "POST", path: "/api/intent", query: [:],
                                    peerAddress: "192.0.2.99", startedAt: test.server.clock.fresh())
        test.server.http.begin(exchange, screen: .pass, declaredBodyLength: 20)
        XCTAssertNil(exchange.response, "waiting for the body")
        test.advance(by: HTTPIntake.requestTimeoutSeconds + 1)
        let chunk = Array(#"{"action":"#.utf8)
        XCTAssertFalse(chunk.withUnsafeBytes { test.server.http.body(exchange, $0) })
        XCTAssertEqual(test.metrics.connectionsRefused["slowBody"], 1)
    }
}
