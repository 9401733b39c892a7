import Foundation
import HappyCore
import XCTest

/// Webhooks from a real `happyserver` to a real HTTP receiver on loopback
/// (PROTOCOL.md section 13): signed batches, at least once and in order
/// through a receiver outage and a SIGKILL (the SQLite outbox), and a slow
/// receiver that leaves the acks' latency alone.
final class WebhookDeliveryTests: XCTestCase {
    private let secret = "receiver-secret"

    private func server(_ receiver: WebhookReceiver, events: [String]) throws -> ServerProcess {
        try ServerProcess([
            "webhooks": [["url": receiver.url, "events": events, "secret": secret]],
            "limits": ["intentsPerSecond": 1000, "intentBurst": 1000],
        ])
    }

    /// Sends an intent and waits for its ack; returns how long that took.
    @discardableResult
    private func acked(_ client: TestClient, _ value: Int, id: String) throws -> Double {
        let started = Date()
        client.intent("face.setHappiness", id: id, ["value": value % 101])
        let ack = try XCTUnwrap(client.next(type: "ack", timeout: 10), "no ack for \(id)")
        XCTAssertEqual(ack["id"]?.stringValue, id)
        return Date().timeIntervalSince(started)
    }

    /// The event deliveries' seqs, each delivery once (receivers deduplicate by id).
    private func eventSeqs(_ receiver: WebhookReceiver) -> [Int] {
        var seen: Set<String> = []
        return receiver.deliveries.compactMap { delivery in
            guard delivery["type"]?.stringValue == "event", let id = delivery["id"]?.stringValue,
                  seen.insert(id).inserted else { return nil }
            return delivery["data"]?["seq"]?.intValue
        }
    }

    func testSignedBatchesTellWhatHappenedInTheRoom() throws {
        let receiver = try WebhookReceiver(secret: secret)
        let server = try server(receiver, events: ["room.created", "presence.joined", "presence.left", "event", "room.emptied"])
        let (alice, welcome) = try TestClient.join(server, room: "hooked", name: "alice")
        try acked(alice, 40, id: "a1")
        alice.close()
        let deliveries = try eventually(seconds: 15) { () -> [JSONValue]? in
            let all = receiver.deliveries
            return all.contains { $0["type"]?.stringValue == "room.emptied" } ? all : nil
        }
        XCTAssertEqual(deliveries.compactMap { $0["type"]?.stringValue },
                       ["room.created", "presence.joined", "event", "presence.left", "room.emptied"])
        XCTAssertTrue(deliveries.allSatisfy { $0["room"]?.stringValue == "hooked" })
        XCTAssertEqual(deliveries[0]["data"]?["epoch"]?.stringValue, welcome["epoch"]?.stringValue)
        XCTAssertEqual(deliveries[1]["data"]?["name"]?.stringValue, "alice")
        XCTAssertEqual(deliveries[2]["data"]?["name"]?.stringValue, "faceView:didChangeHappiness:")
        XCTAssertEqual(deliveries[2]["data"]?["seq"]?.intValue, 1)
        XCTAssertEqual(try receiver.badlySigned().count, 0)
    }

    func testAReceiverDownForTenSecondsGetsEverythingInOrder() throws {
        let receiver = try WebhookReceiver(secret: secret)
        let server = try server(receiver, events: ["event"])
        let (client, _) = try TestClient.join(server, name: "writer")
        for value in 1...5 { try acked(client, value, id: "up\(value)") }
        _ = try eventually(seconds: 15) { eventSeqs(receiver).count >= 5 ? true : nil }

        receiver.goDown()
        let downUntil = Date(timeIntervalSinceNow: 10)
        var sent = 5
        while Date() < downUntil {
            sent += 1
            try acked(client, sent, id: "down\(sent)")
            Thread.sleep(forTimeInterval: 0.2)
        }
        XCTAssertEqual(eventSeqs(receiver).count, 5, "nothing arrives while the receiver is down")
        try receiver.comeBack()
        let total = sent
        // The senders retry on their backoff (0.5 s doubling): within 16 s of the outage's start, then 32.
        let seqs = try eventually(seconds: 60) { () -> [Int]? in
            let seqs = eventSeqs(receiver)
            return seqs.count >= total ? seqs : nil
        }
        XCTAssertEqual(seqs, Array(1...total), "every event once, in order")
        XCTAssertEqual(try receiver.badlySigned().count, 0)
        print("webhooks: \(total) events, \(total - 5) sent while the receiver was down for 10 s, "
              + "all delivered in order in \(receiver.batches.count) batches")
    }

