import Foundation
import HappyCore
import XCTest

/// The HTTP side (PROTOCOL.md section 6).
final class HTTPAPITests: XCTestCase {
    private var server: ServerProcess!
    private var base: String { server.httpBase }

    override func setUpWithError() throws {
        server = try ServerProcess()
    }

    override func tearDown() {
        server = nil
    }

    private func postIntent(_ body: String, room: String? = nil, headers: [String: String] = [:]) throws -> HTTP.Response {
        try HTTP.post("\(base)/api/intent" + (room.map { "?room=\($0)" } ?? ""), body: body,
                      headers: ["Content-Type": "application/json"].merging(headers) { $1 })
    }

    func testStateHasTheDocumentedShape() throws {
        let (_, welcome) = try TestClient.join(server, room: "shape", name: "alice")
        let response = try HTTP.get("\(base)/api/state?room=shape")
        XCTAssertEqual(response.status, 200)
        XCTAssertTrue(response.headers["content-type"]?.hasPrefix("application/json") ?? false)
        let json = try XCTUnwrap(response.json)
        XCTAssertEqual(json["room"]?.stringValue, "shape")
        XCTAssertEqual(json["epoch"], welcome["epoch"])
        XCTAssertEqual(json["seq"]?.intValue, 0)
        XCTAssertJSONEqual(json["state"], Contract.defaultState)
        XCTAssertJSONEqual(json["presence"], .array([.object([("id", welcome["you"]?["id"] ?? .null), ("name", .string("alice"))])]))

        let lobby = try XCTUnwrap(HTTP.get("\(base)/api/state").json)
        XCTAssertEqual(lobby["room"]?.stringValue, "lobby", "the default room")
        XCTAssertEqual(lobby["presence"], .array([]))
    }

