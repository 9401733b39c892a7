import HappyCore
@testable import HappyServer
import XCTest

/// The commit path as a value: what it asks for after each intent, loop
/// turn and store answer, on a clock the test sets. No server, no store.
final class CommitMachineTests: XCTestCase {
    private var machine = CommitMachine()
    private var now = 100.0
    private let reducer = SceneReducer(rules: SceneRules())
    private let diskFull = StoreError(.io, "disk full")
    private let noAnswer = StoreError(.inDoubt, "timed out after sending")
    /// Each room's working state, run ahead here as the commit path would run the room's own.
    private var working: [String: Room<OutboundFrame>] = [:]

    // MARK: helpers

    /// A loaded room at `seq`.
    private func room(_ name: String, seq: UInt64 = 0, epoch: String = "e1") -> RoomRuntime {
        RoomRuntime(name: name, now: now, logBytes: 1 << 20,
                    room: Room(name: name, epoch: epoch, snapshot: RoomSnapshot(seq: seq, scene: .standard),
                               historyCapacity: 100))
    }

    /// `action` applied to the room's working state, answered over HTTP.
    private func applied(_ action: Action, in runtime: RoomRuntime, id: String? = nil) -> PendingIntent {
        let sender = Participant(id: "c1", name: "alice")
        if working[runtime.name] == nil { working[runtime.name] = runtime.room }
        let outcome = working[runtime.name]!.apply(action, sender: sender, time: 1_000, reducer: reducer)
        let frame = outcome.event.map {
            OutboundFrame(encoded: ServerMessageEncoder.event($0, headroom: OutboundFrame.headroom), seq: $0.seq)
        }
        let exchange = HTTPExchange(transport: FakeExchangeTransport(), method: "POST", path: "/api/intent", query: [:],
                                    peerAddress: "192.0.2.1", startedAt: now)
        let pending = PendingIntent(runtime: runtime, reply: .http(exchange), intent: Intent(id: id, action: action),
                                    sender: sender, applied: outcome, frame: frame)
        XCTAssertTrue(machine.applied(pending).isEmpty, "nothing happens before the turn ends")
        return pending
    }

    /// The batch the next flush sends.
    private func flushedBatch(file: StaticString = #filePath, line: UInt = #line) -> CommitPipeline.Batch? {
        let actions = machine.flush(withHistory: true, now: now)
        guard case .record(let batch, let delay)? = actions.last else {
            XCTFail("no batch sent: \(describe(actions))", file: file, line: line)
            return nil
        }
        XCTAssertEqual(delay, 0, file: file, line: line)
        return batch
    }

    private func finished(_ batch: CommitPipeline.Batch, _ result: Result<[CommitConflict], StoreError>,
                          seconds: Double = 0.002) -> [CommitAction] {
        machine.commitFinished(batch: batch.id, result: result, seconds: seconds, now: now)
    }

    /// Actions as short words, for comparing sequences.
    private func describe(_ actions: [CommitAction]) -> [String] {
        actions.map { action in
            switch action {
            case .record(let batch, let delay): return "record \(batch.commits.map(\.room))" + (delay > 0 ? " after \(delay)" : "")
            case .recorded(let rooms, _): return "recorded \(rooms.map(\.name))"
            case .deliver(let intent): return "deliver \(intent.intent.id ?? "?")"
            case .delivered(let intents): return "delivered \(intents.count)"
            case .refuse(let intent, let error): return "refuse \(intent.intent.id ?? "?") \(error.code.rawValue)"
            case .rollback(let runtime): return "rollback \(runtime.name)"
            case .catchUp(let runtime, _, let base, let reapply):
                return "catchUp \(runtime.name) base \(base.map(String.init) ?? "-") reapply \(reapply.compactMap(\.intent.id))"
            case .flush: return "flush"
            case .batchFinished: return "batchFinished"
            case .note(let note):
                switch note {
                case .storeFailed(_, let log): return log ? "note failed, logged" : "note failed"
                case .heldInDoubt(_, let intents): return "note in doubt \(intents)"
                case .inDoubtResolved(let seconds): return "note resolved after \(seconds)"
                case .storeRecovered: return "note recovered"
                case .conflict: return "note conflict"
                }
            }
        }
    }

    // MARK: group commit

