import Foundation
import HappyCore
import XCTest

/// SIGKILL in the middle of traffic: events go out only once durable
/// (PROTOCOL.md section 3), so every event any client received before the
/// crash, acknowledged or not, is on disk after the restart with the same
/// seq and content. The kill moments come from a printed seed;
/// `HAPPY_CRASH_SEED` replays them.
final class CrashDurabilityTests: XCTestCase {
    static let rounds = 10
    static let writers = 3
    /// Intents each writer keeps unanswered, at full speed.
    static let inFlight = 32
    static var limits: [String: Any] { ["intentsPerSecond": 100_000, "intentBurst": 100_000,
                                        "historySize": 100_000, "maxQueuedBytes": 64 * 1024 * 1024] }
    static var actions: [(String, [String: Any])] { [
        ("face.nudgeHappiness", ["delta": 3]), ("face.nudgeHappiness", ["delta": -2]),
        ("dragon.forward", [:]), ("dragon.back", [:]), ("heart.setRate", ["value": 0.25]),
        ("heart.setRate", ["value": 0.75]), ("face.pinch", ["factor": 1.1]), ("face.pinch", ["factor": 0.9]),
    ] }

    /// What one client saw until the crash cut it off.
    final class Seen: @unchecked Sendable {
        var events: [UInt64: JSONValue] = [:]
        var acked: [UInt64] = []
        /// Acks of changes that came before their event (the event goes first).
        var ackedBeforeEvent: [UInt64] = []
    }

    func testEverythingReceivedBeforeSIGKILLIsOnDiskAfterTheRestart() throws {
        let seed = ProcessInfo.processInfo.environment["HAPPY_CRASH_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64.max)
        print("crash durability: seed \(seed) (HAPPY_CRASH_SEED=\(seed) replays these kill moments)")
        var random = SplitMix64(seed: seed)
        // Each event on its own: at full speed the room's load would switch it to ticks (section 12).
        let server = try ServerProcess(["limits": Self.limits, "crowd": ["mode": "each"]])
        var epoch: String?
        var highestSeq: UInt64 = 0
        var totalReceived = 0, totalAcked = 0, unackedReceived = 0

        for round in 0..<Self.rounds {
            let label = "crash \(round) (seed \(seed))"
            var clients: [TestClient] = []
            var startSeq: UInt64 = 0
            for index in 0...Self.writers {
                let (client, welcome) = try TestClient.join(server, name: index < Self.writers ? "writer\(index)" : "reader")
                let welcomeEpoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
                if let epoch { XCTAssertEqual(welcomeEpoch, epoch, "epoch changed after \(label)") }
                epoch = welcomeEpoch
                startSeq = UInt64(try XCTUnwrap(welcome["seq"]?.doubleValue))
                XCTAssertGreaterThanOrEqual(startSeq, highestSeq, "seq went backwards after \(label)")
                clients.append(client)
            }
            let roundEpoch = try XCTUnwrap(epoch)

            // 0.2 to 1.2 s of traffic, then SIGKILL.
            let killAfter = 0.2 + Double(random.next() % 1000) / 1000
            let killed = DispatchSemaphore(value: 0)
            DispatchQueue.global().asyncAfter(deadline: .now() + killAfter) { server.kill(); killed.signal() }
            let seen = (0...Self.writers).map { _ in Seen() }
            let shared = UncheckedSendable((clients, seen))
            runConcurrently(Self.writers + 1) { index in
                let (clients, seen) = shared.value
                if index < Self.writers {
                    Self.write(clients[index], id: "r\(round)w\(index)", into: seen[index])
                } else {
                    Self.read(clients[index], into: seen[index])
                }
            }
            killed.wait()
            try server.start()

            // Resume from the round's start: the restarted server replays what it recorded.
            let (reader, after) = try TestClient.join(server, name: "checker", since: startSeq, epoch: roundEpoch)
            XCTAssertEqual(after["epoch"]?.stringValue, roundEpoch, label)
            XCTAssertEqual(after["recovered"]?.boolValue, true, label)
            let recordedSeq = UInt64(try XCTUnwrap(after["seq"]?.doubleValue))
            var replayed: [UInt64: JSONValue] = [:]
            if recordedSeq > startSeq {
                for expected in (startSeq + 1)...recordedSeq {
                    let event = try XCTUnwrap(reader.next(type: "event", timeout: 10), "no replay of seq \(expected) after \(label)")
                    XCTAssertEqual(event["seq"]?.doubleValue, Double(expected), label)
                    replayed[expected] = event
                }
            }
            for (index, client) in seen.enumerated() {
                XCTAssertEqual(client.ackedBeforeEvent, [], "client \(index): acks before their events in round \(round)")
                for (seq, event) in client.events where seq > startSeq {
                    XCTAssertEqual(replayed[seq], event, "client \(index) received event \(seq) before \(label); not on disk as sent")
                }
                for seq in client.acked {
                    XCTAssertLessThanOrEqual(seq, recordedSeq, "client \(index) had ack \(seq) before \(label); lost")
                }
            }
            if let last = replayed[recordedSeq] {
                XCTAssertEqual(after["state"], last["state"], "the state is not the last recorded event's after \(label)")
            }
            let received = Set(seen.flatMap { $0.events.keys })
            let acked = Set(seen.flatMap(\.acked))
            totalReceived += received.count
            totalAcked += acked.count
            unackedReceived += received.subtracting(acked).count

            // Seq continues without reuse.
            reader.intent("dragon.toggleHidden", id: "next")
            XCTAssertEqual(reader.next(type: "ack")?["seq"]?.doubleValue, Double(recordedSeq + 1), label)
            highestSeq = recordedSeq + 1
            reader.close()
        }
        print("crash durability: \(totalReceived) events received and \(totalAcked) acknowledged over \(Self.rounds) crashes "
              + "(\(unackedReceived) received by some client without their ack), final seq \(highestSeq)")
        XCTAssertGreaterThan(totalReceived, 100, "the crash test received too little to mean anything")
    }

    /// Sends intents at full speed, `inFlight` unanswered, until the connection dies.
    private static func write(_ client: TestClient, id prefix: String, into seen: Seen) {
        let actions = Self.actions
        var sent = 0
        while !client.isClosed {
            while sent - seen.acked.count < inFlight {
                let (action, parameters) = actions[sent % actions.count]
                client.intent(action, id: "\(prefix)-\(sent)", parameters)
                sent += 1
            }
            guard let message = client.next(timeout: 0.5) else { continue }
            record(message, into: seen)
        }
    }

    /// Reads every message until the connection dies.
    private static func read(_ client: TestClient, into seen: Seen) {
        while !client.isClosed {
            if let message = client.next(timeout: 0.5) { record(message, into: seen) }
        }
    }

    private static func record(_ message: JSONValue, into seen: Seen) {
        guard let seq = message["seq"]?.doubleValue.map(UInt64.init) else { return }
        switch message["type"]?.stringValue {
        case "event": seen.events[seq] = message
        case "ack":
            seen.acked.append(seq)
            if message["result"]?.stringValue != "unchanged", seen.events[seq] == nil { seen.ackedBeforeEvent.append(seq) }
        default: break
        }
    }
}