    func testDeliveriesPendingAtSIGKILLArriveAfterTheRestart() throws {
        let receiver = try WebhookReceiver(secret: secret)
        receiver.goDown()
        let server = try server(receiver, events: ["event"])
        let (client, _) = try TestClient.join(server, name: "writer")
        for value in 1...30 { try acked(client, value, id: "k\(value)") }
        server.kill()
        try receiver.comeBack()
        try server.start()
        let seqs = try eventually(seconds: 30) { () -> [Int]? in
            let seqs = eventSeqs(receiver)
            return seqs.count >= 30 ? seqs : nil
        }
        XCTAssertEqual(seqs, Array(1...30), "every acknowledged event, once each by id, in order")
    }

    func testASlowReceiverLeavesTheAcksLatencyAlone() throws {
        let receiver = try WebhookReceiver(secret: secret)
        let server = try server(receiver, events: ["event", "presence.joined", "presence.left"])
        let (client, _) = try TestClient.join(server, name: "writer")
        func latencies(_ label: String) throws -> (median: Double, p99: Double) {
            var samples: [Double] = []
            for index in 1...200 { samples.append(try acked(client, index, id: "\(label)\(index)")) }
            samples.sort()
            return (samples[samples.count / 2], samples[samples.count * 99 / 100])
        }
        let fast = try latencies("fast")
        receiver.answerAfter(5)
        try acked(client, 1, id: "held")
        _ = try eventually(seconds: 10) { receiver.unanswered > 0 ? true : nil }
        let slow = try latencies("slow")
        XCTAssertGreaterThan(receiver.unanswered, 0, "the sender still waits for the slow receiver")
        print(String(format: "webhooks: ack latency with a receiver answering at once: median %.2f ms, p99 %.2f ms; "
                     + "answering in 5 s: median %.2f ms, p99 %.2f ms",
                     fast.median * 1000, fast.p99 * 1000, slow.median * 1000, slow.p99 * 1000))
        // A sender on the acks' path would add up to 5 s; the bound leaves room for a busy machine.
        XCTAssertLessThan(slow.median, max(fast.median * 4, 0.05))
        XCTAssertLessThan(slow.p99, 1.0)
    }

    // MARK: two nodes sharing Redis

    private func clusterNodes(_ redis: RedisProcess, _ receiver: WebhookReceiver, events: [String]) throws -> [ServerProcess] {
        try (0..<2).map { _ in
            try ServerProcess([
                "cluster": ["redis": redis.url],
                "webhooks": [["url": receiver.url, "events": events, "secret": secret]],
                "limits": ["intentsPerSecond": 1000, "intentBurst": 1000],
            ])
        }
    }

    /// Deliveries by id, and the ids that came more than once.
    private func duplicates(_ receiver: WebhookReceiver) -> [String] {
        var counts: [String: Int] = [:]
        for delivery in receiver.deliveries { counts[delivery["id"]?.stringValue ?? "", default: 0] += 1 }
        return counts.filter { $0.value > 1 }.map(\.key).sorted()
    }

    func testTwoNodesDeliverEachDeliveryOnce() throws {
        let redis = try RedisProcess()
        let receiver = try WebhookReceiver(secret: secret)
        let nodes = try clusterNodes(redis, receiver, events: ["room.created", "presence.joined", "event"])
        let (first, _) = try TestClient.join(nodes[0], room: "shared", name: "one")
        let (second, _) = try TestClient.join(nodes[1], room: "shared", name: "two")
        for value in 1...20 {
            try acked(first, value, id: "a\(value)")
            try acked(second, value + 50, id: "b\(value)")
        }
        let seqs = try eventually(seconds: 30) { () -> [Int]? in
            let seqs = eventSeqs(receiver)
            return seqs.count >= 40 ? seqs : nil
        }
        Thread.sleep(forTimeInterval: 1) // anything sent twice would have come by now
        XCTAssertEqual(seqs, Array(1...40), "every event, in order")
        XCTAssertEqual(duplicates(receiver), [], "each delivery once")
        let types = receiver.deliveries.compactMap { $0["type"]?.stringValue }
        XCTAssertEqual(types.filter { $0 == "room.created" }.count, 1, "one creation, whichever node made it")
        XCTAssertEqual(Set(receiver.deliveries.filter { $0["type"]?.stringValue == "presence.joined" }
                           .compactMap { $0["data"]?["name"]?.stringValue }), ["one", "two"])
        XCTAssertEqual(try receiver.badlySigned().count, 0)
        let senders = nodes.filter { $0.logText.contains("this node sends the webhook's deliveries") }
        XCTAssertEqual(senders.count, 1, "one node holds the sender's lease")
    }

