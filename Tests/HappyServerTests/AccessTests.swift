import Foundation
import HappyClientKit
import HappyCore
import HappyServer
import XCTest

/// Access tokens (PROTOCOL.md section 7): HS256 JWTs minted by `happyserver
/// token`; a refused WebSocket is closed with 1008 after the upgrade, a
/// refused HTTP call answers 401 (no or bad token) or 403 (role or room).
final class AccessTests: XCTestCase {
    private let secret = "s3cret-\(UUID().uuidString)"
    private var server: ServerProcess!
    /// Every token handed to the server, to check that none reaches its log.
    private var tokens: [String] = []

    override func setUpWithError() throws {
        server = try ServerProcess(["auth": ["secret": secret]])
    }

    override func tearDown() {
        if let server {
            let log = server.logText
            XCTAssertFalse(log.isEmpty)
            XCTAssertFalse(log.contains(secret), "the secret reached the log")
            for token in tokens {
                XCTAssertFalse(log.contains(token), "a token reached the log")
                XCTAssertFalse(log.contains(String(token.split(separator: ".").last ?? "")), "a signature reached the log")
            }
        }
        server = nil
    }

    // MARK: helpers

    /// A token from `happyserver token`, signed with the server's secret (from its config file) or `secret`.
    private func mint(_ subject: String, role: String, room: String? = nil, secret: String? = nil) throws -> String {
        var arguments = ["token", "--sub", subject, "--role", role]
        if let room { arguments += ["--room", room] }
        arguments += secret.map { ["--secret", $0] } ?? ["--config", server.configURL.path]
        let outcome = try ServerProcess.run(arguments)
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        let token = outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(token.split(separator: ".", omittingEmptySubsequences: false).count, 3, token)
        tokens.append(token)
        return token
    }

    /// A token with an `exp` the command cannot make (in the past).
    private func mintExpiring(at seconds: Int64) -> String {
        let token = HMACSHA256.verifier(secret: secret)
            .mint(AccessClaims(subject: "late", role: .player, expiresAt: seconds))
        tokens.append(token)
        return token
    }

    private var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// Connects with `token` (or none) and expects close 1008 with a reason right after the upgrade.
    private func assertRefused(token: String?, room: String = "lobby", _ label: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        let client = TestClient(url: server.wsURL, query: [("room", room), ("token", token)])
        XCTAssertEqual(client.waitForClose(), .some(1008), label, file: file, line: line)
        XCTAssertTrue(client.didOpen, "\(label): refused after the upgrade", file: file, line: line)
        XCTAssertFalse(client.closeReason.isEmpty, "\(label): a reason", file: file, line: line)
        XCTAssertEqual(client.messagesBeforeClose(), [], "\(label): no welcome", file: file, line: line)
    }

    private func join(token: String, room: String = "lobby", name: String? = nil) throws -> (TestClient, JSONValue) {
        try TestClient.join(server, room: room, name: name, extra: [("token", token)])
    }

