import Foundation
import HappyCore
import XCTest

/// Observers and the operator API on a live server (PROTOCOL.md section 13),
/// through real WebSocket clients, HTTP and the SQLite store.
final class OperatorAPITests: XCTestCase {
    func testAnObserverWatchesOutOfPresence() throws {
        let server = try ServerProcess()
        let (alice, _) = try TestClient.join(server, name: "alice")
        let (watcher, welcome) = try TestClient.join(server, name: "dash", extra: [("observe", "1")])
        XCTAssertEqual(welcome["presenceCount"]?.doubleValue, 1)
        XCTAssertEqual(welcome["observerCount"]?.doubleValue, 1)
        alice.intent("dragon.forward", id: "f")
        XCTAssertEqual(watcher.next(type: "event")?["seq"]?.doubleValue, 1)
        watcher.intent("dragon.back", id: "b")
        let refused = watcher.next(type: "error")
        XCTAssertEqual(refused?["code"]?.stringValue, "forbidden")
        XCTAssertEqual(refused?["id"]?.stringValue, "b")
        let messages = alice.drainUntilPong() ?? []
        XCTAssertFalse(messages.contains { $0["type"]?.stringValue == "presence" }, "nobody hears of an observer")
    }

    func testKickAndDeleteOverHTTP() throws {
        let server = try ServerProcess()
        let (alice, _) = try TestClient.join(server, room: "hall", name: "alice")
        let (bob, _) = try TestClient.join(server, room: "hall", name: "bob")
        alice.intent("dragon.forward", id: "f")
        XCTAssertNotNil(bob.next(type: "event"))

        let rooms = try HTTP.get("\(server.httpBase)/api/rooms", headers: server.operatorHeaders).json
        XCTAssertEqual(rooms?["rooms"]?.arrayValue?.compactMap { $0["room"]?.stringValue }, ["hall"])
        let hall = try HTTP.get("\(server.httpBase)/api/rooms/hall", headers: server.operatorHeaders).json
        XCTAssertEqual(hall?["connections"]?.arrayValue?.compactMap { $0["name"]?.stringValue }.sorted(), ["alice", "bob"])
        XCTAssertEqual(hall?["connections"]?.arrayValue?.first?["address"]?.stringValue, "127.0.0.1")

        let kick = try HTTP.post("\(server.httpBase)/api/rooms/hall/kick", body: #"{"name":"alice","reason":"testing"}"#,
                                 headers: server.operatorHeaders)
        XCTAssertEqual(kick.json?["kicked"]?.doubleValue, 1)
        XCTAssertEqual(alice.waitForClose(timeout: 5), .some(4003))
        XCTAssertEqual(alice.closeReason, "removed from the room by an operator: testing")

        let epoch = try HTTP.get("\(server.httpBase)/api/state?room=hall").json?["epoch"]?.stringValue
        let deleted = try HTTP.request("DELETE", "\(server.httpBase)/api/rooms/hall", body: nil, headers: server.operatorHeaders)
        XCTAssertEqual(deleted.status, 200)
        XCTAssertEqual(bob.waitForClose(timeout: 5), .some(4004))
        let history = try HTTP.get("\(server.httpBase)/api/history?room=hall").json
        XCTAssertEqual(history?["events"]?.arrayValue?.count, 0, "the history went with it")
        XCTAssertEqual(history?["seq"]?.doubleValue, 0)
        let (carol, welcome) = try TestClient.join(server, room: "hall", name: "carol")
        defer { withExtendedLifetime(carol) {} }
        XCTAssertEqual(welcome["seq"]?.doubleValue, 0)
        XCTAssertNotEqual(welcome["epoch"]?.stringValue, epoch, "a new epoch")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/history?room=hall").json?["events"]?.arrayValue?.count, 0)
    }

    func testWithASecretTheOperatorAPINeedsAnAdminToken() throws {
        let secret = "operator-secret"
        let server = try ServerProcess(["auth": ["secret": secret]])
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/rooms").status, 401)
        func mint(_ subject: String, _ role: String) throws -> String {
            let outcome = try ServerProcess.run(["token", "--sub", subject, "--role", role, "--secret", secret])
            return outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let player = try mint("pat", "player")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/rooms", headers: ["Authorization": "Bearer \(player)"]).status, 403)
        let admin = try mint("ada", "admin")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/rooms", headers: ["Authorization": "Bearer \(admin)"]).status, 200)
    }
}
