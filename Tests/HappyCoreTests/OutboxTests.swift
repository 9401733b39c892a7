import XCTest
import HappyCore

final class OutboxTests: XCTestCase {
    /// The queue as names: a message's payload, or "RESYNC" for the marker.
    private func contents(_ outbox: Outbox<String>) -> [String] {
        (0..<outbox.count).map { offset in
            switch outbox[offset] {
            case .message(let payload, _, _): return payload
            case .resync: return "RESYNC"
            }
        }
    }

    private func name(_ entry: Outbox<String>.Entry) -> String {
        switch entry {
        case .message(let payload, _, _): return payload
        case .resync: return "RESYNC"
        }
    }

    // MARK: within the limit

    func testQueuesInOrderAndCountsBytes() {
        var outbox = Outbox<String>(limit: 100)
        XCTAssertTrue(outbox.isEmpty)
        XCTAssertEqual(outbox.push("welcome", bytes: 30, droppable: false), .queued)
        XCTAssertEqual(outbox.push("e1", bytes: 40, droppable: true), .queued)
        XCTAssertEqual(outbox.push("e2", bytes: 30, droppable: true), .queued)
        XCTAssertEqual(contents(outbox), ["welcome", "e1", "e2"])
        XCTAssertEqual(outbox.queuedBytes, 100)
        XCTAssertEqual(outbox.count, 3)
        XCTAssertFalse(outbox.resyncPending)
        XCTAssertEqual(outbox.first.map(name), "welcome")
    }

    func testRemoveFirstReleasesBytes() {
        var outbox = Outbox<String>(limit: 100)
        outbox.push("a", bytes: 10, droppable: true)
        outbox.push("b", bytes: 25, droppable: false)
        XCTAssertEqual(name(outbox.removeFirst()), "a")
        XCTAssertEqual(outbox.queuedBytes, 25)
        XCTAssertEqual(name(outbox.removeFirst()), "b")
        XCTAssertEqual(outbox.queuedBytes, 0)
        XCTAssertTrue(outbox.isEmpty)
        XCTAssertNil(outbox.first)
    }

    func testAnEmptiedOutboxGivesBackItsStorage() {
        var outbox = Outbox<String>(limit: 100)
        XCTAssertEqual(outbox.storageCapacity, 0)
        outbox.push("welcome", bytes: 30, droppable: false)
        outbox.push("e1", bytes: 10, droppable: true)
        XCTAssertGreaterThan(outbox.storageCapacity, 0)
        outbox.removeFirst()
        XCTAssertGreaterThan(outbox.storageCapacity, 0, "kept while something is queued")
        outbox.removeFirst()
        XCTAssertEqual(outbox.storageCapacity, 0)
        outbox.push("ack", bytes: 20, droppable: false)
        XCTAssertEqual(contents(outbox), ["ack"])
        XCTAssertEqual(outbox.queuedBytes, 20)
    }

    func testExactlyTheLimitIsStillQueued() {
        var outbox = Outbox<String>(limit: 100)
        XCTAssertEqual(outbox.push("e1", bytes: 60, droppable: true), .queued)
        XCTAssertEqual(outbox.push("e2", bytes: 40, droppable: true), .queued)
        XCTAssertEqual(outbox.queuedBytes, 100)
        XCTAssertEqual(outbox.push("e3", bytes: 1, droppable: true), .overflowed(droppedMessages: 3))
    }

    // MARK: overflow

    func testOverflowReplacesQueuedEventsWithOneResync() {
        var outbox = Outbox<String>(limit: 100)
        outbox.push("e1", bytes: 40, droppable: true)
        outbox.push("e2", bytes: 40, droppable: true)
        XCTAssertEqual(outbox.push("e3", bytes: 40, droppable: true), .overflowed(droppedMessages: 3))
        XCTAssertEqual(contents(outbox), ["RESYNC"])
        XCTAssertEqual(outbox.queuedBytes, 0)
        XCTAssertTrue(outbox.resyncPending)
    }

    func testResyncTakesThePlaceOfTheFirstDroppedEvent() {
        var outbox = Outbox<String>(limit: 100)
        outbox.push("welcome", bytes: 10, droppable: false)
        outbox.push("e1", bytes: 40, droppable: true)
        outbox.push("ack1", bytes: 10, droppable: false)
        outbox.push("e2", bytes: 40, droppable: true)
        XCTAssertEqual(outbox.push("e3", bytes: 40, droppable: true), .overflowed(droppedMessages: 3))
        XCTAssertEqual(contents(outbox), ["welcome", "RESYNC", "ack1"])
        XCTAssertEqual(outbox.queuedBytes, 20)
    }

    func testOverflowWithOnlyRepliesQueuedPutsTheResyncLast() {
        var outbox = Outbox<String>(limit: 100)
        outbox.push("welcome", bytes: 90, droppable: false)
        XCTAssertEqual(outbox.push("e1", bytes: 20, droppable: true), .overflowed(droppedMessages: 1))
        XCTAssertEqual(contents(outbox), ["welcome", "RESYNC"])
        XCTAssertEqual(outbox.queuedBytes, 90)
    }

    func testOneEventLargerThanTheLimitOverflowsAnEmptyQueue() {
        var outbox = Outbox<String>(limit: 100)
        XCTAssertEqual(outbox.push("huge", bytes: 101, droppable: true), .overflowed(droppedMessages: 1))
        XCTAssertEqual(contents(outbox), ["RESYNC"])
    }

