import HappyCore
import XCTest

final class BroadcastLogTests: XCTestCase {
    func testPositionsGrowAndEntriesStayUntilEveryReaderPassed() {
        var log = BroadcastLog<String>(byteLimit: 10_000)
        XCTAssertEqual(log.append("a", bytes: 10, readers: 2), 0)
        XCTAssertEqual(log.append("b", bytes: 20, readers: 2), 1)
        XCTAssertEqual(log.start, 0)
        XCTAssertEqual(log.end, 2)
        XCTAssertEqual(log.element(at: 1), "b")

        log.passed(0)
        log.append("c", bytes: 1, readers: 2)
        XCTAssertEqual(log.start, 0, "one reader still has to write entry 0")
        log.passed(0)
        log.append("d", bytes: 1, readers: 2)
        XCTAssertEqual(log.start, 1, "written by all: dropped at the next append")
        XCTAssertEqual(log.bytes, 22)
    }

    func testAnEntryWithoutReadersIsNotKept() {
        var log = BroadcastLog<String>(byteLimit: 10_000)
        log.append("nobody", bytes: 5, readers: 0)
        XCTAssertEqual(log.count, 0)
        XCTAssertEqual(log.end, 1, "the position is used all the same")
    }

    func testBacklogIsTheBytesFromTheCursorToTheEnd() {
        var log = BroadcastLog<Int>(byteLimit: 10_000)
        for size in [10, 20, 30] { log.append(size, bytes: size, readers: 1) }
        XCTAssertEqual(log.backlog(from: 0), 60)
        XCTAssertEqual(log.backlog(from: 2), 30)
        XCTAssertEqual(log.backlog(from: 3), 0)
        log.passed(0)
        log.abandon(from: 3)
        XCTAssertEqual(log.backlog(from: 1), 50)
        XCTAssertNil(log.backlog(from: 0), "entries no longer held")
    }

    func testTheByteLimitDropsTheOldestAndLeavesSlowReadersBehind() {
        var log = BroadcastLog<Int>(byteLimit: 100)
        for index in 0..<5 { log.append(index, bytes: 30, readers: 1) }
        XCTAssertLessThanOrEqual(log.bytes, 100)
        XCTAssertEqual(log.end, 5)
        XCTAssertEqual(log.start, 2)
        XCTAssertFalse(log.holds(1), "a reader at 1 must be resynchronised")
        XCTAssertTrue(log.holds(2))
    }

    func testAbandonReleasesEverythingFromTheCursor() {
        var log = BroadcastLog<Int>(byteLimit: 10_000)
        for index in 0..<4 { log.append(index, bytes: 1, readers: 2) }
        log.passed(0)
        log.passed(1)
        log.abandon(from: 2)            // reader A wrote 0 and 1, then left
        XCTAssertEqual(log.start, 0, "reader B has written nothing yet")
        log.abandon(from: 0)            // reader B leaves
        XCTAssertEqual(log.count, 0)
        XCTAssertEqual(log.start, 4)
    }
}
