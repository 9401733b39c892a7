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

    /// SIGTERM in the middle of traffic: every intent the server read is
    /// answered, with an ack or `unavailable`, before its close 1001; every
    /// event sent is on disk, and nothing recorded was kept back.
    func testCleanShutdownAnswersEveryIntentAndFlushesEverythingItAcknowledged() throws {
        let server = try ServerProcess(["limits": fastLimits])
        let (client, welcome) = try TestClient.join(server)
        let epoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
        let startSeq = UInt64(try XCTUnwrap(welcome["seq"]?.doubleValue))
        // Batches of intents, each followed by a ping: its pong proves the server read the whole batch.
        var batches: [[String]] = []
        var readBatches = 0
        var answers: [String: String] = [:]
        var ackSeqs: [UInt64] = []
        var events: [UInt64: JSONValue] = [:]
        var terminated = false
        let deadline = Date(timeIntervalSinceNow: 30)
        while !client.isClosed, Date() < deadline {
            while batches.count * 20 - answers.count < 200 {
                let ids = (0..<20).map { "b\(batches.count)-\($0)" }
                for (index, id) in ids.enumerated() { client.intent("face.nudgeHappiness", id: id, ["delta": index % 2 == 0 ? 1 : -1]) }
                client.send(json: ["type": "ping", "id": "b\(batches.count)"])
                batches.append(ids)
            }
            // The signal arrives with 200 intents in flight.
            if !terminated && answers.count >= 300 {
                server.process?.terminate()
                terminated = true
            }
            while let message = client.next(timeout: 0.02) {
                let id = message["id"]?.stringValue ?? ""
                switch message["type"]?.stringValue {
                case "event": events[UInt64(message["seq"]?.doubleValue ?? 0)] = message
                case "ack":
                    XCTAssertNil(answers[id], "\(id) answered twice")
                    answers[id] = "ack"
                    ackSeqs.append(UInt64(try XCTUnwrap(message["seq"]?.doubleValue)))
                case "error":
                    XCTAssertEqual(message["code"]?.stringValue, "unavailable", "\(message)")
                    XCTAssertNil(answers[id], "\(id) answered twice")
                    answers[id] = "unavailable"
                case "pong": readBatches = max(readBatches, Int(id.dropFirst())! + 1)
                default: break
                }
            }
        }
        XCTAssertTrue(terminated, "too few answers before the deadline: \(answers.count)")
        XCTAssertEqual(server.stop(), 0)
        XCTAssertEqual(client.closeCode, 1001)
        for id in batches.prefix(readBatches).joined() {
            XCTAssertNotNil(answers[id], "\(id) was read (its batch's ping was answered) but got no answer before the close")
        }
        let sent = Set(batches.joined())
        XCTAssertTrue(Set(answers.keys).isSubset(of: sent))
        let unavailable = answers.values.filter { $0 == "unavailable" }.count
        print("clean shutdown: \(batches.count * 20) intents sent, \(readBatches * 20) read before the close, "
              + "\(ackSeqs.count) acked, \(unavailable) unavailable")

        try server.start()
        let (reader, after) = try TestClient.join(server, since: startSeq, epoch: epoch)
        XCTAssertEqual(after["recovered"]?.boolValue, true)
        let recordedSeq = UInt64(try XCTUnwrap(after["seq"]?.doubleValue))
        XCTAssertEqual(recordedSeq, events.keys.max() ?? startSeq, "every event recorded was sent before the close")
        var replayed: [UInt64: JSONValue] = [:]
        if recordedSeq > startSeq {
            for _ in (startSeq + 1)...recordedSeq {
                guard let event = reader.next(type: "event", timeout: 10) else { break }
                replayed[UInt64(event["seq"]?.doubleValue ?? 0)] = event
            }
        }
        XCTAssertEqual(replayed.count, Int(recordedSeq - startSeq), "the replay is complete")
        for seq in ackSeqs {
            XCTAssertNotNil(events[seq], "ack \(seq) without its event")
            XCTAssertEqual(replayed[seq], events[seq], "acked event \(seq) is not on disk as sent")
        }
        for (seq, event) in events {
            XCTAssertEqual(replayed[seq], event, "event \(seq) is not on disk as sent")
        }
    }
}
