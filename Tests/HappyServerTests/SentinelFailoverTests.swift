import Foundation
import HappyCore
import XCTest

/// Nodes on `redis+sentinel://` through a failover of real redis-server and
/// redis-sentinel processes: they follow the new primary, their clients go on
/// gap-free, and a commit in doubt during the switch is settled exactly once.
final class SentinelFailoverTests: XCTestCase {
    private static var fastLimits: [String: Any] { ["intentsPerSecond": 10_000, "intentBurst": 10_000] }
    /// The target is a median of 5 s, mostly Sentinel's own time; one failover gets three
    /// times that, since a split vote among the sentinels alone adds 6 s (2 x failover-timeout).
    private static let outageBound = 15.0

    private func node(_ group: SentinelGroup) throws -> ServerProcess {
        try ServerProcess(["cluster": ["redis": group.url], "limits": Self.fastLimits])
    }

    /// Every event of a room, oldest first, from `/api/history`.
    private func history(_ node: ServerProcess, room: String) throws -> [JSONValue] {
        var events: [JSONValue] = []
        while true {
            let page = try XCTUnwrap(try HTTP.get("\(node.httpBase)/api/history?room=\(room)&since=\(events.count)&limit=1000").json)
            let batch = page["events"]?.arrayValue ?? []
            events += batch
            if batch.isEmpty || Double(events.count) >= page["seq"]?.doubleValue ?? 0 { return events }
        }
    }