    func testIntentsOfOneTurnGoInOneBatchWithOneCommitPerRoom() {
        let north = room("north"), south = room("south")
        _ = applied(.setHappiness(60), in: north, id: "a")
        _ = applied(.setHappiness(70), in: north, id: "b")
        _ = applied(.setRate(0.25), in: south, id: "c")
        let batch = flushedBatch()
        XCTAssertEqual(batch?.intents.compactMap(\.intent.id), ["a", "b", "c"])
        XCTAssertEqual(batch?.commits.map(\.room), ["north", "south"])
        XCTAssertEqual(batch?.commits.first?.baseSeq, 0)
        XCTAssertEqual(batch?.commits.first?.seq, 2)
        XCTAssertEqual(batch?.commits.first?.events.map(\.seq), [1, 2])
        XCTAssertTrue(batch?.rooms.first === north)
    }

    func testOneBatchInFlightWhileTheNextGathers() {
        let lobby = room("lobby")
        _ = applied(.setHappiness(60), in: lobby, id: "first")
        guard let first = flushedBatch() else { return }
        _ = applied(.setHappiness(61), in: lobby, id: "second")
        XCTAssertTrue(machine.flush(withHistory: true, now: now).isEmpty, "nothing goes while a batch is in flight")
        XCTAssertTrue(machine.hasBatchInFlight)

        let actions = finished(first, .success([]))
        XCTAssertEqual(describe(actions), ["recorded [\"lobby\"]", "deliver first", "delivered 1", "flush", "batchFinished"])
        let second = flushedBatch()
        XCTAssertEqual(second?.intents.compactMap(\.intent.id), ["second"])
        XCTAssertEqual(second?.commits.first?.baseSeq, 1, "built on the first batch's event")
        XCTAssertGreaterThan(second?.commits.first?.serial ?? 0, first.commits.first?.serial ?? .max)
    }

    func testIntentsThatChangeNothingFinishWithoutAStoreCall() {
        let lobby = room("lobby")
        _ = applied(.setHappiness(50), in: lobby, id: "same")  // already 50
        let actions = machine.flush(withHistory: true, now: now)
        XCTAssertEqual(describe(actions), ["recorded []", "deliver same", "delivered 1"])
        XCTAssertTrue(machine.isIdle)
    }

    func testACreationAloneIsRecorded() {
        let lobby = room("lobby")
        machine.created(RoomCommit(room: "lobby", epoch: "e1", baseSeq: 0, seq: 0, scene: .standard, events: []), of: lobby)
        XCTAssertFalse(machine.isIdle)
        guard let batch = flushedBatch() else { return }
        XCTAssertEqual(batch.commits.map(\.seq), [0])
        XCTAssertEqual(describe(finished(batch, .success([]))), ["recorded [\"lobby\"]", "delivered 0", "flush", "batchFinished"])
        XCTAssertTrue(machine.isIdle)
    }

    func testEventsCarryTheDragonLabelAfterThem() {
        let lobby = room("lobby")
        _ = applied(.dragonForward, in: lobby)
        _ = applied(.setHappiness(10), in: lobby)
        let events = flushedBatch()?.commits.first?.events ?? []
        XCTAssertEqual(events.map(\.dragonStatus), ["forward, (x,y) = (20, 10)", "forward, (x,y) = (20, 10)"])
    }

    // MARK: the store failing

    func testAFailedWriteRefusesItsIntentsAndThoseAppliedOnTop() {
        let lobby = room("lobby")
        _ = applied(.setHappiness(60), in: lobby, id: "sent")
        guard let batch = flushedBatch() else { return }
        _ = applied(.setHappiness(61), in: lobby, id: "onTop")
        let actions = finished(batch, .failure(diskFull))
        XCTAssertEqual(describe(actions), ["recorded [\"lobby\"]", "note failed, logged", "rollback lobby",
                                           "refuse sent unavailable", "refuse onTop unavailable", "flush", "batchFinished"])
        if case .refuse(_, let error) = actions[3] {
            XCTAssertEqual(error.message, "the change could not be recorded (disk full); nothing was applied")
        }
        XCTAssertFalse(machine.storeHealthy)
        XCTAssertTrue(machine.isIdle)
    }

