import XCTest
import HappyCore

final class RoomTests: XCTestCase {
    private let reducer = SceneReducer(rules: SceneRules())
    private let alice = Participant(id: "c1", name: "alice")

    private func makeRoom(seq: UInt64 = 5, history: Int = 10) -> Room<String> {
        Room(name: "lobby", epoch: "ep1", snapshot: RoomSnapshot(seq: seq, scene: .standard), historyCapacity: history)
    }

    private func apply(_ action: Action, to room: inout Room<String>, time: Int64 = 1000) -> AppliedIntent {
        room.apply(action, sender: alice, time: time, reducer: reducer)
    }

    func testNewRoomStartsCommitted() {
        let room = makeRoom()
        XCTAssertEqual(room.name, "lobby")
        XCTAssertEqual(room.epoch, "ep1")
        XCTAssertEqual(room.committed, RoomSnapshot(seq: 5, scene: .standard))
        XCTAssertEqual(room.working, room.committed)
        XCTAssertFalse(room.hasUncommittedChanges)
        XCTAssertEqual(room.history.capacity, 10)
        XCTAssertEqual(room.history.count, 0)
    }

    func testApplyAdvancesWorkingButNotCommitted() throws {
        var room = makeRoom()
        let applied = apply(.setHappiness(80), to: &room, time: 1234)
        let event = try XCTUnwrap(applied.event)
        XCTAssertEqual(applied.ackSeq, 6)
        XCTAssertEqual(applied.outcome.result, .applied)
        XCTAssertEqual(event.seq, 6)
        XCTAssertEqual(event.time, 1234)
        XCTAssertEqual(event.room, "lobby")
        XCTAssertEqual(event.name, .didChangeHappiness)
        XCTAssertEqual(event.sender, alice)
        XCTAssertEqual(event.changes, applied.outcome.changes)
        XCTAssertEqual(event.state.face.happiness, 80)
        XCTAssertEqual(room.working, RoomSnapshot(seq: 6, scene: event.state))
        XCTAssertEqual(room.committed, RoomSnapshot(seq: 5, scene: .standard))
        XCTAssertTrue(room.hasUncommittedChanges)
        XCTAssertEqual(room.history.count, 0)
    }

    func testApplyThatChangesNothingHasNoEventAndAcksTheCurrentSeq() {
        var room = makeRoom()
        let applied = apply(.setHappiness(50), to: &room)
        XCTAssertNil(applied.event)
        XCTAssertEqual(applied.ackSeq, 5)
        XCTAssertEqual(applied.outcome.result, .unchanged)
        XCTAssertEqual(room.working.seq, 5)
        XCTAssertFalse(room.hasUncommittedChanges)
    }

    func testBlockedDragonPressIsStillANumberedEvent() throws {
        var room = makeRoom()
        let applied = apply(.dragonBack, to: &room)
        let event = try XCTUnwrap(applied.event)
        XCTAssertEqual(event.seq, 6)
        XCTAssertEqual(event.name, .backButtonClicked)
        XCTAssertEqual(event.changes, [])
        XCTAssertEqual(applied.outcome.result, .blocked)
        XCTAssertEqual(applied.ackSeq, 6)
        XCTAssertEqual(room.working.scene, .standard)
    }

    func testWorkingStateRunsAheadAcrossSeveralApplies() throws {
        var room = makeRoom()
        let first = try XCTUnwrap(apply(.setHappiness(80), to: &room).event)
        let second = try XCTUnwrap(apply(.nudgeHappiness(10), to: &room).event)
        XCTAssertEqual(first.seq, 6)
        XCTAssertEqual(second.seq, 7)
        XCTAssertEqual(second.changes.first, SceneChange(path: .faceHappiness, from: .integer(80), to: .integer(90)))
        XCTAssertEqual(room.working.seq, 7)
        XCTAssertEqual(room.committed.seq, 5)
    }

    func testCommitMovesCommittedAndRecordsHistory() throws {
        var room = makeRoom()
        let first = try XCTUnwrap(apply(.setHappiness(80), to: &room).event)
        let second = try XCTUnwrap(apply(.dragonForward, to: &room).event)
        room.commit(first, historyElement: "json6")
        XCTAssertEqual(room.committed, RoomSnapshot(seq: 6, scene: first.state))
        XCTAssertEqual(room.working.seq, 7)
        XCTAssertTrue(room.hasUncommittedChanges)
        room.commit(second, historyElement: "json7")
        XCTAssertEqual(room.committed, room.working)
        XCTAssertFalse(room.hasUncommittedChanges)
        XCTAssertEqual(room.history.all.map(\.seq), [6, 7])
        XCTAssertEqual(room.history.events(after: 5, upTo: room.committed.seq), ["json6", "json7"])
    }

