import Foundation
import HappyCore
import XCTest

/// Rooms without clients leave memory (README): a room only ever read over
/// HTTP 5 s after its last request, other empty rooms after 60 s; their state
/// stays in the store. Watched through the `happy_rooms` gauge, which counts
/// the rooms in memory. (The 60 s delay has no setting; the test shows that
/// an emptied room outlasts the 5 s one.)
final class EmptyRoomExpiryTests: XCTestCase {
    private func roomsInMemory(_ server: ServerProcess) throws -> Int {
        let text = try RawHTTP.get(port: server.port, target: "/metrics").body
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("happy_rooms ") }, text)
        return try XCTUnwrap(Int(line.split(separator: " ")[1]))
    }

    private func state(_ room: String, _ server: ServerProcess) throws -> JSONValue {
        let response = try RawHTTP.get(port: server.port, target: "/api/state?room=\(room)")
        XCTAssertEqual(response.status, 200)
        return JSONValue.parse(response.body)
    }

    func testAReadOnlyRoomLeavesAfterFiveSecondsAnEmptiedRoomStaysAndBothKeepTheirState() throws {
        let server = try ServerProcess()
        let (client, _) = try TestClient.join(server, room: "emptied")
        client.intent("face.setHappiness", id: "a", ["value": 81])
        client.intent("dragon.forward", id: "b")
        XCTAssertEqual(client.next(type: "ack")?["id"]?.stringValue, "a")
        XCTAssertEqual(client.next(type: "ack")?["id"]?.stringValue, "b")
        let emptied = try state("emptied", server)
        XCTAssertEqual(emptied["seq"]?.intValue, 2)
        client.close()
        XCTAssertTrue(client.waitForClose() != nil)
        let emptiedAt = Date()

        let readOnly = try state("looked-at", server)
        let lastRead = Date()
        XCTAssertEqual(try roomsInMemory(server), 2)

        let gone = try eventually(seconds: 15) { try roomsInMemory(server) == 1 ? Date().timeIntervalSince(lastRead) : nil }
        print(String(format: "a room only read over HTTP left memory %.1f s after its last request", gone))
        XCTAssertGreaterThanOrEqual(gone, 4.5, "not before the documented 5 s")
        XCTAssertLessThanOrEqual(gone, 9, "about 5 s (the sweep runs every second)")

        // Twice the short delay after it was emptied, the used room is still held.
        Thread.sleep(forTimeInterval: max(0, 10 - Date().timeIntervalSince(emptiedAt)))
        XCTAssertEqual(try roomsInMemory(server), 1, "an emptied room is kept longer (60 s)")

        // Both read back as they were: the dropped one, never stored, as a new room with the defaults.
        let again = try state("looked-at", server)
        XCTAssertNotEqual(again["epoch"], readOnly["epoch"], "reading stored nothing: nobody joined or changed it")
        XCTAssertEqual(again["seq"]?.intValue, 0)
        XCTAssertJSONEqual(again["state"], Contract.defaultState)
        XCTAssertEqual(try roomsInMemory(server), 2, "loaded back into memory")
        let emptiedAgain = try state("emptied", server)
        XCTAssertEqual(emptiedAgain["epoch"], emptied["epoch"])
        XCTAssertEqual(emptiedAgain["seq"]?.intValue, 2)
        XCTAssertJSONEqual(emptiedAgain["state"], try XCTUnwrap(emptied["state"]))
        XCTAssertEqual(try roomsInMemory(server), 2)
    }
}
