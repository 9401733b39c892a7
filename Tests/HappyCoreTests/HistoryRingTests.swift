import XCTest
import HappyCore

final class HistoryRingTests: XCTestCase {
    private func ring(capacity: Int, seqs: ClosedRange<UInt64>) -> HistoryRing<String> {
        var ring = HistoryRing<String>(capacity: capacity)
        for seq in seqs { ring.append(seq: seq, "e\(seq)") }
        return ring
    }

    private func decide(since: UInt64?, epoch: String?, roomSeq: UInt64 = 10,
                        history: HistoryRing<String>) -> [String]? {
        switch ResumeDecision.decide(since: since, epoch: epoch, roomEpoch: "ep", roomSeq: roomSeq, history: history) {
        case .recovered(let replay): return replay
        case .fresh: return nil
        }
    }

    // MARK: ring contents

    func testAppendKeepsTheNewestCapacityEvents() {
        let history = ring(capacity: 3, seqs: 1...5)
        XCTAssertEqual(history.count, 3)
        XCTAssertEqual(history.oldestSeq, 3)
        XCTAssertEqual(history.newestSeq, 5)
        XCTAssertEqual(history.all.map(\.seq), [3, 4, 5])
        XCTAssertEqual(history.all.map(\.element), ["e3", "e4", "e5"])
    }

    func testEmptyRing() {
        let history = HistoryRing<String>(capacity: 4)
        XCTAssertEqual(history.count, 0)
        XCTAssertNil(history.oldestSeq)
        XCTAssertNil(history.newestSeq)
        XCTAssertTrue(history.all.isEmpty)
    }

    func testAGapInSeqsEmptiesTheRingFirst() {
        var history = ring(capacity: 10, seqs: 1...3)
        history.append(seq: 5, "e5")
        XCTAssertEqual(history.all.map(\.seq), [5])
        history.append(seq: 6, "e6")
        XCTAssertEqual(history.all.map(\.seq), [5, 6])
        XCTAssertNil(history.events(after: 3, upTo: 6))
        XCTAssertEqual(history.events(after: 4, upTo: 6), ["e5", "e6"])
    }

    func testARepeatedOrOlderSeqEmptiesTheRingFirst() {
        var history = ring(capacity: 10, seqs: 1...3)
        history.append(seq: 3, "again")
        XCTAssertEqual(history.all.map(\.element), ["again"])
        history.append(seq: 1, "older")
        XCTAssertEqual(history.all.map(\.seq), [1])
    }

    func testCapacityZeroHoldsNothing() {
        let history = ring(capacity: 0, seqs: 1...5)
        XCTAssertEqual(history.capacity, 0)
        XCTAssertEqual(history.count, 0)
        XCTAssertNil(history.events(after: 4, upTo: 5))
        XCTAssertEqual(history.events(after: 5, upTo: 5), [])
        XCTAssertEqual(HistoryRing<String>(capacity: -3).capacity, 0)
    }

    func testRemoveAll() {
        var history = ring(capacity: 5, seqs: 1...4)
        history.removeAll()
        XCTAssertEqual(history.count, 0)
        history.append(seq: 9, "e9")
        XCTAssertEqual(history.all.map(\.seq), [9])
    }

    func testWrapsAroundManyTimes() {
        let history = ring(capacity: 10, seqs: 1...1000)
        XCTAssertEqual(history.count, 10)
        XCTAssertEqual(history.oldestSeq, 991)
        XCTAssertEqual(history.events(after: 995, upTo: 1000), ["e996", "e997", "e998", "e999", "e1000"])
    }

    // MARK: events(after:upTo:)

    func testReplayContentsInOrder() {
        let history = ring(capacity: 100, seqs: 1...5)
        XCTAssertEqual(history.events(after: 2, upTo: 5), ["e3", "e4", "e5"])
        XCTAssertEqual(history.events(after: 4, upTo: 5), ["e5"])
        XCTAssertEqual(history.events(after: 0, upTo: 5), ["e1", "e2", "e3", "e4", "e5"])
    }

