import Foundation
import HappyCore
import XCTest

/// Rooms anyone can name over HTTP (`GET /api/state?room=…`) must not grow
/// the server's memory: rooms without clients are capped at `maxRooms`, and
/// rooms only ever read leave memory after a few seconds (their state stays
/// in the store).
final class RoomMemoryTests: XCTestCase {
    static let cap = 20

    private func gauge(_ name: String, _ server: ServerProcess) throws -> Int {
        let metrics = try RawHTTP.get(port: server.port, target: "/metrics").body
        let line = try XCTUnwrap(metrics.split(separator: "\n").first { $0.hasPrefix("\(name) ") }, metrics)
        return try XCTUnwrap(Int(line.split(separator: " ")[1]))
    }

    private func state(_ room: String, _ server: ServerProcess) throws -> JSONValue {
        let response = try RawHTTP.get(port: server.port, target: "/api/state?room=\(room)")
        XCTAssertEqual(response.status, 200, room)
        return JSONValue.parse(response.body)
    }

    func testAFloodOfMadeUpRoomsKeepsRoomsInMemoryUnderTheCap() throws {
        let server = try ServerProcess(["limits": ["maxRooms": Self.cap]])
        let (client, _) = try TestClient.join(server, room: "kept", name: "resident")
        let first = try state("made-up-0", server)
        var most = 0
        let before = server.residentBytes()
        for index in 1...3000 {
            _ = try RawHTTP.get(port: server.port, target: "/api/state?room=made-up-\(index)")
            if index % 250 == 0 { most = max(most, try gauge("happy_rooms", server)) }
        }
        let growth = server.residentBytes() - before
        print(String(format: "3000 made-up rooms: at most %d in memory, server RSS %+.1f MB", most, Double(growth) / 1e6))
        XCTAssertLessThanOrEqual(most, 1 + Self.cap + Self.cap / 10 + 1, "one occupied room plus the idle cap and its slack")
        XCTAssertGreaterThan(try gauge("happy_rooms_trimmed_total", server), 1000)

        let again = try state("made-up-0", server)
        XCTAssertEqual(again["epoch"], first["epoch"], "a dropped room comes back from the store with its epoch")
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
