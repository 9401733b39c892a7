import Foundation
import HappyCore
import XCTest

/// Rooms anyone can name over HTTP (`GET /api/state?room=…`) must not grow
/// the server's memory: rooms without clients are capped at `maxRooms`, and
/// rooms only ever read leave memory after a few seconds (their state stays
/// in the store).
final class RoomMemoryTests: XCTestCase {
    static let cap = 20
    static let madeUpRooms = 3000
    /// About 1 MB measured (allocator pools): 5 MB leaves room for that and
    /// fails once each request leaves 1.7 KB behind. (Keeping all 3000
    /// rooms costs only 1.5 MB more here; the room gauge checks that.)
    static let growthBound = 5_000_000

    private func gauge(_ name: String, _ server: ServerProcess) throws -> Int {
        Int(try server.metric(name))
    }

    private func state(_ room: String, _ server: ServerProcess) throws -> JSONValue {
        let response = try RawHTTP.get(port: server.port, target: "/api/state?room=\(room)")
        XCTAssertEqual(response.status, 200, room)
        return JSONValue.parse(response.body)
    }

    func testAFloodOfMadeUpRoomsKeepsRoomsInMemoryUnderTheCap() throws {
        // The flood comes from one address: its HTTP rate is lifted to see the rooms' bound alone.
        let server = try ServerProcess(["limits": ["maxRooms": Self.cap, "httpPerSecond": 1_000_000, "httpBurst": 1_000_000]])
        let (client, _) = try TestClient.join(server, room: "kept", name: "resident")
        let first = try state("made-up-0", server)
        var most = 0
        let before = server.residentBytes()
        XCTAssertGreaterThan(before, 1_000_000, "the server's resident memory could not be read")
        for index in 1...Self.madeUpRooms {
            _ = try RawHTTP.get(port: server.port, target: "/api/state?room=made-up-\(index)")
            if index % 250 == 0 { most = max(most, try gauge("happy_rooms", server)) }
        }
        let after = server.residentBytes()
        XCTAssertGreaterThan(after, 1_000_000, "the server's resident memory could not be read")
        let growth = after - before
        print(String(format: "%d made-up rooms: at most %d in memory, server RSS %+.1f MB",
                     Self.madeUpRooms, most, Double(growth) / 1e6))
        XCTAssertLessThanOrEqual(most, 1 + Self.cap + Self.cap / 10 + 1, "one occupied room plus the idle cap and its slack")
        XCTAssertLessThan(growth, Self.growthBound, "what each request for a made-up room leaves behind adds up")
        XCTAssertGreaterThan(try gauge("happy_rooms_trimmed_total", server), 1000)

        let again = try state("made-up-0", server)
        XCTAssertNotEqual(again["epoch"], first["epoch"], "a room only read was never stored: it comes back anew")
        XCTAssertEqual(again["seq"]?.intValue, 0)
        client.intent("dragon.forward", id: "still")
        XCTAssertEqual(client.next(type: "ack")?["result"]?.stringValue, "applied", "the occupied room was kept")
        XCTAssertEqual(try state("kept", server)["presenceCount"]?.intValue, 1)
    }

    func testRoomsOnlyReadOverHTTPLeaveMemoryWithinSeconds() throws {
        let server = try ServerProcess()
        let (_, _) = try TestClient.join(server, room: "joined")
        let used = try XCTUnwrap(HTTP.post("\(server.httpBase)/api/intent?room=changed", body: #"{"action":"dragon.forward"}"#))
        XCTAssertEqual(used.status, 200)
        for index in 0..<10 { _ = try state("read-only-\(index)", server) }
        XCTAssertEqual(try gauge("happy_rooms", server), 12)

        let started = Date()
        let left = try eventually(seconds: 12) { try gauge("happy_rooms", server) == 2 ? Date().timeIntervalSince(started) : nil }
        print(String(format: "rooms only read over HTTP left memory after %.1f s", left))
        XCTAssertEqual(try state("changed", server)["seq"]?.intValue, 1, "a room that was changed stays (60 s)")
        XCTAssertEqual(try gauge("happy_rooms", server), 2, "the joined room and the changed room")
    }
}