    func testReplayFromJustBeforeTheOldestHeldEvent() {
        let history = ring(capacity: 3, seqs: 1...5)
        XCTAssertEqual(history.events(after: 2, upTo: 5), ["e3", "e4", "e5"])
        XCTAssertNil(history.events(after: 1, upTo: 5))
        XCTAssertNil(history.events(after: 0, upTo: 5))
    }

    func testSinceEqualToCurrentNeedsNoEvents() {
        XCTAssertEqual(ring(capacity: 3, seqs: 1...5).events(after: 5, upTo: 5), [])
        XCTAssertEqual(HistoryRing<String>(capacity: 3).events(after: 7, upTo: 7), [])
    }

    func testSinceNewerThanCurrentIsUnknown() {
        XCTAssertNil(ring(capacity: 10, seqs: 1...5).events(after: 6, upTo: 5))
        XCTAssertNil(ring(capacity: 10, seqs: 1...5).events(after: 500, upTo: 5))
    }

    func testCurrentMustBeTheNewestHeldEvent() {
        let history = ring(capacity: 10, seqs: 1...5)
        XCTAssertNil(history.events(after: 3, upTo: 6))
        XCTAssertNil(history.events(after: 3, upTo: 4))
        XCTAssertNil(HistoryRing<String>(capacity: 10).events(after: 3, upTo: 4))
    }

    // MARK: ResumeDecision

    func testMatchingEpochAndHeldEventsRecover() {
        let history = ring(capacity: 100, seqs: 1...10)
        XCTAssertEqual(decide(since: 7, epoch: "ep", history: history), ["e8", "e9", "e10"])
        XCTAssertTrue(ResumeDecision.decide(since: 7, epoch: "ep", roomEpoch: "ep", roomSeq: 10, history: history).isRecovered)
    }

    func testSinceEqualToSeqRecoversWithoutReplay() {
        XCTAssertEqual(decide(since: 10, epoch: "ep", history: ring(capacity: 100, seqs: 1...10)), [])
        XCTAssertEqual(decide(since: 10, epoch: "ep", history: HistoryRing(capacity: 0)), [])
    }

    func testSinceOlderThanTheRingIsFresh() {
        XCTAssertNil(decide(since: 2, epoch: "ep", history: ring(capacity: 5, seqs: 1...10)))
        XCTAssertEqual(decide(since: 5, epoch: "ep", history: ring(capacity: 5, seqs: 1...10)), ["e6", "e7", "e8", "e9", "e10"])
    }

    func testSinceNewerThanSeqIsFresh() {
        XCTAssertNil(decide(since: 11, epoch: "ep", history: ring(capacity: 100, seqs: 1...10)))
    }

    func testWrongEpochIsFresh() {
        XCTAssertNil(decide(since: 9, epoch: "other", history: ring(capacity: 100, seqs: 1...10)))
        XCTAssertNil(decide(since: 10, epoch: "EP", history: ring(capacity: 100, seqs: 1...10)))
        XCTAssertNil(decide(since: 10, epoch: "", history: ring(capacity: 100, seqs: 1...10)))
    }

    func testMissingSinceOrEpochIsFresh() {
        let history = ring(capacity: 100, seqs: 1...10)
        XCTAssertNil(decide(since: nil, epoch: "ep", history: history))
        XCTAssertNil(decide(since: 9, epoch: nil, history: history))
        XCTAssertNil(decide(since: nil, epoch: nil, history: history))
        XCTAssertFalse(ResumeDecision.decide(since: nil, epoch: nil, roomEpoch: "ep", roomSeq: 10, history: history).isRecovered)
    }

    func testCapacityZeroCannotReplay() {
        XCTAssertNil(decide(since: 9, epoch: "ep", history: ring(capacity: 0, seqs: 1...10)))
    }

    func testGapInHistoryPreventsReplayAcrossIt() {
        var history = ring(capacity: 100, seqs: 1...5)
        for seq: UInt64 in 8...10 { history.append(seq: seq, "e\(seq)") }
        XCTAssertNil(decide(since: 4, epoch: "ep", history: history))
        XCTAssertNil(decide(since: 6, epoch: "ep", history: history))
        XCTAssertEqual(decide(since: 7, epoch: "ep", history: history), ["e8", "e9", "e10"])
    }
}
