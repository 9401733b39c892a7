import HappyCore
@testable import HappyServer
import XCTest

/// Observers and the operator API in-process (PROTOCOL.md section 13).
final class OperatorRoutesTests: XCTestCase {
    private let local = "127.0.0.1"

    private func observer(_ test: TestServer, room: String? = nil, name: String = "dash") -> TestClient {
        test.connect(room: room, name: name, query: ["observe": "1"])
    }

    // MARK: observers

    func testAnObserverIsInNobodysPresenceButHearsTheRoom() {
        let test = TestServer()
        let alice = test.joined(name: "alice")
        let watcher = observer(test)
        let welcome = test.messages(of: watcher).first
        XCTAssertEqual(welcome?["presenceCount"]?.intValue, 1)
        XCTAssertEqual(welcome?["presence"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["alice"])
        XCTAssertEqual(welcome?["observerCount"]?.intValue, 1)
        XCTAssertEqual(test.messages(of: alice), [], "no presence for an observer")

        test.sendIntent(alice, "dragon.forward")
        XCTAssertEqual(test.types(of: watcher), ["event"])
        XCTAssertEqual(test.request("GET", "/api/state").json?["presenceCount"]?.intValue, 1)
        XCTAssertEqual(test.types(of: alice), ["event", "ack"])
        test.close(watcher)
        XCTAssertEqual(test.messages(of: alice), [], "nor when it goes")
    }

    func testAnObserversIntentsAndPointersAreForbidden() {
        let test = TestServer()
        let watcher = observer(test)
        _ = test.messages(of: watcher)
        test.sendIntent(watcher, "dragon.forward", id: "x")
        test.send(watcher, #"{"type":"pointer","view":"face","x":0.5,"y":0.5}"#)
        let answers = test.messages(of: watcher)
        XCTAssertEqual(answers.compactMap { $0["code"]?.stringValue }, ["forbidden", "forbidden"])
        XCTAssertEqual(answers.first?["id"]?.stringValue, "x")
        XCTAssertEqual(test.server.directory["lobby"]?.room?.committed.seq, 0)
    }

    // MARK: access

    func testWithoutASecretOnlyLoopbackMayOperate() {
        let test = TestServer()
        XCTAssertEqual(test.request("GET", "/api/rooms", peer: local).status, 200)
        XCTAssertEqual(test.request("GET", "/api/rooms", peer: "::1").status, 200)
        let remote = test.request("GET", "/api/rooms", peer: "192.0.2.7")
        XCTAssertEqual(remote.status, 403)
        XCTAssertTrue(remote.json?["message"]?.stringValue?.contains("loopback") == true)
    }

    func testWithASecretOnlyAnAdminTokenMayOperate() {
        let test = TestTokens.server()
        XCTAssertEqual(test.request("GET", "/api/rooms", peer: local).status, 401, "no token, even from loopback")
        let player = TestTokens.mint("pat", role: .player)
        XCTAssertEqual(test.request("GET", "/api/rooms", headers: ["authorization": "Bearer \(player)"]).status, 403)
        let admin = TestTokens.mint("ada", role: .admin)
        XCTAssertEqual(test.request("GET", "/api/rooms", headers: ["authorization": "Bearer \(admin)"]).status, 200)
        let oneRoom = TestTokens.mint("ada", role: .admin, room: "den")
        XCTAssertEqual(test.request("GET", "/api/rooms/den", headers: ["authorization": "Bearer \(oneRoom)"]).status, 404,
                       "allowed, and the room is not in memory")
        XCTAssertEqual(test.request("GET", "/api/rooms/hall", headers: ["authorization": "Bearer \(oneRoom)"]).status, 403)
        XCTAssertEqual(test.request("GET", "/api/rooms", headers: ["authorization": "Bearer garbage"]).status, 401)
    }

    // MARK: rooms

    func testRoomsArePagedByName() {
        let test = TestServer()
        for room in ["cedar", "ash", "birch"] { _ = test.joined(room: room) }
        _ = observer(test, room: "ash")
        let first = test.request("GET", "/api/rooms", query: ["limit": "2"], peer: local).json
        XCTAssertEqual(first?["rooms"]?.arrayValue?.compactMap { $0["room"]?.stringValue }, ["ash", "birch"])
        XCTAssertEqual(first?["next"]?.stringValue, "birch")
        let ash = first?["rooms"]?.arrayValue?.first
        XCTAssertEqual(ash?["clients"]?.intValue, 1)
        XCTAssertEqual(ash?["observers"]?.intValue, 1)
        XCTAssertEqual(ash?["delivery"]?.stringValue, "each")
        XCTAssertEqual(ash?["seq"]?.intValue, 0)
        let second = test.request("GET", "/api/rooms", query: ["limit": "2", "after": "birch"], peer: local).json
        XCTAssertEqual(second?["rooms"]?.arrayValue?.compactMap { $0["room"]?.stringValue }, ["cedar"])
        XCTAssertEqual(second?["next"], .null)
        XCTAssertEqual(test.request("GET", "/api/rooms", query: ["limit": "0"], peer: local).status, 400)
    }

    func testARoomListsItsConnectionsWithTheirLag() {
        let test = TestServer(config: TestServer.config { $0.limits.intentsPerSecond = 1; $0.limits.intentBurst = 1 })
        let alice = test.joined(name: "alice")
        _ = observer(test)
        test.sendIntent(alice, "dragon.forward")
        test.sendIntent(alice, "dragon.forward")  // over the rate limit
        let room = test.request("GET", "/api/rooms/lobby", peer: local).json
        XCTAssertEqual(room?["seq"]?.intValue, 1)
        XCTAssertNotNil(room?["lastEventTime"]?.intValue)
        let connections = room?["connections"]?.arrayValue ?? []
        XCTAssertEqual(connections.compactMap { $0["name"]?.stringValue }, ["alice", "dash"])
        XCTAssertEqual(connections.compactMap { $0["observer"]?.boolValue }, [false, true])
        XCTAssertEqual(connections.first?["rateLimited"]?.intValue, 1)
        XCTAssertEqual(connections.first?["role"]?.stringValue, "player")
        XCTAssertEqual(connections.first?["address"]?.stringValue, "192.0.2.10")
        XCTAssertGreaterThan(connections.first?["queuedBytes"]?.intValue ?? 0, 0, "its event and ack are unread")
        XCTAssertEqual(test.request("GET", "/api/rooms/nowhere", peer: local).status, 404)
    }

    // MARK: kick and delete

    func testAKickClosesWith4003AndTheReason() {
        let test = TestServer()
        let (a1, a2, bob) = (test.joined(name: "alice"), test.joined(name: "alice"), test.joined(name: "bob"))
        let byName = test.request("POST", "/api/rooms/lobby/kick", body: #"{"name":"alice","reason":"spam"}"#, peer: local)
        XCTAssertEqual(byName.json?["kicked"]?.intValue, 2)
        for client in [a1, a2] {
            test.pump(client)
            XCTAssertEqual(client.closeFrame?.closeCode, 4003)
            XCTAssertEqual(client.closeFrame?.closeReason, "removed from the room by an operator: spam")
        }
        let byID = test.request("POST", "/api/rooms/lobby/kick", body: #"{"id":"\#(bob.id)"}"#, peer: local)
        XCTAssertEqual(byID.json?["kicked"]?.intValue, 1)
        test.pump(bob)
        XCTAssertEqual(bob.closeFrame?.closeCode, 4003)
        XCTAssertEqual(test.request("POST", "/api/rooms/lobby/kick", body: #"{"id":"c99"}"#, peer: local).json?["kicked"]?.intValue, 0)
        XCTAssertEqual(test.request("POST", "/api/rooms/lobby/kick", body: #"{"id":"a","name":"b"}"#, peer: local).status, 400)
        XCTAssertEqual(test.request("POST", "/api/rooms/lobby/kick", body: "not json", peer: local).status, 400)
        XCTAssertEqual(test.request("GET", "/api/rooms/lobby/kick", peer: local).status, 405)
    }

    func testDeletingARoomClosesItsClientsAndStartsItAgainWithANewEpoch() {
        let store = ScriptedStore(synchronous: true, keepsHistory: true)
        let test = TestServer(store: store)
        let client = test.joined()
        let epoch = test.server.directory["lobby"]?.room?.epoch
        test.sendIntent(client, "dragon.forward")
        XCTAssertEqual(store.stored("lobby")?.seq, 1)

        let deleted = test.request("DELETE", "/api/rooms/lobby", peer: local)
        XCTAssertEqual(deleted.json?["deleted"]?.boolValue, true)
        XCTAssertEqual(deleted.json?["closed"]?.intValue, 1)
        test.pump(client)
        XCTAssertEqual(client.closeFrame?.closeCode, 4004)
        XCTAssertNil(store.stored("lobby"), "state and history gone")

        let again = test.connect()
        let welcome = test.messages(of: again).first
        XCTAssertEqual(welcome?["seq"]?.intValue, 0)
        XCTAssertNotEqual(welcome?["epoch"]?.stringValue, epoch)
    }

    func testTheInspectorPageIsForOperatorsOnly() {
        let test = TestServer()
        let page = test.request("GET", "/admin", peer: local)
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.transport.head?.contentType, "text/html; charset=utf-8")
        XCTAssertTrue(page.text.contains("<title>Happy inspector</title>"))
        let refused = test.request("GET", "/admin", peer: "192.0.2.9")
        XCTAssertEqual(refused.status, 403)
        XCTAssertEqual(refused.transport.head?.contentType, "application/json")
        // A browser refused gets the page, which holds no data and says how to get in.
        let browser = test.request("GET", "/admin", headers: ["accept": "text/html,application/xhtml+xml"], peer: "192.0.2.9")
        XCTAssertEqual(browser.status, 403)
        XCTAssertTrue(browser.text.contains("<title>Happy inspector</title>"))
    }
}