    /// The answer (ack or error) to intent `id`, or nil after `seconds`.
    private func answer(_ client: TestClient, id: String, seconds: Double) -> JSONValue? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            guard let message = client.next(timeout: max(0.1, deadline.timeIntervalSinceNow)) else { continue }
            let type = message["type"]?.stringValue
            if (type == "ack" || type == "error"), message["id"]?.stringValue == id { return message }
        }
        return nil
    }

    func testNodeFollowsAFailoverAndItsClientsResumeGapFree() throws {
        let group = try SentinelGroup()
        let old = try XCTUnwrap(group.primaryPort())
        let writerNode = try node(group), readerNode = try node(group)
        let health = try XCTUnwrap(try HTTP.get("\(writerNode.httpBase)/healthz").text)
        XCTAssertTrue(health.hasPrefix("ok\nredis primary 127.0.0.1:\(old) (sentinel mymaster), never switched"), health)
        let (writer, _) = try TestClient.join(writerNode, room: "failover", name: "writer")
        let (stayer, _) = try TestClient.join(readerNode, room: "failover", name: "stayer")
        var (leaver, _) = try TestClient.join(writerNode, room: "failover", name: "leaver")

        var acked: [String: Double] = [:]   // intent id → seq
        var refused: Set<String> = []
        var counter = 0
        /// Sends one intent and waits for its answer; true when acked.
        func write() -> Bool {
            counter += 1
            let id = "w\(counter)"
            writer.intent("dragon.forward", id: id)
            guard let message = answer(writer, id: id, seconds: 15) else { return false }
            if message["type"]?.stringValue == "ack" {
                acked[id] = message["seq"]?.doubleValue
                return true
            }
            refused.insert(id)
            return false
        }
        for _ in 1...5 { XCTAssertTrue(write(), "acked before the failover") }
        let leaverSeq = try XCTUnwrap(leaver.next(type: "event", timeout: 5)?["seq"]?.doubleValue)
        let epoch = try XCTUnwrap(try HTTP.get("\(writerNode.httpBase)/api/state?room=failover").json?["epoch"]?.stringValue)
        leaver.close()

        group.kill(old)
        let killedAt = Date()
        var outage: Double?
        while outage == nil, Date().timeIntervalSince(killedAt) < 30 {
            if write() { outage = Date().timeIntervalSince(killedAt) } else { Thread.sleep(forTimeInterval: 0.1) }
        }
        let measured = try XCTUnwrap(outage, "no intent acked within 30 s of the primary's death")
        print("sentinel failover: first ack \(String(format: "%.2f", measured)) s after the primary was killed")
        XCTAssertLessThan(measured, Self.outageBound, "write outage of one failover")
        let new = try group.waitForFailover(from: old)
        for _ in 1...5 { XCTAssertTrue(write(), "acked after the failover") }

        // /healthz and /metrics name the primary followed and the switch.
        let switched = try eventually(seconds: 10) { () -> String? in
            let text = try HTTP.get("\(readerNode.httpBase)/healthz").text
            return text.hasPrefix("ok\nredis primary 127.0.0.1:\(new) (sentinel mymaster), switched 1 time") ? text : nil
        }
        print("sentinel failover: /healthz says \(switched)")
        let metrics = try HTTP.get("\(writerNode.httpBase)/metrics").text
        XCTAssertTrue(metrics.contains("happy_redis_primary_info{address=\"127.0.0.1:\(new)\",source=\"sentinel mymaster\"} 1"), metrics)
        XCTAssertTrue(metrics.contains("happy_redis_primary_switches_total 1"), metrics)
        XCTAssertFalse(metrics.contains("happy_redis_primary_last_switch_timestamp_seconds 0\n"), "a switch time")

        // Every acked intent is recorded once at its seq, nothing refused is, gap-free.
        let events = try history(writerNode, room: "failover")
        XCTAssertEqual(events.map { $0["seq"]?.doubleValue ?? -1 }, consecutive(1, through: events.count).map(Double.init))
        XCTAssertEqual(events.count, acked.count, "recorded events are exactly the acked intents (refused: \(refused.count))")
        XCTAssertEqual(Set(acked.values).count, acked.count, "two intents acked with one seq")

        // The client that stayed saw every event, gap-free, with no resync; one that
        // left before the failover resumes from its seq after it.
        var seen: [Double] = []
        while seen.count < events.count, let message = stayer.next(timeout: 10) {
            XCTAssertNotEqual(message["type"]?.stringValue, "resync", "a resync instead of the events")
            if message["type"]?.stringValue == "event", let seq = message["seq"]?.doubleValue { seen.append(seq) }
        }
        XCTAssertEqual(seen, consecutive(1, through: events.count).map(Double.init), "the stayer's events")
        let resumed: JSONValue
        (leaver, resumed) = try TestClient.join(writerNode, room: "failover", name: "leaver",
                                                since: UInt64(leaverSeq), epoch: epoch)
        XCTAssertEqual(resumed["recovered"]?.boolValue, true, "the leaver resumes")
        var missed: [Double] = []
        while missed.last.map({ $0 < Double(events.count) }) ?? true, let event = leaver.next(type: "event", timeout: 10) {
            missed.append(try XCTUnwrap(event["seq"]?.doubleValue))
        }
        XCTAssertEqual(missed, consecutive(Int(leaverSeq) + 1, through: events.count).map(Double.init), "the leaver's missed events")
    }

    func testACommitInDoubtDuringTheSwitchIsSettledExactlyOnce() throws {
        let group = try SentinelGroup()
        let old = try XCTUnwrap(group.primaryPort())
        let writerNode = try node(group)
        let (writer, _) = try TestClient.join(writerNode, room: "doubt", name: "writer")
        writer.intent("dragon.forward", id: "before")
        XCTAssertEqual(answer(writer, id: "before", seconds: 10)?["type"]?.stringValue, "ack")

        // Sent to a paused primary: no answer, so in doubt, while the sentinels fail over.
        let (doubtful, _) = try TestClient.join(writerNode, room: "doubt", name: "doubtful")
        group.pause(old)
        defer { group.resume(old) }
        doubtful.intent("dragon.forward", id: "x")
        let inDoubt = try eventually(seconds: 10) { () -> String? in
            let response = try HTTP.get("\(writerNode.httpBase)/healthz")
            return response.status == 503 && response.text.contains("in doubt") ? response.text : nil
        }
        print("sentinel switch: /healthz says \(inDoubt)")
        let new = try group.waitForFailover(from: old)
        let settled = try XCTUnwrap(answer(doubtful, id: "x", seconds: 20), "the intent in doubt was never answered")
        XCTAssertEqual(settled["type"]?.stringValue, "ack", "settled on the new primary: \(settled)")

        // The old primary wakes with the commit still in its socket: it must not land twice.
        group.resume(old)
        _ = try eventually(seconds: 40) { group.replicates(old, primary: new) ? true : nil }
        writer.intent("dragon.forward", id: "after")
        XCTAssertEqual(answer(writer, id: "after", seconds: 10)?["type"]?.stringValue, "ack")
        let events = try history(writerNode, room: "doubt")
        XCTAssertEqual(events.map { $0["seq"]?.doubleValue ?? -1 }, consecutive(1, through: events.count).map(Double.init))
        let doubtfulID = try XCTUnwrap(events.first { $0["seq"]?.doubleValue == settled["seq"]?.doubleValue }?["sender"]?["id"]?
            .stringValue, "no event at the acked seq")
        XCTAssertEqual(events.filter { $0["sender"]?["id"]?.stringValue == doubtfulID }.map { $0["seq"]?.doubleValue },
                       [settled["seq"]?.doubleValue], "the intent in doubt is recorded once, at its acked seq")
        XCTAssertEqual(events.count, 3, "before, x and after")
    }
}