    func testPostedIntentIsAcknowledgedAndBroadcastWithTheHTTPSender() throws {
        let (client, _) = try TestClient.join(server)
        let response = try postIntent(#"{"type":"intent","id":"web1","action":"face.setHappiness","value":70}"#,
                                      headers: ["X-Happy-Name": "curl user"])
        XCTAssertEqual(response.status, 200)
        XCTAssertJSONEqual(response.json, .parse(#"{ "type": "ack", "id": "web1", "seq": 1, "result": "applied" }"#))
        let event = try XCTUnwrap(client.next(type: "event"))
        XCTAssertEqual(event["seq"]?.intValue, 1)
        XCTAssertJSONEqual(event["sender"], .parse(#"{ "id": "http", "name": "curl user" }"#))
        XCTAssertEqual(event["state"]?["face"]?["happiness"]?.intValue, 70)

        let untyped = try postIntent(#"{"action":"dragon.forward"}"#)
        XCTAssertEqual(untyped.status, 200, "type may be left out on HTTP")
        XCTAssertJSONEqual(untyped.json, .parse(#"{ "type": "ack", "seq": 2, "result": "applied" }"#))
        XCTAssertJSONEqual(client.next(type: "event")?["sender"], .parse(#"{ "id": "http", "name": "http" }"#))

        let unchanged = try postIntent(#"{"action":"dragon.setHidden","value":false}"#)
        XCTAssertJSONEqual(unchanged.json, .parse(#"{ "type": "ack", "seq": 2, "result": "unchanged" }"#))
        let state = try HTTP.get("\(base)/api/state").json
        XCTAssertEqual(state?["seq"]?.intValue, 2)
        XCTAssertEqual(state?["state"]?["dragon"]?["x"]?.intValue, 20)
    }

    func testBadInputIsA400WithTheErrorBody() throws {
        let cases: [(String, String, String?)] = [
            ("{nope", "bad_json", nil),
            ("[1]", "bad_message", nil),
            (#"{"type":"ping"}"#, "bad_message", nil),
            (#"{"id":"u","action":"face.explode"}"#, "unknown_action", "u"),
            (#"{"id":"v","action":"face.setHappiness","value":"lots"}"#, "invalid_value", "v"),
            (#"{"id":"w","action":"heart.setStyle","lineWidth":-1}"#, "invalid_value", "w"),
        ]
        for (body, code, id) in cases {
            let response = try postIntent(body)
            XCTAssertEqual(response.status, 400, body)
            let json = try XCTUnwrap(response.json, "\(body): \(response.text)")
            XCTAssertEqual(json["type"]?.stringValue, "error", body)
            XCTAssertEqual(json["code"]?.stringValue, code, body)
            XCTAssertEqual(json["id"]?.stringValue, id, body)
            XCTAssertFalse((json["message"]?.stringValue ?? "").isEmpty, body)
        }
        let badName = try postIntent(#"{"action":"dragon.forward"}"#, headers: ["X-Happy-Name": String(repeating: "x", count: 33)])
        XCTAssertEqual(badName.status, 400)
        XCTAssertEqual(badName.json?["code"]?.stringValue, "invalid_value")

        let badRoom = try postIntent(#"{"action":"dragon.forward"}"#, room: "no%20spaces")
        XCTAssertEqual(badRoom.status, 400)
        XCTAssertEqual(badRoom.json?["type"]?.stringValue, "error")
        let badStateRoom = try HTTP.get("\(base)/api/state?room=\(String(repeating: "r", count: 65))")
        XCTAssertEqual(badStateRoom.status, 400)
        XCTAssertEqual(badStateRoom.json?["code"]?.stringValue, "invalid_value")
        XCTAssertEqual(try HTTP.get("\(base)/api/state").json?["seq"]?.intValue, 0, "nothing was applied")
    }

    func testPerAddressRateLimitAnswers429() throws {
        server = try ServerProcess(["limits": ["intentsPerSecond": 0.1, "intentBurst": 3]])
        var statuses: [Int] = []
        for index in 0..<5 {
            let response = try postIntent(#"{"id":"r\#(index)","action":"dragon.toggleHidden"}"#)
            statuses.append(response.status)
            if response.status == 429 {
                XCTAssertEqual(response.json?["code"]?.stringValue, "rate_limited")
                XCTAssertEqual(response.json?["id"]?.stringValue, "r\(index)")
            }
        }
        XCTAssertEqual(statuses, [200, 200, 200, 429, 429])
        XCTAssertEqual(try HTTP.get("\(base)/api/state").json?["seq"]?.intValue, 3, "refused intents are dropped")
    }

    func testUnknownRouteWrongMethodAndHealth() throws {
        let unknown = try HTTP.get("\(base)/api/nothing")
        XCTAssertEqual(unknown.status, 404)
        XCTAssertEqual(unknown.json?["type"]?.stringValue, "error")

        for (method, path) in [("POST", "/api/state"), ("GET", "/api/intent"), ("DELETE", "/api/state"), ("PUT", "/api/intent")] {
            let response = try HTTP.request(method, "\(base)\(path)", body: method == "GET" ? nil : Data("{}".utf8))
            XCTAssertEqual(response.status, 405, "\(method) \(path)")
            XCTAssertEqual(response.json?["type"]?.stringValue, "error", "\(method) \(path): \(response.text)")
        }

        let health = try HTTP.get("\(base)/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.text, "ok")
    }

    func testRootServesThePageFromWebRoot() throws {
        let expected = try String(contentsOf: ServerProcess.repositoryRoot.appendingPathComponent("web/index.html"), encoding: .utf8)
        let page = try HTTP.get("\(base)/")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.headers["content-type"]?.hasPrefix("text/html") ?? false, "\(page.headers)")
        XCTAssertEqual(page.text, expected)
        XCTAssertEqual(try HTTP.get("\(base)/index.html").text, expected)
        let missing = try HTTP.get("\(base)/missing.html")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.json?["code"]?.stringValue, "not_found", missing.text)
    }

    func testPathTraversalNeverLeavesWebRoot() throws {
        let outside = try String(contentsOf: ServerProcess.repositoryRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let secret = "swift-tools-version"
        XCTAssertTrue(outside.contains(secret))
        let targets = ["/../Package.swift", "/%2e%2e/Package.swift", "/%2E%2E/Package.swift", "/..%2fPackage.swift",
                       "/%2e%2e%2fPackage.swift", "/web/../../Package.swift", "/./../Package.swift",
                       "/..%5cPackage.swift", "//../Package.swift", "/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd"]
        for target in targets {
            let response = try RawHTTP.get(port: server.port, target: target)
            XCTAssertFalse(response.body.contains(secret), "\(target) served Package.swift")
            XCTAssertFalse(response.body.contains("root:x:0:0"), "\(target) served /etc/passwd")
            XCTAssertTrue(response.status == 404 || response.status == 403 || response.status == 400
                          || (response.status == 200 && response.body.contains("<title>Happy</title>")),
                          "\(target): \(response.status) \(response.body.prefix(200))")
        }
        XCTAssertTrue(try HTTP.get("\(base)/healthz").status == 200, "the server survived")
    }
}