    func testRollbackRestoresWorkingToCommitted() throws {
        var room = makeRoom()
        let first = try XCTUnwrap(apply(.setHappiness(80), to: &room).event)
        room.commit(first, historyElement: "json6")
        _ = apply(.setRate(1), to: &room)
        _ = apply(.toggleHidden, to: &room)
        XCTAssertEqual(room.working.seq, 8)
        room.rollback()
        XCTAssertEqual(room.working, room.committed)
        XCTAssertEqual(room.working.seq, 6)
        XCTAssertEqual(room.working.scene.heart.rate, 0.5)
        XCTAssertFalse(room.working.scene.dragon.hidden)
        XCTAssertFalse(room.hasUncommittedChanges)
        XCTAssertEqual(room.history.all.map(\.seq), [6])
    }

    func testSeqIsReusedAfterARollback() throws {
        var room = makeRoom()
        let lost = try XCTUnwrap(apply(.setRate(0), to: &room).event)
        room.rollback()
        let retried = try XCTUnwrap(apply(.setRate(1), to: &room).event)
        XCTAssertEqual(lost.seq, 6)
        XCTAssertEqual(retried.seq, 6)
        XCTAssertEqual(retried.changes, [SceneChange(path: .heartRate, from: .number(0.5), to: .number(1))])
    }

    func testReplaceKeepsHistoryForTheSameEpochGoingForward() throws {
        var room = makeRoom()
        let event = try XCTUnwrap(apply(.setHappiness(80), to: &room).event)
        room.commit(event, historyElement: "json6")
        var newer = Scene.standard
        newer.dragon.x = 40
        room.replace(epoch: "ep1", snapshot: RoomSnapshot(seq: 9, scene: newer))
        XCTAssertEqual(room.committed, RoomSnapshot(seq: 9, scene: newer))
        XCTAssertEqual(room.working, room.committed)
        XCTAssertEqual(room.history.count, 1)
        XCTAssertNil(room.history.events(after: 5, upTo: 9))
    }

    func testReplaceWithAnotherEpochOrAnOlderSeqClearsHistory() throws {
        var room = makeRoom()
        room.commit(try XCTUnwrap(apply(.setHappiness(80), to: &room).event), historyElement: "json6")
        room.replace(epoch: "ep2", snapshot: RoomSnapshot(seq: 1, scene: .standard))
        XCTAssertEqual(room.epoch, "ep2")
        XCTAssertEqual(room.history.count, 0)

        room.commit(try XCTUnwrap(apply(.setHappiness(10), to: &room).event), historyElement: "json2")
        XCTAssertEqual(room.history.count, 1)
        room.replace(epoch: "ep2", snapshot: RoomSnapshot(seq: 1, scene: .standard))
        XCTAssertEqual(room.history.count, 0)
        XCTAssertEqual(room.working.seq, 1)
    }

    func testHistoryCapacityComesFromTheRoom() throws {
        var room = makeRoom(seq: 0, history: 2)
        for value in [10.0, 20, 30] {
            room.commit(try XCTUnwrap(apply(.setHappiness(value), to: &room).event), historyElement: "h\(Int(value))")
        }
        XCTAssertEqual(room.history.all.map(\.element), ["h20", "h30"])
        XCTAssertEqual(room.committed.seq, 3)
    }

    // MARK: the dragon label

    func testTheLabelFollowsCommittedDragonEventsOnly() throws {
        var room = Room<String>(name: "lobby", epoch: "ep1", snapshot: RoomSnapshot(seq: 0, scene: .standard),
                                historyCapacity: 10, labels: DragonStatus(initial: "ready"))
        XCTAssertEqual(room.dragonStatus, "ready")
        let forward = try XCTUnwrap(apply(.dragonForward, to: &room).event)
        XCTAssertEqual(room.dragonStatus, "ready", "applied is not committed")
        room.commit(forward, historyElement: "e1")
        XCTAssertEqual(room.dragonStatus, "forward, (x,y) = (20, 10)")
        let happy = try XCTUnwrap(apply(.setHappiness(20), to: &room).event)
        room.commit(happy, historyElement: "e2")
        XCTAssertEqual(room.dragonStatus, "forward, (x,y) = (20, 10)", "other events leave it")
        let reset = try XCTUnwrap(apply(.reset, to: &room).event)
        room.commit(reset, historyElement: "e3")
        XCTAssertEqual(room.dragonStatus, "ready")
    }

    func testCatchingUpAndReplacingSetTheLabelGiven() {
        var room = makeRoom()
        room.catchUp(to: RoomSnapshot(seq: 6, scene: .standard), events: [(6, "e6")])
        XCTAssertEqual(room.dragonStatus, DragonStatus.seedInitial, "nil keeps the label")
        room.catchUp(to: RoomSnapshot(seq: 7, scene: .standard), events: [(7, "e7")], dragonStatus: "hide")
        XCTAssertEqual(room.dragonStatus, "hide")
        room.replace(epoch: "ep2", snapshot: RoomSnapshot(seq: 3, scene: .standard), history: [(3, "x3")])
        XCTAssertEqual(room.dragonStatus, DragonStatus.seedInitial, "a replaced room starts from the initial label")
        XCTAssertEqual(room.history.count, 1)
        XCTAssertEqual(room.epoch, "ep2")
    }
}
