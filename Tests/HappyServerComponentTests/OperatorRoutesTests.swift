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

    private let operatorHeaders = TestServer.operatorHeaders

    func testEvenFromLoopbackOperatingTakesTheOperatorKey() {
        let test = TestServer()
        let bare = test.request("GET", "/api/rooms", peer: local)
        XCTAssertEqual(bare.status, 401, "loopback alone is no credential")
        XCTAssertTrue(bare.json?["message"]?.stringValue?.contains("operator key") == true)
        XCTAssertEqual(test.request("POST", "/api/rooms/lobby/kick", headers: ["host": "127.0.0.1:8080", "content-type": "application/json"],
                                    body: #"{"name":"alice"}"#, peer: local).status, 401)
        XCTAssertEqual(test.request("GET", "/api/rooms", headers: ["authorization": "Bearer not-the-key"], peer: local).status, 401)
        XCTAssertEqual(test.request("GET", "/api/rooms", query: ["token": TestServer.operatorKey.value], peer: local).status, 400,
                       "the credential goes in Authorization, never in the address")
        XCTAssertEqual(test.request("GET", "/api/rooms", headers: operatorHeaders, peer: local).status, 200)
        XCTAssertEqual(test.request("GET", "/api/rooms", headers: operatorHeaders, peer: "192.0.2.7").status, 200,
                       "with the key, from any address")
    }

    func testAForeignPageCannotOperateThroughTheOperatorsBrowser() {
        let test = TestServer()
        _ = test.joined(name: "alice")
        func kick(_ headers: [String: String], body: String = #"{"name":"alice"}"#) -> TestExchange {
            test.request("POST", "/api/rooms/lobby/kick", headers: operatorHeaders.merging(headers) { $1 }, body: body, peer: local)
        }
        // A plain form: text/plain from another page (or a sandboxed one: Origin null).
        let form = kick(["content-type": "text/plain", "origin": "null"])
        XCTAssertEqual(form.status, 403)
        XCTAssertEqual(kick(["content-type": "text/plain"]).status, 403, "JSON bodies only")
        XCTAssertTrue(kick(["content-type": "text/plain"]).json?["message"]?.stringValue?.contains("application/json") == true)
        XCTAssertEqual(kick(["content-type": "application/json", "origin": "https://evil.example"]).status, 403)
        // DNS rebinding: the attacker's name resolves to this server.
        let rebound = kick(["content-type": "application/json", "host": "rebind.attacker.example:8080"])
        XCTAssertEqual(rebound.status, 403)
        XCTAssertTrue(rebound.json?["message"]?.stringValue?.contains("publicHosts") == true)
        XCTAssertEqual(test.request("GET", "/api/rooms/lobby", headers: operatorHeaders.merging(["host": "evil.example"]) { $1 },
                                    peer: local).status, 403, "reads too")
        XCTAssertEqual(test.request("GET", "/admin", headers: ["host": "evil.example"], peer: local).status, 403)
        XCTAssertEqual(test.server.directory["lobby"]?.members.count, 1, "nobody was kicked")

        let own = kick(["content-type": "application/json; charset=utf-8", "origin": "http://127.0.0.1:8080"])
        XCTAssertEqual(own.json?["kicked"]?.intValue, 1, "the server's own page may")
        XCTAssertEqual(test.request("POST", "/api/rooms/lobby/kick", headers: operatorHeaders.merging(["host": "localhost:8080"]) { $1 },
                                    body: nil, peer: local).status, 400, "no body is allowed (and then the kick is incomplete)")
    }

    func testPublicHostsAndAllowedOriginsAreTheServersOwn() {
        let test = TestServer(config: TestServer.config {
            $0.publicHosts = ["happy.example.com"]
            $0.auth.allowedOrigins = ["https://console.example.com"]
        })
        let headers = operatorHeaders.merging(["host": "Happy.Example.com", "content-type": "application/json",
                                               "origin": "https://console.example.com"]) { $1 }
        XCTAssertEqual(test.request("POST", "/api/rooms/lobby/kick", headers: headers, body: #"{"id":"c1"}"#, peer: "192.0.2.7").status, 200)
        XCTAssertEqual(test.request("GET", "/api/rooms", headers: operatorHeaders.merging(["host": "[::1]:8080"]) { $1 }).status, 200,
                       "an address literal names no one else")
    }

    func testWithASecretOnlyAnAdminTokenMayOperate() {
        let test = TestTokens.server()
        let host = ["host": "127.0.0.1:8080"]
        XCTAssertEqual(test.request("GET", "/api/rooms", peer: local).status, 401, "no token, even from loopback")
        let player = TestTokens.mint("pat", role: .player)
        XCTAssertEqual(test.request("GET", "/api/rooms", headers: host.merging(["authorization": "Bearer \(player)"]) { $1 }).status, 403)
        let admin = TestTokens.mint("ada", role: .admin)
        XCTAssertEqual(test.request("GET", "/api/rooms", headers: host.merging(["authorization": "Bearer \(admin)"]) { $1 }).status, 200)
        let oneRoom = TestTokens.mint("ada", role: .admin, room: "den")
        XCTAssertEqual(test.request("GET", "/api/rooms/den", headers: host.merging(["authorization": "Bearer \(oneRoom)"]) { $1 }).status,
                       404, "allowed, and the room is not in memory")
        XCTAssertEqual(test.request("GET", "/api/rooms/hall", headers: host.merging(["authorization": "Bearer \(oneRoom)"]) { $1 }).status,
                       403)
        XCTAssertEqual(test.request("GET", "/api/rooms", headers: host.merging(["authorization": "Bearer garbage"]) { $1 }).status, 401)
        XCTAssertEqual(test.request("GET", "/api/rooms", headers: host.merging(["authorization": "Bearer \(TestServer.operatorKey.value)"]) { $1 }).status,
                       401, "with a secret there is no operator key")
    }

    // MARK: rooms

    func testRoomsArePagedByName() {
        let test = TestServer()
        for room in ["cedar", "ash", "birch"] { _ = test.joined(room: room) }
        _ = observer(test, room: "ash")
        let first = test.request("GET", "/api/rooms", query: ["limit": "2"], headers: operatorHeaders, peer: local).json
        XCTAssertEqual(first?["rooms"]?.arrayValue?.compactMap { $0["room"]?.stringValue }, ["ash", "birch"])
        XCTAssertEqual(first?["next"]?.stringValue, "birch")
        let ash = first?["rooms"]?.arrayValue?.first
        XCTAssertEqual(ash?["clients"]?.intValue, 1)
        XCTAssertEqual(ash?["observers"]?.intValue, 1)
        XCTAssertEqual(ash?["delivery"]?.stringValue, "each")
        XCTAssertEqual(ash?["seq"]?.intValue, 0)
        let second = test.request("GET", "/api/rooms", query: ["limit": "2", "after": "birch"], headers: operatorHeaders, peer: local).json
        XCTAssertEqual(second?["rooms"]?.arrayValue?.compactMap { $0["room"]?.stringValue }, ["cedar"])
        XCTAssertEqual(second?["next"], .null)
        XCTAssertEqual(test.request("GET", "/api/rooms", query: ["limit": "0"], headers: operatorHeaders, peer: local).status, 400)
    }

    func testARoomListsItsConnectionsWithTheirLag() {
        let test = TestServer(config: TestServer.config { $0.limits.intentsPerSecond = 1; $0.limits.intentBurst = 1 })
        let alice = test.joined(name: "alice")
        _ = observer(test)
        test.sendIntent(alice, "dragon.forward")
        test.sendIntent(alice, "dragon.forward")  // over the rate limit
        let room = test.request("GET", "/api/rooms/lobby", headers: operatorHeaders, peer: local).json
        XCTAssertEqual(room?["seq"]?.intValue, 1)
        XCTAssertNotNil(room?["lastEventTime"]?.intValue)
        let connections = room?["connections"]?.arrayValue ?? []
        XCTAssertEqual(connections.compactMap { $0["name"]?.stringValue }, ["alice", "dash"])
        XCTAssertEqual(connections.compactMap { $0["observer"]?.boolValue }, [false, true])
        XCTAssertEqual(connections.first?["rateLimited"]?.intValue, 1)
        XCTAssertEqual(connections.first?["role"]?.stringValue, "player")
        XCTAssertEqual(connections.first?["address"]?.stringValue, "192.0.2.10")
        XCTAssertGreaterThan(connections.first?["queuedBytes"]?.intValue ?? 0, 0, "its event and ack are unread")
        XCTAssertEqual(test.request("GET", "/api/rooms/nowhere", headers: operatorHeaders, peer: local).status, 404)
    }

    // MARK: kick and delete

    func testAKickClosesWith4003AndTheReason() {
        let test = TestServer()
        let (a1, a2, bob) = (test.joined(name: "alice"), test.joined(name: "alice"), test.joined(name: "bob"))
        let byName = test.request("POST", "/api/rooms/lobby/kick", headers: operatorHeaders, body: #"{"name":"alice","reason":"spam"}"#, peer: local)
        XCTAssertEqual(byName.json?["kicked"]?.intValue, 2)
        for client in [a1, a2] {
            test.pump(client)
            XCTAssertEqual(client.closeFrame?.closeCode, 4003)
            XCTAssertEqual(client.closeFrame?.closeReason, "removed from the room by an operator: spam")
        }
        let byID = test.request("POST", "/api/rooms/lobby/kick", headers: operatorHeaders, body: #"{"id":"\#(bob.id)"}"#, peer: local)
        XCTAssertEqual(byID.json?["kicked"]?.intValue, 1)
        test.pump(bob)
        XCTAssertEqual(bob.closeFrame?.closeCode, 4003)
        XCTAssertEqual(test.request("POST", "/api/rooms/lobby/kick", headers: operatorHeaders, body: #"{"id":"c99"}"#, peer: local).json?["kicked"]?.intValue, 0)
        XCTAssertEqual(test.request("POST", "/api/rooms/lobby/kick", headers: operatorHeaders, body: #"{"id":"a","name":"b"}"#, peer: local).status, 400)
        XCTAssertEqual(test.request("POST", "/api/rooms/lobby/kick", headers: operatorHeaders, body: "not json", peer: local).status, 400)
        XCTAssertEqual(test.request("GET", "/api/rooms/lobby/kick", headers: operatorHeaders, peer: local).status, 405)
    }

    func testDeletingARoomClosesItsClientsAndStartsItAgainWithANewEpoch() {
        let store = ScriptedStore(synchronous: true, keepsHistory: true)
        let test = TestServer(store: store)
        let client = test.joined()
        let epoch = test.server.directory["lobby"]?.room?.epoch
        test.sendIntent(client, "dragon.forward")
        XCTAssertEqual(store.stored("lobby")?.seq, 1)

        let deleted = test.request("DELETE", "/api/rooms/lobby", headers: operatorHeaders, peer: local)
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

    func testTheInspectorPageHoldsNoDataAndIsNeverFramed() {
        let test = TestServer()
        let page = test.request("GET", "/admin", peer: "192.0.2.9")
        XCTAssertEqual(page.status, 200, "its data comes from the API, with the key")
        XCTAssertEqual(page.transport.head?.contentType, "text/html; charset=utf-8")
        XCTAssertTrue(page.text.contains("<title>Happy inspector</title>"))
        let headers = Dictionary(uniqueKeysWithValues: (page.transport.head?.headers ?? []).map { ($0.name.lowercased(), $0.value) })
        XCTAssertTrue(headers["content-security-policy"]?.contains("frame-ancestors 'none'") == true)
        XCTAssertFalse(headers["content-security-policy"]?.contains("unsafe-inline") ?? true)
        XCTAssertEqual(headers["x-frame-options"], "DENY")
        XCTAssertEqual(headers["x-content-type-options"], "nosniff")
        XCTAssertEqual(headers["referrer-policy"], "no-referrer")
        let withToken = test.request("GET", "/admin", query: ["token": "secret"], peer: local)
        XCTAssertEqual(withToken.status, 400)
        XCTAssertTrue(withToken.json?["message"]?.stringValue?.contains("#key=") == true)
    }
}
