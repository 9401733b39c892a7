import Foundation
import HappyCore
import XCTest

/// The store's failure modes: refused at start, or `unavailable` at run time.
final class StoreFaultTests: XCTestCase {
    func testCorruptDatabaseStopsTheServerWithAClearMessage() throws {
        let server = try ServerProcess(start: false)
        let data = server.directory.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let database = data.appendingPathComponent("happy.sqlite3")
        let garbage = Data(repeating: 0x5A, count: 16_384)
        try garbage.write(to: database)

        XCTAssertThrowsError(try server.start(timeout: 10))
        XCTAssertFalse(server.isRunning)
        XCTAssertNotEqual(server.process?.terminationStatus, 0)
        XCTAssertTrue(server.logText.contains(database.path), server.logText)
        XCTAssertTrue(server.logText.contains("move it away"), server.logText)
        XCTAssertEqual(try Data(contentsOf: database), garbage, "the damaged file was touched")
    }

    func testReadOnlyDataDirectoryAtStartIsRefused() throws {
        let server = try ServerProcess(start: false)
        let data = server.directory.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        try WriteBlocker.block(data)
        defer { WriteBlocker.unblock(data) }
        XCTAssertThrowsError(try server.start(timeout: 10))
        XCTAssertTrue(server.logText.contains("not writable"), server.logText)
    }

    func testWriteFailureRefusesIntentsKeepsReadsAndRecovers() throws {
        let server = try ServerProcess()
        let data = server.directory.appendingPathComponent("data")
        let (client, _) = try TestClient.join(server, name: "writer")
        client.intent("face.setHappiness", id: "before", ["value": 70])
        XCTAssertEqual(client.next(type: "ack")?["seq"]?.doubleValue, 1)
        XCTAssertEqual(client.next(type: "event")?["seq"]?.doubleValue, 1)

        try WriteBlocker.block(data)
        defer { WriteBlocker.unblock(data) }
        client.intent("face.setHappiness", id: "blocked", ["value": 10])
        let error = try XCTUnwrap(client.next(type: "error"))
        XCTAssertEqual(error["code"]?.stringValue, "unavailable")
        XCTAssertEqual(error["id"]?.stringValue, "blocked")
        let http = try HTTP.post("\(server.httpBase)/api/intent", body: #"{"action":"dragon.forward"}"#)
        XCTAssertEqual(http.status, 503)
        XCTAssertEqual(http.json?["code"]?.stringValue, "unavailable")

        // Reads still work and show only what was recorded.
        let state = try HTTP.get("\(server.httpBase)/api/state").json
        XCTAssertEqual(state?["seq"]?.doubleValue, 1)
        XCTAssertEqual(state?["state"]?["face"]?["happiness"]?.doubleValue, 70)
        let (viewer, welcome) = try TestClient.join(server, name: "viewer")
        XCTAssertEqual(welcome["seq"]?.doubleValue, 1)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").status, 503)
        XCTAssertFalse(client.drain(for: 0.3).contains { $0["type"]?.stringValue == "event" }, "an unrecorded change was broadcast")

        WriteBlocker.unblock(data)
        client.intent("face.setHappiness", id: "after", ["value": 40])
        let ack = try XCTUnwrap(client.next(type: "ack"))
        XCTAssertEqual(ack["seq"]?.doubleValue, 2, "seq must continue from the last recorded event")
        XCTAssertEqual(viewer.next(type: "event")?["state"]?["face"]?["happiness"]?.doubleValue, 40)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").status, 200)
    }
}