    func testWhileTheStoreIsAwayOneBatchProbesAndTheRestAreRefusedAtOnce() {
        let lobby = room("lobby")
        _ = applied(.setHappiness(60), in: lobby)
        guard let failing = flushedBatch() else { return }
        _ = finished(failing, .failure(diskFull))
        XCTAssertNil(machine.refusal(intentID: "x"), "nothing in flight: the next intent finds out")
        _ = applied(.setHappiness(61), in: lobby)
        guard let probe = flushedBatch() else { return }
        XCTAssertEqual(machine.refusal(intentID: "x")?.message,
                       "the change could not be recorded (disk full); nothing was applied")
        XCTAssertEqual(machine.refusal(intentID: "x")?.id, "x")

        XCTAssertEqual(describe(finished(probe, .success([]))).prefix(2), ["recorded [\"lobby\"]", "note recovered"])
        XCTAssertTrue(machine.storeHealthy)
        XCTAssertNil(machine.refusal(intentID: "x"))
    }

    func testFailuresAreLoggedAtMostOnceInTenSeconds() {
        let lobby = room("lobby")
        var logged: [Bool] = []
        for step in [0.0, 4, 4, 4] {
            now += step
            _ = applied(.nudgeHappiness(1), in: lobby)
            guard let batch = flushedBatch() else { return }
            for action in finished(batch, .failure(diskFull)) {
                if case .note(.storeFailed(_, let log)) = action { logged.append(log) }
            }
        }
        XCTAssertEqual(logged, [true, false, false, true], "at 0 s, and again once 10 s have passed")
    }

    func testAReadAnswerRecoversAnIdleStore() {
        let lobby = room("lobby")
        _ = applied(.setHappiness(60), in: lobby)
        guard let batch = flushedBatch() else { return }
        _ = finished(batch, .failure(diskFull))
        XCTAssertEqual(describe(machine.storeAnswered()), ["note recovered"])
        XCTAssertTrue(machine.storeHealthy)
        XCTAssertTrue(machine.storeAnswered().isEmpty, "already healthy")
    }

    // MARK: in doubt

    func testAWriteWithoutAnAnswerIsSentAgainAndItsIntentsWait() {
        let lobby = room("lobby")
        _ = applied(.setHappiness(60), in: lobby, id: "sent")
        guard let batch = flushedBatch() else { return }
        let actions = finished(batch, .failure(noAnswer))
        XCTAssertEqual(describe(actions), ["note in doubt 1", "record [\"lobby\"] after 0.5"])
        if case .record(let resent, _) = actions.last { XCTAssertEqual(resent.id, batch.id, "the same commits, same tokens") }
        XCTAssertFalse(machine.storeHealthy)
        XCTAssertEqual(machine.refusal(intentID: nil)?.message,
                       "the change could not be recorded (earlier changes are not confirmed by the store yet); nothing was applied")
    }

    func testIntentsAppliedOnTopOfADoubtfulWriteAreRefusedAndRolledBackOnceSettled() {
        let lobby = room("lobby")
        _ = applied(.setHappiness(60), in: lobby, id: "sent")
        guard let batch = flushedBatch() else { return }
        _ = applied(.setHappiness(61), in: lobby, id: "onTop")
        XCTAssertEqual(describe(finished(batch, .failure(noAnswer))),
                       ["note in doubt 1", "refuse onTop unavailable", "record [\"lobby\"] after 0.5"])
        now += 2
        let settled = finished(batch, .success([]))
        XCTAssertEqual(describe(settled), ["note resolved after 2.0", "recorded [\"lobby\"]", "note recovered",
                                           "deliver sent", "delivered 1", "rollback lobby", "flush", "batchFinished"])
    }

    func testAnyFailureWhileInDoubtStaysInDoubt() {
        let lobby = room("lobby")
        _ = applied(.setHappiness(60), in: lobby, id: "sent")
        guard let batch = flushedBatch() else { return }
        _ = finished(batch, .failure(noAnswer))
        now += 0.5
        XCTAssertEqual(describe(finished(batch, .failure(diskFull))), ["record [\"lobby\"] after 0.5"],
                       "a plain failure of a resend says nothing of the first send")
        XCTAssertFalse(machine.isIdle)
    }

