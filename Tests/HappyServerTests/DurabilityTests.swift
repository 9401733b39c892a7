import Foundation
import HappyCore
import XCTest

/// Nothing acknowledged is lost: seq, state, epoch and history survive
/// restarts (PROTOCOL.md section 3, the SQLite store; crashes in
/// `CrashDurabilityTests`).
final class DurabilityTests: XCTestCase {
    private let fastLimits: [String: Any] = ["intentsPerSecond": 100_000, "intentBurst": 100_000,
                                             "historySize": 100_000, "maxQueuedBytes": 64 * 1024 * 1024]

    func testClientAwayAcrossARestartResumesFromDisk() throws {
        let server = try ServerProcess()
        let (alice, welcome) = try TestClient.join(server, name: "alice")
        let epoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
        alice.intent("dragon.forward", id: "a")
        let seen = UInt64(try XCTUnwrap(alice.next(type: "ack")?["seq"]?.doubleValue))
        alice.close()

        let (bob, _) = try TestClient.join(server, name: "bob")
        var missed: [JSONValue] = []
        for value in [10, 20, 30] {
            bob.intent("face.setHappiness", id: "b\(value)", ["value": value])
            missed.append(try XCTUnwrap(bob.next(type: "event")))
        }
        XCTAssertEqual(server.stop(), 0)
        try server.start()

        let (back, resumed) = try TestClient.join(server, name: "alice", since: seen, epoch: epoch)
        XCTAssertEqual(resumed["recovered"]?.boolValue, true)
        XCTAssertEqual(resumed["epoch"]?.stringValue, epoch)
        XCTAssertEqual(resumed["seq"]?.doubleValue, Double(seen + 3))
        for event in missed {
            XCTAssertEqual(back.next(type: "event"), event)
        }
        XCTAssertEqual(resumed["state"]?["face"]?["happiness"]?.doubleValue, 30)
    }

    func testHistoryRetentionLimitsResumeAfterRestart() throws {
        let server = try ServerProcess(["limits": ["historySize": 5]])
        let (client, welcome) = try TestClient.join(server)
        let epoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
        for value in 1...20 {
            client.intent("face.setHappiness", id: "\(value)", ["value": value])
            XCTAssertEqual(client.next(type: "ack")?["seq"]?.doubleValue, Double(value))
        }
        server.stop()
        try server.start()
        let (_, tooOld) = try TestClient.join(server, since: 10, epoch: epoch)
        XCTAssertEqual(tooOld["recovered"]?.boolValue, false)
        XCTAssertEqual(tooOld["seq"]?.doubleValue, 20)

        let (recent, ok) = try TestClient.join(server, since: 16, epoch: epoch)
        XCTAssertEqual(ok["recovered"]?.boolValue, true)
        let replayed = (17...20).compactMap { _ in recent.next(type: "event")?["seq"]?.doubleValue }
        XCTAssertEqual(replayed, [17, 18, 19, 20])
        let (_, oldest) = try TestClient.join(server, since: 15, epoch: epoch)
        XCTAssertEqual(oldest["recovered"]?.boolValue, true, "the 5 retained events are 16...20")
    }

    func testEpochIsNewOnlyWhenTheDataIsWiped() throws {
        let server = try ServerProcess()
        let (_, first) = try TestClient.join(server)
        let epoch = try XCTUnwrap(first["epoch"]?.stringValue)
        _ = try HTTP.post("\(server.httpBase)/api/intent", body: #"{"action":"dragon.forward"}"#)
        server.stop()
        try server.start()
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["epoch"]?.stringValue, epoch)
        server.stop()
        try FileManager.default.removeItem(at: server.directory.appendingPathComponent("data"))
        try server.start()
        let wiped = try HTTP.get("\(server.httpBase)/api/state").json
        XCTAssertNotEqual(wiped?["epoch"]?.stringValue, epoch)
        XCTAssertEqual(wiped?["seq"]?.doubleValue, 0)
    }

    func testCleanShutdownFlushesEverythingItAcknowledged() throws {
        let server = try ServerProcess(["limits": fastLimits])
        let (client, _) = try TestClient.join(server)
        for index in 0..<300 { client.intent("face.nudgeHappiness", id: "\(index)", ["delta": index % 2 == 0 ? 1 : -1]) }
        _ = client.next(type: "ack")
        XCTAssertEqual(server.stop(), 0)
        var lastEventSeq = 0.0
        for message in client.drain(for: 1) where message["type"]?.stringValue == "event" {
            lastEventSeq = max(lastEventSeq, message["seq"]?.doubleValue ?? 0)
        }
        XCTAssertEqual(client.closeCode, 1001)
        try server.start()
        let state = try HTTP.get("\(server.httpBase)/api/state").json
        XCTAssertEqual(state?["seq"]?.doubleValue, lastEventSeq,
                       "every event sent before shutdown is on disk, and nothing more")
    }
}