    private func state(room: String = "lobby", bearer: String?) throws -> HTTP.Response {
        try HTTP.get("\(server.httpBase)/api/state?room=\(room)",
                     headers: bearer.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    private func postIntent(_ body: String, room: String = "lobby", bearer: String?) throws -> HTTP.Response {
        var headers = ["Content-Type": "application/json"]
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        return try HTTP.post("\(server.httpBase)/api/intent?room=\(room)", body: body, headers: headers)
    }

    // MARK: tests

    func testWithoutATokenTheWebSocketIsClosed1008AndTheAPIAnswers401() throws {
        assertRefused(token: nil, "no token")
        let state = try state(bearer: nil)
        XCTAssertEqual(state.status, 401)
        XCTAssertEqual(state.json?["code"]?.stringValue, "unauthorized")
        XCTAssertEqual(try postIntent(#"{"action":"dragon.forward"}"#, bearer: nil).status, 401)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").status, 200, "health needs no token")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/metrics").status, 200, "metrics need no token")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/").status, 200, "static files need no token")
    }

    func testExpiredWronglySignedAndMalformedTokensAreRefused() throws {
        let good = try mint("alice", role: "admin")
        let parts = good.split(separator: ".").map(String.init)
        let adminPayload = Base64URL.encode(Array(#"{"sub":"mallory","role":"admin"}"#.utf8))
        let noneHeader = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
        let refused: [(String, String)] = [
            ("expired beyond the leeway", mintExpiring(at: now - 120)),
            ("signed with another secret", try mint("alice", role: "admin", secret: "not-the-secret")),
            ("payload changed after signing", "\(parts[0]).\(adminPayload).\(parts[2])"),
            ("alg none without a signature", "\(noneHeader).\(parts[1])."),
            ("signature cut short", "\(parts[0]).\(parts[1]).\(parts[2].dropLast(4))"),
            ("two parts", "\(parts[0]).\(parts[1])"),
            ("not base64url", "***.***.***"),
            ("random text", "hello"),
        ]
        for (label, token) in refused {
            assertRefused(token: token, label)
            XCTAssertEqual(try state(bearer: token).status, 401, label)
            XCTAssertEqual(try postIntent(#"{"action":"dragon.forward"}"#, bearer: token).status, 401, label)
        }
        let (_, welcome) = try join(token: mintExpiring(at: now - 5))
        XCTAssertEqual(welcome["you"]?["name"]?.stringValue, "late", "a token just expired is within the leeway")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state", headers: ["Authorization": "Bearer \(good)"]).json?["seq"]?.intValue, 0,
                       "nothing was applied by a refused token")
    }

    func testATokenForAnotherRoomIsRefusedWith1008And403() throws {
        let red = try mint("alice", role: "player", room: "red")
        assertRefused(token: red, room: "blue", "another room")
        assertRefused(token: red, "the default room is another room too")
        let response = try state(room: "blue", bearer: red)
        XCTAssertEqual(response.status, 403)
        XCTAssertEqual(response.json?["code"]?.stringValue, "forbidden")
        XCTAssertEqual(try postIntent(#"{"action":"dragon.forward"}"#, room: "blue", bearer: red).status, 403)

        let (_, welcome) = try join(token: red, room: "red")
        XCTAssertEqual(welcome["room"]?.stringValue, "red")
        XCTAssertEqual(try state(room: "red", bearer: red).status, 200)
    }

    func testAViewerReceivesEventsButMayNotSendIntents() throws {
        let (viewer, welcome) = try join(token: try mint("watcher", role: "viewer"))
        XCTAssertEqual(welcome["you"]?["role"]?.stringValue, "viewer")
        let (player, _) = try join(token: try mint("bob", role: "player"))
        player.intent("face.setHappiness", id: "p1", ["value": 80])
        XCTAssertEqual(player.next(type: "ack")?["result"]?.stringValue, "applied")
        let event = try XCTUnwrap(viewer.next(type: "event"), "the viewer sees the player's change")
        XCTAssertEqual(event["sender"]?["name"]?.stringValue, "bob")

        viewer.intent("face.setHappiness", id: "v1", ["value": 10])
        let error = try XCTUnwrap(viewer.next(type: "error"))
        XCTAssertEqual(error["code"]?.stringValue, "forbidden")
        XCTAssertEqual(error["id"]?.stringValue, "v1")
        viewer.send(#"{"type":"ping","id":"still-open"}"#)
        XCTAssertEqual(viewer.next(type: "pong")?["id"]?.stringValue, "still-open", "the connection stays open")

        let viewerToken = try mint("watcher", role: "viewer")
        let response = try postIntent(#"{"id":"h1","action":"face.setHappiness","value":10}"#, bearer: viewerToken)
        XCTAssertEqual(response.status, 403)
        XCTAssertEqual(response.json?["code"]?.stringValue, "forbidden")
        XCTAssertEqual(try state(bearer: viewerToken).status, 200, "a viewer may read the state")
        let truth = try XCTUnwrap(state(bearer: viewerToken).json)
        XCTAssertEqual(truth["seq"]?.intValue, 1)
        XCTAssertEqual(truth["state"]?["face"]?["happiness"]?.intValue, 80)
    }

    func testOnlyAnAdminMayResetTheRoom() throws {
        let playerToken = try mint("bob", role: "player")
        let (player, _) = try join(token: playerToken)
        player.intent("dragon.forward", id: "f")
        XCTAssertEqual(player.next(type: "event")?["name"]?.stringValue, "forwardButtonClicked:")
        XCTAssertEqual(player.next(type: "ack")?["result"]?.stringValue, "applied")
        player.intent("room.reset", id: "r1")
        let error = try XCTUnwrap(player.next(type: "error"))
        XCTAssertEqual(error["code"]?.stringValue, "forbidden")
        XCTAssertEqual(error["id"]?.stringValue, "r1")
        XCTAssertEqual(try postIntent(#"{"action":"room.reset"}"#, bearer: playerToken).status, 403)

        let (admin, _) = try join(token: try mint("root", role: "admin"))
        admin.intent("room.reset", id: "r2")
        XCTAssertEqual(admin.next(type: "ack")?["result"]?.stringValue, "applied")
        XCTAssertEqual(player.next(type: "event")?["name"]?.stringValue, "room:didReset:")
        let again = try postIntent(#"{"action":"room.reset"}"#, bearer: try mint("root", role: "admin"))
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.json?["result"]?.stringValue, "unchanged")
    }

    func testTheBearerHeaderCarriesTheTokenForHTTPAndWebSocket() throws {
        let token = try mint("carol", role: "player")
        XCTAssertEqual(try state(bearer: token).status, 200)
        let lowerCase = try HTTP.get("\(server.httpBase)/api/state", headers: ["Authorization": "bearer \(token)"])
        XCTAssertEqual(lowerCase.status, 200, "the scheme name is case-insensitive")
        let posted = try postIntent(#"{"id":"b","action":"dragon.forward"}"#, bearer: token)
        XCTAssertEqual(posted.status, 200)
        XCTAssertEqual(posted.json?["result"]?.stringValue, "applied")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state", headers: ["Authorization": "Basic \(token)"]).status, 401)

        let options = WebSocketOptions(headers: [("Authorization", "Bearer \(token)")])
        let (_, welcome) = try TestClient.join(server, options: options)
        XCTAssertEqual(welcome["you"]?["name"]?.stringValue, "carol")
    }

    func testTheDisplayNameComesFromTheTokenSubject() throws {
        let (alice, welcome) = try join(token: try mint("alice", role: "player"), name: "mallory")
        XCTAssertEqual(welcome["you"]?["name"]?.stringValue, "alice", "the token's sub, not the name= parameter")
        let (bob, _) = try join(token: try mint("bob", role: "player"))
        XCTAssertEqual(alice.next(type: "presence")?["joined"]?["name"]?.stringValue, "bob")
        bob.intent("dragon.forward", id: "d")
        XCTAssertEqual(alice.next(type: "event")?["sender"]?["name"]?.stringValue, "bob")
    }

    func testTheTokenCommandNeedsASecretAndValidClaims() throws {
        let plain = try ServerProcess(start: false)
        let noSecret = try ServerProcess.run(["token", "--sub", "x", "--config", plain.configURL.path])
        XCTAssertNotEqual(noSecret.status, 0)
        XCTAssertTrue(noSecret.stderr.contains("auth.secret"), noSecret.stderr)
        for arguments in [["--sub", "x", "--role", "root"], ["--role", "player"], ["--sub", "x", "--room", "a b"],
                          ["--sub", "x", "--ttl", "-1"], ["--sub", "x", "--ttl", "0"], ["--sub", "x", "--ttl", "2592001"]] {
            let outcome = try ServerProcess.run(["token"] + arguments + ["--secret", "k"])
            XCTAssertEqual(outcome.status, 2, "\(arguments): \(outcome.stderr)")
            XCTAssertTrue(outcome.stderr.contains("usage"), "\(arguments)")
        }
        let month = try ServerProcess.run(["token", "--sub", "x", "--ttl", "2592000", "--secret", secret]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        tokens.append(month)
        let verifier = HMACSHA256.verifier(secret: secret)
        let claims = try verifier.verify(month, nowSeconds: now + 29 * 86400).get()
        XCTAssertEqual(claims.role, .player, "player by default")
        XCTAssertEqual(verifier.verify(month, nowSeconds: now + 31 * 86400), .failure(.expired),
                       "even the longest token expires")
    }
}
