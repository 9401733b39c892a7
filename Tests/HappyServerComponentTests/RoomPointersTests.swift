import HappyCore
@testable import HappyServer
import XCTest

/// One room's pointers as a value: conflation, the batch cap, what went, and
/// what a client that skipped batches must be told.
final class RoomPointersTests: XCTestCase {
    private func entry(_ id: String, x: Double, activity: PointerActivity = .idle) -> PointerEntry {
        PointerEntry(id: id, name: "name-\(id)", position: PointerPosition(view: .face, x: x, y: 0.5, activity: activity))
    }

    func testMovesAreConflatedToTheLatestAndTheSameMoveIsNoChange() {
        var pointers = RoomPointers()
        pointers.move(entry("a", x: 0.1))
        pointers.move(entry("a", x: 0.2))
        let batch = pointers.takeBatch(limit: 10, at: 5)
        XCTAssertEqual(batch.ids, ["a"])
        XCTAssertEqual(pointers.visible["a"]?.entry.position.x, 0.2)
        XCTAssertEqual(pointers.lastBatchAt, 5)
        pointers.move(entry("a", x: 0.2))
        XCTAssertFalse(pointers.hasChanges, "the same position again changes nothing")
    }

    func testTheCapTakesTheNewestFirstAndKeepsTheRest() {
        var pointers = RoomPointers()
        for (index, id) in ["a", "b", "c"].enumerated() { pointers.move(entry(id, x: Double(index) / 10)) }
        XCTAssertEqual(pointers.takeBatch(limit: 2, at: 1).ids, ["c", "b"])
        XCTAssertTrue(pointers.hasChanges)
        XCTAssertEqual(pointers.takeBatch(limit: 2, at: 2).ids, ["a"])
        XCTAssertFalse(pointers.hasChanges)
    }

    func testHidingListsTheIdAsGoneOnceAndAMoveBringsItBack() {
        var pointers = RoomPointers()
        pointers.move(entry("a", x: 0.1))
        _ = pointers.takeBatch(limit: 10, at: 1)
        XCTAssertTrue(pointers.hide("a"))
        XCTAssertFalse(pointers.hide("a"), "hidden already")
        XCTAssertEqual(pointers.takeBatch(limit: 10, at: 2).gone, ["a"])
        pointers.move(entry("a", x: 0.3))
        pointers.hide("a")
        pointers.move(entry("a", x: 0.4))
        let batch = pointers.takeBatch(limit: 10, at: 3)
        XCTAssertEqual(batch.ids, ["a"])
        XCTAssertEqual(batch.gone, [], "back before the batch: not gone")
    }

    func testAClientThatSkippedBatchesLearnsWhatWentSince() {
        var pointers = RoomPointers()
        for id in ["a", "b", "c"] { pointers.move(entry(id, x: 0.5)) }
        let skippedFrom = pointers.takeBatch(limit: 10, at: 1).goneFrom
        pointers.hide("a")
        pointers.hide("b")
        pointers.move(entry("b", x: 0.6))
        XCTAssertEqual(pointers.goneSince(skippedFrom), ["a"], "b is visible again")
        XCTAssertEqual(pointers.visibleEntries(excluding: "c", limit: 10).count, 1, "b, not the receiver's own")
    }

    func testOnlyTheNewestGoneIdsAreKept() {
        var pointers = RoomPointers()
        let total = RoomPointers.recentGoneLimit + 10
        for index in 0..<total {
            pointers.move(entry("p\(index)", x: 0.5))
            pointers.hide("p\(index)")
        }
        let kept = pointers.goneSince(0)
        XCTAssertLessThanOrEqual(kept.count, RoomPointers.recentGoneLimit)
        XCTAssertEqual(kept.last, "p\(total - 1)")
        XCTAssertEqual(pointers.goneCount, UInt64(total))
    }
}
