import Foundation
import HappyCore
import XCTest

/// Who is in a room: presence messages, dead peers, large rooms (PROTOCOL.md sections 3 and 5).
final class PresenceTests: XCTestCase {
    func testJoinAndLeaveAreAnnouncedToTheOthers() throws {
        let server = try ServerProcess()
        let (alice, welcomeA) = try TestClient.join(server, room: "p", name: "alice")
        let (bob, welcomeB) = try TestClient.join(server, room: "p", name: "bob")
        let (outsider, _) = try TestClient.join(server, room: "elsewhere", name: "carol")
        let bobID = try XCTUnwrap(welcomeB["you"]?["id"]?.stringValue)
        let aliceID = try XCTUnwrap(welcomeA["you"]?["id"]?.stringValue)
        let bobEntry = JSONValue.object([("id", .string(bobID)), ("name", .string("bob"))])

        XCTAssertJSONEqual(alice.next(), .object([("type", .string("presence")), ("joined", bobEntry)]))
        XCTAssertEqual(welcomeB["presenceCount"]?.intValue, 2)
        XCTAssertEqual(participants(welcomeB["presence"]), ["\(aliceID):alice", "\(bobID):bob"])

        bob.close()
        XCTAssertJSONEqual(alice.next(), .object([("type", .string("presence")), ("left", bobEntry)]))
        let state = try HTTP.get("\(server.httpBase)/api/state?room=p").json
        XCTAssertEqual(participants(state?["presence"]), ["\(aliceID):alice"])
        XCTAssertEqual(outsider.drain(for: 0.3).count, 0, "presence stays inside the room")
        XCTAssertEqual(alice.drainUntilPong(), [], "no duplicate presence messages")
    }

    func testAbruptDisconnectIsAnnouncedAsLeft() throws {
        let server = try ServerProcess()
        let (alice, _) = try TestClient.join(server, name: "alice")
        let (bob, welcomeB) = try TestClient.join(server, name: "bob")
        XCTAssertEqual(alice.next(type: "presence")?["joined"]?["name"]?.stringValue, "bob")

        bob.connection.abort()
        let left = try XCTUnwrap(alice.next(type: "presence", timeout: 5), "no presence after an abrupt close")
        XCTAssertEqual(left["left"]?["id"], welcomeB["you"]?["id"])
        XCTAssertEqual(left["left"]?["name"]?.stringValue, "bob")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["presenceCount"]?.intValue, 1)
    }

    func testPeerThatStopsAnsweringPingsIsDroppedAndAnnounced() throws {
        let server = try ServerProcess(["limits": ["pingIntervalSeconds": 1, "pingTimeoutSeconds": 1]])
        let (alice, _) = try TestClient.join(server, name: "alice")
        let (mute, welcomeM) = try TestClient.join(server, name: "mute")
        XCTAssertEqual(alice.next(type: "presence")?["joined"]?["name"]?.stringValue, "mute")
        let started = Date()
        mute.connection.setReading(false)

        let left = try XCTUnwrap(alice.next(type: "presence", timeout: 6), "the unresponsive peer was not dropped; alice closed: \(alice.isClosed)\n\(server.logText)")
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(left["left"]?["id"], welcomeM["you"]?["id"])
        XCTAssertGreaterThanOrEqual(elapsed, 1.0, "dropped before a ping could time out")
        print("unresponsive peer dropped after \(String(format: "%.1f", elapsed)) s")

        // alice answers the pings (her client does so on its own) and stays, ping after ping.
        XCTAssertEqual(alice.drain(for: 2.5).count, 0)
        XCTAssertFalse(alice.isClosed, "a peer that answers pings is kept")
        alice.send(#"{"type":"ping","id":"still"}"#)
        XCTAssertEqual(alice.next(type: "pong")?["id"]?.stringValue, "still")
        let metrics = try server.metricsText()
        XCTAssertEqual(metricValue(metrics, "happy_ping_timeouts_total"), 1, metrics)
    }

    func testRefusedClientsAreNeverAnnounced() throws {
        let server = try ServerProcess(["limits": ["maxClients": 2]])
        let (alice, _) = try TestClient.join(server, name: "alice")
        let (bob, _) = try TestClient.join(server, name: "bob")
        XCTAssertEqual(alice.next(type: "presence")?["joined"]?["name"]?.stringValue, "bob")

        let badName = TestClient(url: server.wsURL, query: [("name", "tab\tname")])
        XCTAssertEqual(badName.waitForClose(), .some(1008))
        let overLimit = try RawWebSocket(port: server.port, target: "/ws?name=carol")
        guard case .close(let code, _)? = overLimit.readUntilClose().close else { return XCTFail("no close frame") }
        XCTAssertEqual(code, 1013)

        for client in [alice, bob] {
            XCTAssertEqual(client.drain(for: 0.3).count, 0, "a refused client neither joins nor leaves")
        }
        let state = try HTTP.get("\(server.httpBase)/api/state").json
        XCTAssertEqual(Set(state?["presence"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []), ["alice", "bob"])
    }

    func testCrowdOverPresenceBroadcastMaxIsNotAnnounced() throws {
        let server = try ServerProcess(["limits": ["presenceBroadcastMax": 2]])
        let (first, _) = try TestClient.join(server, name: "one")
        let (second, _) = try TestClient.join(server, name: "two")
        XCTAssertEqual(first.next(type: "presence")?["joined"]?["name"]?.stringValue, "two")

        let (third, welcome3) = try TestClient.join(server, name: "three")
        XCTAssertEqual(welcome3["presenceCount"]?.intValue, 3)
        XCTAssertEqual(welcome3["presence"]?.arrayValue?.count, 2)
        let (fourth, welcome4) = try TestClient.join(server, name: "four")
        XCTAssertEqual(welcome4["presenceCount"]?.intValue, 4)
        let listed = try XCTUnwrap(welcome4["presence"]?.arrayValue)
        XCTAssertEqual(listed.count, 2, "welcome lists at most presenceBroadcastMax entries")
        for entry in listed {
            XCTAssertNotNil(entry["id"]?.stringValue)
            XCTAssertTrue(["one", "two", "three", "four"].contains(entry["name"]?.stringValue ?? ""), "\(entry)")
        }

        fourth.close()
        _ = fourth.waitForClose()
        for client in [first, second, third] {
            let presence = client.drain(for: 0.3).filter { $0["type"]?.stringValue == "presence" }
            XCTAssertEqual(presence.count, 0, "no join/leave broadcast above presenceBroadcastMax: \(presence)")
        }
        let state = try HTTP.get("\(server.httpBase)/api/state").json
        XCTAssertEqual(state?["presenceCount"]?.intValue, 3)
        XCTAssertEqual(state?["presence"]?.arrayValue?.count, 2)
    }

    /// A presence list as a set of "id:name".
    private func participants(_ list: JSONValue?) -> Set<String> {
        Set((list?.arrayValue ?? []).map { "\($0["id"]?.stringValue ?? "?"):\($0["name"]?.stringValue ?? "?")" })
    }
}
