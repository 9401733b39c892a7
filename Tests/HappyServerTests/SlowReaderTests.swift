import Foundation
import HappyCore
import XCTest

/// Clients that stop reading (PROTOCOL.md section 5): bounded memory, resync, write timeout.
final class SlowReaderTests: XCTestCase {
    static let eventCount = 10_000
    static let batch = 500

    /// What the writer received while making events.
    private struct Production {
        var eventBytes = 0
        /// Messages other than its events and acks (presence, say).
        var others: [JSONValue] = []
    }

    /// Makes `count` events with `writer` (dragon.toggleHidden always changes
    /// the scene), in batches so that the writer's own queue stays short.
    @discardableResult
    private func makeEvents(_ count: Int, with writer: TestClient, file: StaticString = #filePath,
                            line: UInt = #line) -> Production {
        var production = Production()
        var sent = 0
        while sent < count {
            let size = min(Self.batch, count - sent)
            for index in 0..<size { writer.intent("dragon.toggleHidden", id: "t\(sent + index)") }
            sent += size
            var acks = 0
            while acks < size {
                guard let message = writer.nextMessage(timeout: 10) else {
                    XCTFail("the writer got \(acks) of \(size) acks", file: file, line: line)
                    return production
                }
                switch message.type {
                case "ack": acks += 1
                case "event": production.eventBytes += message.text.utf8.count
                default: production.others.append(message.json)
                }
            }
        }
        return production
    }

    func testSlowReaderCostsBoundedMemoryAndIsResynced() throws {
        // The stored history holds as many events as the resume ring, so
        // both are full after the warm-up (the store's own growth up to
        // historyLimit is not the slow reader's).
        // Each event on its own: at full speed the room's load would switch it to ticks (section 12).
        let server = try ServerProcess(["limits": ["intentsPerSecond": 1_000_000, "intentBurst": 1_000_000],
                                        "persistence": ["historyLimit": 1000], "crowd": ["mode": "each"]])
        let (slow, _) = try TestClient.join(server, name: "slow")
        let (writer, _) = try TestClient.join(server, name: "writer")
        XCTAssertEqual(slow.next(type: "presence")?["joined"]?["name"]?.stringValue, "writer")
        slow.connection.setReading(false)
        // Warm up: the first events allocate the history ring and lws buffers.
        makeEvents(1000, with: writer)

        let before = server.residentBytes()
        let started = Date()
        let eventBytes = makeEvents(Self.eventCount, with: writer).eventBytes
        let seconds = Date().timeIntervalSince(started)
        let after = server.residentBytes()
        let growth = after - before
        print(String(format: "slow reader: %d events (%.1f MB of event text) in %.1f s; server RSS %.1f MB -> %.1f MB (%+.1f MB)",
                     Self.eventCount, Double(eventBytes) / 1e6, seconds, Double(before) / 1e6, Double(after) / 1e6,
                     Double(growth) / 1e6))
        XCTAssertGreaterThan(before, 1_000_000, "the server's RSS was read")
        XCTAssertGreaterThan(after, 1_000_000, "the server's RSS was read")
        // The outbox holds at most maxQueuedBytes (1 MiB) of events; the
        // history ring and the stored history (1000 events each) and lws's
        // buffers are already full after the warm-up. 3 MB leaves 2 MB for allocator slack, yet is well below
        // what queueing every event costs: with maxQueuedBytes at 100 MB the
        // same run grows the server by about 5 MB (the 3.7 MB of event text,
        // one buffer and object per event).
        XCTAssertLessThan(growth, 3_000_000, "server memory grew with a client that reads nothing")

        XCTAssertGreaterThan(try server.metric("happy_outbox_drops_total"), 0, "events were given up for the slow reader")

        let truth = try XCTUnwrap(HTTP.get("\(server.httpBase)/api/state").json)
        let total = 1000 + Self.eventCount
        XCTAssertEqual(truth["seq"]?.intValue, total)

        // PROTOCOL.md section 5 as the client sees it: events arrive in seq
        // order with no gap, except that a resync may take the place of any
        // run of them (more than once for a client that keeps falling behind),
        // and nothing older than a resync follows it.
        slow.connection.setReading(true)
        var lastSeq = 0
        var lastState: JSONValue?
        var resyncs = 0
        while lastSeq < total, let message = slow.next(timeout: 10) {
            let seq = try XCTUnwrap(message["seq"]?.intValue, "\(message)")
            switch message["type"]?.stringValue {
            case "event":
                XCTAssertEqual(seq, lastSeq + 1, "events between resyncs are consecutive")
            case "resync":
                XCTAssertGreaterThanOrEqual(seq, lastSeq, "a resync never goes back")
                resyncs += 1
            default:
                XCTFail("unexpected \(message)")
            }
            lastSeq = seq
            lastState = message["state"]
        }
        XCTAssertEqual(lastSeq, total, "the slow reader caught up")
        XCTAssertJSONEqual(lastState, truth["state"] ?? .null)
        XCTAssertGreaterThanOrEqual(resyncs, 1, "a resync replaced the events given up")
        XCTAssertEqual(try server.metric("happy_resyncs_total"), Double(resyncs),
                       "every resync counted was received")

        // The pong answers a ping sent after everything above: nothing else comes first.
        slow.send(#"{"type":"ping","id":"after"}"#)
        XCTAssertEqual(slow.next()?["type"]?.stringValue, "pong", "nothing older follows the catch-up")

        slow.intent("face.setHappiness", id: "alive", ["value": 99])
        XCTAssertEqual(slow.next(type: "event")?["seq"]?.intValue, total + 1)
        XCTAssertJSONEqual(slow.next(type: "ack"),
                           .parse(#"{ "type": "ack", "id": "alive", "seq": \#(total + 1), "result": "applied" }"#))
        print("slow reader: \(resyncs) resync(s) on the way to seq \(total)")
    }

    func testClientThatReadsNothingIsDroppedAfterTheWriteTimeout() throws {
        let server = try ServerProcess(["limits": ["writeTimeoutSeconds": 2, "intentsPerSecond": 1_000_000,
                                                   "intentBurst": 1_000_000]])
        let (stuck, welcome) = try TestClient.join(server, name: "stuck")
        let (writer, _) = try TestClient.join(server, name: "writer")
        XCTAssertEqual(stuck.next(type: "presence")?["joined"]?["name"]?.stringValue, "writer")
        stuck.connection.setReading(false)
        let stopped = Date()
        // More than the socket buffers hold, so that events wait in the server's queue.
        let production = makeEvents(Self.eventCount, with: writer)
        let produced = Date()

        let left = try XCTUnwrap(production.others.first { $0["type"]?.stringValue == "presence" }
                                 ?? writer.next(type: "presence", timeout: 5),
                                 "the stuck client was not dropped\n\(server.logText.suffix(2000))")
        let waited = Date().timeIntervalSince(stopped)
        XCTAssertEqual(left["left"]?["id"], welcome["you"]?["id"])
        XCTAssertGreaterThanOrEqual(waited, 2, "dropped before writeTimeoutSeconds")
        print(String(format: "stuck client dropped %.1f s after it stopped reading (events took %.1f s)",
                     waited, produced.timeIntervalSince(stopped)))
        XCTAssertEqual(try server.metric("happy_slow_reader_closes_total"), 1)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["presenceCount"]?.intValue, 1)
    }
}