    func testEventsAreCoveredByThePendingResyncUntilItIsWritten() {
        var outbox = Outbox<String>(limit: 100)
        outbox.push("welcome", bytes: 10, droppable: false)
        outbox.push("e1", bytes: 95, droppable: true)
        XCTAssertEqual(outbox.push("e2", bytes: 1, droppable: true), .coveredByResync)
        XCTAssertEqual(outbox.push("e3", bytes: 1, droppable: true), .coveredByResync)
        XCTAssertEqual(contents(outbox), ["welcome", "RESYNC"])

        XCTAssertEqual(name(outbox.removeFirst()), "welcome")
        XCTAssertTrue(outbox.resyncPending)
        XCTAssertEqual(outbox.push("e4", bytes: 1, droppable: true), .coveredByResync)
        XCTAssertEqual(name(outbox.removeFirst()), "RESYNC")
        XCTAssertFalse(outbox.resyncPending)
        XCTAssertEqual(outbox.push("e5", bytes: 1, droppable: true), .queued)
        XCTAssertEqual(contents(outbox), ["e5"])
    }

    func testRepliesAreQueuedAfterTheResyncMarker() {
        var outbox = Outbox<String>(limit: 100)
        outbox.push("e1", bytes: 80, droppable: true)
        outbox.push("e2", bytes: 80, droppable: true)
        XCTAssertEqual(outbox.push("ack1", bytes: 30, droppable: false), .queued)
        XCTAssertEqual(outbox.push("e3", bytes: 30, droppable: true), .coveredByResync)
        XCTAssertEqual(outbox.push("pong", bytes: 30, droppable: false), .queued)
        XCTAssertEqual(contents(outbox), ["RESYNC", "ack1", "pong"])
        XCTAssertEqual(outbox.queuedBytes, 60)
    }

    // MARK: replies past the limit

    func testRepliesAreNeverRefusedAndReportTheLimitPassed() {
        var outbox = Outbox<String>(limit: 100)
        XCTAssertEqual(outbox.push("welcome", bytes: 60, droppable: false), .queued)
        XCTAssertFalse(outbox.isOverLimit)
        XCTAssertEqual(outbox.push("ack1", bytes: 40, droppable: false), .queued)
        XCTAssertFalse(outbox.isOverLimit, "exactly the limit is not over it")
        for index in 0..<50 {
            XCTAssertEqual(outbox.push("ack\(index + 2)", bytes: 30, droppable: false), .queued)
        }
        XCTAssertTrue(outbox.isOverLimit)
        XCTAssertFalse(outbox.resyncPending, "replies are not replaced by a resync")
        XCTAssertEqual(outbox.count, 52)
        XCTAssertEqual(outbox.queuedBytes, 1600)
        while outbox.queuedBytes > 100 { outbox.removeFirst() }
        XCTAssertFalse(outbox.isOverLimit, "draining brings it back under the limit")
    }

    func testOverLimitCountsOnlyReplyBytesAfterAnOverflow() {
        var outbox = Outbox<String>(limit: 100)
        outbox.push("e1", bytes: 100, droppable: true)
        outbox.push("ack1", bytes: 90, droppable: false)
        XCTAssertEqual(outbox.queuedBytes, 190)
        XCTAssertTrue(outbox.isOverLimit)
        XCTAssertEqual(outbox.push("e2", bytes: 10, droppable: true), .overflowed(droppedMessages: 2))
        XCTAssertEqual(outbox.queuedBytes, 90)
        XCTAssertFalse(outbox.isOverLimit, "the dropped events no longer count")
        XCTAssertEqual(outbox.push("ack2", bytes: 110, droppable: false), .queued)
        XCTAssertEqual(contents(outbox), ["RESYNC", "ack1", "ack2"])
        XCTAssertTrue(outbox.isOverLimit)
    }

    func testRemoveAllResetsEverything() {
        var outbox = Outbox<String>(limit: 100)
        outbox.push("e1", bytes: 200, droppable: true)
        outbox.push("ack", bytes: 20, droppable: false)
        XCTAssertTrue(outbox.resyncPending)
        outbox.removeAll()
        XCTAssertTrue(outbox.isEmpty)
        XCTAssertEqual(outbox.queuedBytes, 0)
        XCTAssertFalse(outbox.resyncPending)
        XCTAssertEqual(outbox.push("e2", bytes: 10, droppable: true), .queued)
    }

    func testEntryKeepsBytesAndDroppability() {
        var outbox = Outbox<String>(limit: 100)
        outbox.push("ack", bytes: 12, droppable: false)
        guard case .message(let payload, let bytes, let droppable) = outbox[0] else { return XCTFail("not a message") }
        XCTAssertEqual(payload, "ack")
        XCTAssertEqual(bytes, 12)
        XCTAssertFalse(droppable)
    }

    func testLongRunKeepsBytesConsistent() {
        var outbox = Outbox<String>(limit: 1000)
        var results: [Outbox<String>.Admission] = []
        for i in 0..<500 {
            results.append(outbox.push("e\(i)", bytes: 30, droppable: true))
            if i % 3 == 0 { outbox.removeFirst() }
        }
        let expected = (0..<outbox.count).reduce(0) { sum, offset in
            if case .message(_, let bytes, _) = outbox[offset] { return sum + bytes }
            return sum
        }
        XCTAssertEqual(outbox.queuedBytes, expected)
        XCTAssertLessThanOrEqual(outbox.queuedBytes, 1000)
        XCTAssertTrue(results.contains(.overflowed(droppedMessages: 34)))
    }
}