    func testWhenTheSendingNodeDiesTheOtherDeliversWhatWasPending() throws {
        let redis = try RedisProcess()
        let receiver = try WebhookReceiver(secret: secret)
        receiver.goDown()
        let nodes = try clusterNodes(redis, receiver, events: ["event"])
        let (client, _) = try TestClient.join(nodes[0], room: "shared", name: "one")
        for value in 1...15 { try acked(client, value, id: "k\(value)") }
        let sender = try eventually(seconds: 10) {
            nodes.firstIndex { $0.logText.contains("this node sends the webhook's deliveries") }
        }
        nodes[sender].kill()
        try receiver.comeBack()
        // The lease lapses (15 s), the other node takes it and sends the outbox.
        let seqs = try eventually(seconds: 60) { () -> [Int]? in
            let seqs = eventSeqs(receiver)
            return seqs.count >= 15 ? seqs : nil
        }
        XCTAssertEqual(seqs, Array(1...15), "every acknowledged event, once each by id, in order")
        XCTAssertTrue(nodes[1 - sender].logText.contains("this node sends the webhook's deliveries"))
    }

    func testANodeSharingRedisTakesAWebhookAddedBySIGHUP() throws {
        let redis = try RedisProcess()
        let receiver = try WebhookReceiver(secret: secret)
        let server = try ServerProcess(["cluster": ["redis": redis.url]])
        let (alice, _) = try TestClient.join(server, room: "before", name: "alice")
        try acked(alice, 10, id: "unlisted")

        var config = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: server.configURL)) as? [String: Any])
        config["webhooks"] = [["url": receiver.url, "events": ["room.created", "event"], "secret": secret]]
        try JSONSerialization.data(withJSONObject: config).write(to: server.configURL)
        kill(server.pid, SIGHUP)
        _ = try logOnceItHas(server, ["configuration reloaded unchanged=none"])

        try acked(alice, 20, id: "listed")
        let (bob, _) = try TestClient.join(server, room: "after", name: "bob")
        try acked(bob, 30, id: "new-room")
        let deliveries = try eventually(seconds: 20) { () -> [JSONValue]? in
            let all = receiver.deliveries
            return all.count >= 3 ? all : nil
        }
        XCTAssertEqual(deliveries.map { "\($0["type"]?.stringValue ?? "?") \($0["room"]?.stringValue ?? "?")" },
                       ["event before", "room.created after", "event after"],
                       "the commits and the room's creation write to the new webhook's stream in Redis")
        XCTAssertEqual(deliveries[0]["data"]?["seq"]?.intValue, 2)
    }

    /// The receiver example of docs/operations.md, run as written.
    func testTheDocumentedReceiverTakesSignedBatchesAndRefusesForgedOnes() throws {
        let script = ServerProcess.repositoryRoot.appendingPathComponent("docs/examples/webhook_receiver.py")
        let receiver = Process()
        receiver.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        receiver.arguments = [script.path, "--port", "0", "--secret", secret]
        let output = Pipe(), errors = Pipe()
        receiver.standardOutput = output
        receiver.standardError = errors
        let lines = LineCollector()
        output.fileHandleForReading.readabilityHandler = { lines.append($0.availableData) }
        let status = LineCollector()
        errors.fileHandleForReading.readabilityHandler = { status.append($0.availableData) }
        try receiver.run()
        defer { receiver.terminate(); receiver.waitUntilExit() }
        let port = try eventually(seconds: 10) { () -> Int? in
            status.lines.first.flatMap { $0.split(separator: ":").last.flatMap { Int($0) } }
        }
        let url = "http://127.0.0.1:\(port)/hooks/happy"
        let server = try ServerProcess(["webhooks": [["url": url, "events": ["event", "presence.joined"], "secret": secret]]])
        let (client, _) = try TestClient.join(server, name: "alice")
        try acked(client, 70, id: "x")
        let printed = try eventually(seconds: 15) { () -> [JSONValue]? in
            let parsed = lines.lines.compactMap { try? JSONParser.parse(Array($0.utf8)) }
            return parsed.count >= 2 ? parsed : nil
        }
        XCTAssertEqual(printed.compactMap { $0["type"]?.stringValue }, ["presence.joined", "event"])

        let forged = try HTTP.post(url, body: #"{"deliveries":[{"id":"x","type":"event"}]}"#,
                                   headers: ["X-Happy-Signature": "sha256=" + String(repeating: "0", count: 64)])
        XCTAssertEqual(forged.status, 401)
        XCTAssertEqual(lines.lines.count, 2, "a forged batch prints nothing")
    }
}

/// Lines written to a pipe, as they arrive.
private final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    func append(_ data: Data) { lock.withLock { text += String(decoding: data, as: UTF8.self) } }
    var lines: [String] { lock.withLock { text.split(separator: "\n").map(String.init) } }
}
