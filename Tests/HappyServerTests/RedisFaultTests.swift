import Foundation
import HappyCore
import XCTest

/// Cluster nodes when Redis pauses or a node is cut from it: nothing
/// refused is recorded, nothing acknowledged is lost, reads go on, `/healthz`
/// says why, and a node catches up by itself once Redis is back.
final class RedisFaultTests: XCTestCase {
    private static var fastLimits: [String: Any] { ["intentsPerSecond": 10_000, "intentBurst": 10_000] }

    /// Each intent sets a rate of its own, so an event tells whose it is.
    private static func rate(_ index: Int) -> Double { Double(index) / 1000 }

    private func healthz(_ node: ServerProcess) -> HTTP.Response? { try? HTTP.get("\(node.httpBase)/healthz") }

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

    /// Answers (ack or error) by intent id, read until every id in `ids` has one or the deadline passes.
    private func answers(_ client: TestClient, ids: Set<String>, seconds: Double,
                         into answers: inout [String: JSONValue]) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !ids.isSubset(of: answers.keys), Date() < deadline {
            guard let message = client.next(timeout: max(0.1, deadline.timeIntervalSinceNow)) else { continue }
            let type = message["type"]?.stringValue
            if type == "ack" || type == "error", let id = message["id"]?.stringValue { answers[id] = message }
        }
    }

    func testPausedRedisRefusesOnlyWhatItNeverRecords() throws {
        let redis = try RedisProcess()
        defer { redis.resume() }
        let node = try ServerProcess(["cluster": ["redis": redis.url], "limits": Self.fastLimits])
        let (writer, _) = try TestClient.join(node, room: "pause", name: "writer")
        var answered: [String: JSONValue] = [:]
        for index in 1...5 { writer.intent("heart.setRate", id: "\(index)", ["value": Self.rate(index)]) }
        answers(writer, ids: Set((1...5).map(String.init)), seconds: 10, into: &answered)
        XCTAssertEqual(answered.values.filter { $0["type"]?.stringValue == "ack" }.count, 5)

        redis.pause()
        // The first of these is sent to the paused Redis and stays in doubt:
        // no answer until Redis answers it. The later ones are refused at once.
        writer.intent("heart.setRate", id: "6", ["value": Self.rate(6)])
        // First the commit is late (named before the Redis call times out), then in doubt.
        let late = try eventually(seconds: 20) { () -> String? in
            guard let response = healthz(node), response.status == 503 else { return nil }
            return response.text
        }
        print("redis paused: /healthz says \(late)")
        XCTAssertTrue(late.contains("a commit has waited") || late.contains("in doubt"),
                      "healthz names the unanswered commit: \(late)")
        let unhealthy = try eventually(seconds: 20) { () -> String? in
            guard let response = healthz(node), response.status == 503, response.text.contains("in doubt") else { return nil }
            return response.text
        }
        print("redis paused: /healthz says \(unhealthy)")
        answers(writer, ids: ["6"], seconds: 1, into: &answered)
        XCTAssertNil(answered["6"], "an intent sent to a paused Redis was answered before Redis answered")
        let refusedAt = Date()
        for index in 7...12 { writer.intent("heart.setRate", id: "\(index)", ["value": Self.rate(index)]) }
        answers(writer, ids: Set((7...12).map(String.init)), seconds: 10, into: &answered)
        for index in 7...12 {
            XCTAssertEqual(answered["\(index)"]?["code"]?.stringValue, "unavailable", "intent \(index) while in doubt")
        }
        XCTAssertLessThan(Date().timeIntervalSince(refusedAt), 5, "intents while in doubt are refused promptly")
        XCTAssertEqual(try HTTP.get("\(node.httpBase)/api/state?room=pause").status, 200, "reads go on")

        redis.resume()
        answers(writer, ids: ["6"], seconds: 20, into: &answered)
        XCTAssertEqual(answered["6"]?["type"]?.stringValue, "ack", "the intent in doubt is acked once Redis answers")
        _ = try eventually(seconds: 20) { healthz(node)?.status == 200 ? true : nil }
        for index in 13...15 { writer.intent("heart.setRate", id: "\(index)", ["value": Self.rate(index)]) }
        answers(writer, ids: Set((13...15).map(String.init)), seconds: 10, into: &answered)

        // Exactly the acknowledged intents are recorded, gap-free.
        let events = try history(node, room: "pause")
        XCTAssertEqual(events.map { $0["seq"]?.doubleValue ?? -1 }, consecutive(1, through: events.count).map(Double.init))
        let recorded = events.compactMap { $0["state"]?["heart"]?["rate"]?.doubleValue }.map { Int(($0 * 1000).rounded()) }
        let acked = answered.filter { $0.value["type"]?.stringValue == "ack" }.keys.compactMap { Int($0) }
        XCTAssertEqual(recorded.sorted(), acked.sorted(), "recorded events are exactly the acked intents")
        XCTAssertEqual(answered.count, 15, "every intent was answered")
    }

    func testNodeCutFromRedisRefusesServesReadsAndCatchesUpAfterTheHeal() throws {
        let redis = try RedisProcess()
        let proxy = try TCPProxy(targetPort: redis.port)
        defer { proxy.stop() }
        let cut = try ServerProcess(["cluster": ["redis": proxy.url], "limits": Self.fastLimits])
        let other = try ServerProcess(["cluster": ["redis": redis.url], "limits": Self.fastLimits])
        let (reader, _) = try TestClient.join(cut, room: "cut", name: "reader")
        let (sender, _) = try TestClient.join(cut, room: "cut", name: "sender")
        let (writer, _) = try TestClient.join(other, room: "cut", name: "writer")
        writer.intent("heart.setRate", id: "w1", ["value": Self.rate(1)])
        XCTAssertEqual(try XCTUnwrap(reader.next(type: "event", timeout: 10))["seq"]?.doubleValue, 1)

        proxy.blackhole()
        // Sent into the cut: in doubt (no answer) until the link is back.
        sender.intent("heart.setRate", id: "s1", ["value": Self.rate(500)])
        let unhealthy = try eventually(seconds: 20) { () -> String? in
            guard let response = healthz(cut), response.status == 503 else { return nil }
            return response.text
        }
        print("node cut from Redis: /healthz says \(unhealthy)")
        var answered: [String: JSONValue] = [:]
        let askedAt = Date()
        sender.intent("heart.setRate", id: "s2", ["value": Self.rate(501)])
        answers(sender, ids: ["s2"], seconds: 10, into: &answered)
        XCTAssertEqual(answered["s2"]?["code"]?.stringValue, "unavailable")
        XCTAssertLessThan(Date().timeIntervalSince(askedAt), 5, "a cut node refuses promptly")
        XCTAssertNil(answered["s1"], "an intent in doubt was answered during the cut")

        // Reads go on from memory.
        let state = try HTTP.get("\(cut.httpBase)/api/state?room=cut")
        XCTAssertEqual(state.status, 200)
        XCTAssertEqual(state.json?["seq"]?.doubleValue, 1)
        let (late, welcome) = try TestClient.join(cut, room: "cut", name: "late")
        XCTAssertEqual(welcome["seq"]?.doubleValue, 1)
        late.close()

        // The other node goes on meanwhile.
        var writerAnswers: [String: JSONValue] = [:]
        for index in 2...6 { writer.intent("heart.setRate", id: "w\(index)", ["value": Self.rate(index)]) }
        answers(writer, ids: Set((2...6).map { "w\($0)" }), seconds: 10, into: &writerAnswers)
        XCTAssertEqual((2...6).filter { writerAnswers["w\($0)"]?["type"]?.stringValue == "ack" }.count, 5)
        let subscriberDown = try eventually(seconds: 15) { () -> String? in
            guard let text = healthz(cut)?.text, text.contains("subscriber") else { return nil }
            return text
        }
        print("node cut from Redis: /healthz says \(subscriberDown)")
        XCTAssertNil(reader.next(type: "event", timeout: 0.5), "events reached a node cut from Redis")

        proxy.heal()
        let healedAt = Date()
        // The reader gets what the other node recorded, gap-free, then the
        // intent that was in doubt (recorded on top of them, or refused).
        var seqs: [Double] = []
        while seqs.last.map({ $0 < 6 }) ?? true, Date().timeIntervalSince(healedAt) < 20 {
            guard let message = reader.next(timeout: 1) else { continue }
            XCTAssertNotEqual(message["type"]?.stringValue, "resync", "a resync instead of the missed events")
            if message["type"]?.stringValue == "event", let seq = message["seq"]?.doubleValue { seqs.append(seq) }
        }
        let caughtUp = Date().timeIntervalSince(healedAt)
        print("node cut from Redis: caught up \(String(format: "%.1f", caughtUp)) s after the heal")
        XCTAssertEqual(Array(seqs.prefix(5)), [2, 3, 4, 5, 6], "the missed events, gap-free")
        XCTAssertLessThan(caughtUp, 10, "caught up within 5 s of the heal (10 s on a busy machine)")
        answers(sender, ids: ["s1"], seconds: 20, into: &answered)
        let s1 = try XCTUnwrap(answered["s1"], "the intent in doubt was never answered")
        _ = try eventually(seconds: 20) { healthz(cut)?.status == 200 ? true : nil }

        // Both nodes agree; the intent in doubt is recorded if and only if it was acked.
        let events = try history(other, room: "cut")
        XCTAssertEqual(events.map { $0["seq"]?.doubleValue ?? -1 }, consecutive(1, through: events.count).map(Double.init))
        let recordedS1 = events.contains { $0["state"]?["heart"]?["rate"]?.doubleValue == Self.rate(500) }
        XCTAssertEqual(recordedS1, s1["type"]?.stringValue == "ack", "s1 answered \(s1), recorded: \(recordedS1)")
        XCTAssertFalse(events.contains { $0["state"]?["heart"]?["rate"]?.doubleValue == Self.rate(501) }, "a refused intent was recorded")
        let finalState = try eventually(seconds: 10) { () -> JSONValue? in
            let a = try HTTP.get("\(cut.httpBase)/api/state?room=cut").json, b = try HTTP.get("\(other.httpBase)/api/state?room=cut").json
            return a?["seq"] == b?["seq"] && a?["state"] == b?["state"] ? a : nil
        }
        XCTAssertEqual(finalState["seq"]?.doubleValue, Double(events.count))
    }
}