    func testHealthNamesDoubtSlownessAndFailure() {
        let lobby = room("lobby")
        XCTAssertEqual(machine.healthProblems(now: now, storeKind: "redis"), [])
        _ = applied(.setHappiness(60), in: lobby)
        guard let batch = flushedBatch() else { return }
        XCTAssertEqual(machine.healthProblems(now: now + 0.9, storeKind: "redis"), [], "not slow yet")
        XCTAssertEqual(machine.healthProblems(now: now + 1.25, storeKind: "redis"),
                       ["store redis: a commit has waited 1.3 s for an answer"])
        _ = finished(batch, .failure(noAnswer))
        XCTAssertEqual(machine.healthProblems(now: now + 3, storeKind: "redis"),
                       ["commits in doubt for 3.0 s: 1 intent sent to the redis store without an answer, resent until it "
                        + "answers (timed out after sending)"])
        _ = finished(batch, .success([]))
        XCTAssertEqual(machine.healthProblems(now: now, storeKind: "redis"), [])
    }

    // MARK: conflicts (another node recorded first)

    func testAConflictCatchesTheRoomUpAndAppliesItsIntentsAgain() {
        let north = room("north"), south = room("south")
        _ = applied(.setHappiness(60), in: north, id: "n1")
        _ = applied(.setHappiness(61), in: south, id: "s1")
        guard let batch = flushedBatch() else { return }
        _ = applied(.setHappiness(62), in: north, id: "n2")
        _ = applied(.setHappiness(63), in: south, id: "s2")
        let stored = StoredRoom(name: "north", epoch: "e1", seq: 4, scene: .standard, history: [])
        let actions = finished(batch, .success([CommitConflict(room: "north", current: stored)]))
        XCTAssertEqual(describe(actions), ["recorded [\"north\", \"south\"]", "deliver s1", "delivered 1", "note conflict",
                                           "catchUp north base 0 reapply [\"n1\", \"n2\"]", "flush", "batchFinished"])
        guard case .catchUp(_, let current, _, _) = actions[4] else { return XCTFail("no catch-up") }
        XCTAssertEqual(current?.seq, 4)
        XCTAssertEqual(machine.pipeline.open.compactMap(\.intent.id), ["s2"], "other rooms' open intents stay")
    }

    func testRoomsAreToldApartByNameNotByObject() {
        // One room held by two runtimes: dropped from memory and loaded again while its intents waited.
        let first = room("lobby"), again = room("lobby")
        _ = applied(.setHappiness(60), in: first, id: "a")
        _ = applied(.setHappiness(61), in: again, id: "b")
        guard let batch = flushedBatch() else { return }
        XCTAssertEqual(batch.commits.map(\.room), ["lobby"])
        XCTAssertEqual(describe(finished(batch, .failure(diskFull))),
                       ["recorded [\"lobby\"]", "note failed, logged", "rollback lobby", "refuse a unavailable",
                        "refuse b unavailable", "flush", "batchFinished"])

        machine = CommitMachine()
        _ = applied(.setHappiness(62), in: first, id: "c")
        _ = applied(.setHappiness(63), in: again, id: "d")
        guard let conflicted = flushedBatch() else { return }
        let stored = StoredRoom(name: "lobby", epoch: "e1", seq: 9, scene: .standard, history: [])
        XCTAssertEqual(describe(finished(conflicted, .success([CommitConflict(room: "lobby", current: stored)]))),
                       ["recorded [\"lobby\"]", "delivered 0", "note conflict",
                        "catchUp lobby base 2 reapply [\"c\", \"d\"]", "flush", "batchFinished"])
    }

    func testAConflictOnACreationCatchesUpWithNothingToReapply() {
        let lobby = room("lobby")
        machine.created(RoomCommit(room: "lobby", epoch: "mine", baseSeq: 0, seq: 0, scene: .standard, events: []), of: lobby)
        guard let batch = flushedBatch() else { return }
        let theirs = StoredRoom(name: "lobby", epoch: "theirs", seq: 0, scene: .standard, history: [])
        XCTAssertEqual(describe(finished(batch, .success([CommitConflict(room: "lobby", current: theirs)]))),
                       ["recorded [\"lobby\"]", "delivered 0", "note conflict", "catchUp lobby base 0 reapply []",
                        "flush", "batchFinished"])
    }

    func testAnAnswerForAnotherBatchIsIgnored() {
        let lobby = room("lobby")
        _ = applied(.setHappiness(60), in: lobby)
        guard let batch = flushedBatch() else { return }
        XCTAssertEqual(describe(machine.commitFinished(batch: batch.id + 7, result: .success([]), seconds: 0, now: now)),
                       ["flush", "batchFinished"])
        XCTAssertTrue(machine.hasBatchInFlight, "the real batch still waits")
    }
}
