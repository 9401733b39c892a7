import HappyCore
@testable import HappyServer
import XCTest

/// The pipeline of applied intents as a value: batches, commits per room,
/// creations, serials, and taking back what was not sent.
final class CommitPipelineTests: XCTestCase {
    private let reducer = SceneReducer(rules: SceneRules())
    /// Each room's working state, run ahead here as the commit path would run the room's own.
    private var working: [String: Room<OutboundFrame>] = [:]

    private func room(_ name: String, seq: UInt64 = 0) -> RoomRuntime {
        RoomRuntime(name: name, now: 0, logBytes: 1 << 20,
                    room: Room(name: name, epoch: "e-\(name)", snapshot: RoomSnapshot(seq: seq, scene: .standard),
                               historyCapacity: 10))
    }

    private func pending(_ action: Action, in runtime: RoomRuntime, id: String) -> PendingIntent {
        let sender = Participant(id: "c1", name: "alice")
        if working[runtime.name] == nil { working[runtime.name] = runtime.room }
        let applied = working[runtime.name]!.apply(action, sender: sender, time: 0, reducer: reducer)
        let frame = applied.event.map {
            OutboundFrame(encoded: ServerMessageEncoder.event($0, headroom: OutboundFrame.headroom), seq: $0.seq)
        }
        let exchange = HTTPExchange(transport: FakeExchangeTransport(), method: "POST", path: "/", query: [:],
                                    peerAddress: "192.0.2.1", startedAt: 0)
        return PendingIntent(runtime: runtime, reply: .http(exchange), intent: Intent(id: id, action: action),
                             sender: sender, applied: applied, frame: frame)
    }

    func testCommitsFollowEachRoomsEventsAndSkipIntentsWithoutOne() {
        let north = room("north", seq: 4), south = room("south")
        let intents = [pending(.setHappiness(60), in: north, id: "1"), pending(.setRate(0.5), in: south, id: "same"),
                       pending(.setRate(0.2), in: south, id: "2"), pending(.setHappiness(70), in: north, id: "3")]
        let built = CommitPipeline.commits(for: intents, withHistory: true)
        XCTAssertEqual(built.commits.map(\.room), ["north", "south"])
        XCTAssertTrue(built.rooms[0] === north && built.rooms[1] === south)
        XCTAssertEqual(built.commits[0].epoch, "e-north")
        XCTAssertEqual(built.commits[0].baseSeq, 4)
        XCTAssertEqual(built.commits[0].seq, 6)
        XCTAssertEqual(built.commits[0].events.map(\.seq), [5, 6])
        XCTAssertEqual(built.commits[1].events.map(\.seq), [1], "the unchanged rate made no event")
        XCTAssertEqual(built.commits[0].scene.face.happiness, 70)
    }

    func testWithoutHistoryCommitsCarryNoEvents() {
        let lobby = room("lobby")
        let built = CommitPipeline.commits(for: [pending(.setHappiness(60), in: lobby, id: "1")], withHistory: false)
        XCTAssertEqual(built.commits.first?.seq, 1)
        XCTAssertEqual(built.commits.first?.events, [])
    }

    func testABatchTakesCreationsFirstAndNumbersEveryCommit() {
        var pipeline = CommitPipeline()
        let fresh = room("fresh"), lobby = room("lobby")
        pipeline.appendCreation(RoomCommit(room: "fresh", epoch: "e-fresh", baseSeq: 0, seq: 0, scene: .standard,
                                           events: []), of: fresh)
        pipeline.append(pending(.setHappiness(60), in: lobby, id: "1"))
        let first = pipeline.startBatch(withHistory: false)
        XCTAssertEqual(first?.commits.map(\.room), ["fresh", "lobby"])
        XCTAssertEqual(first?.commits.map(\.serial), [1, 2])
        XCTAssertTrue(first?.batchRooms == ["fresh", "lobby"])
        XCTAssertNil(pipeline.startBatch(withHistory: false), "one batch in flight")
        XCTAssertNil(pipeline.finishBatch(id: 99), "not the batch in flight")
        XCTAssertNotNil(pipeline.finishBatch(id: first!.id))
        pipeline.append(pending(.setHappiness(61), in: lobby, id: "2"))
        XCTAssertEqual(pipeline.startBatch(withHistory: false)?.commits.map(\.serial), [3])
    }

    func testTakingOneRoomsOpenIntentsLeavesTheOthersInOrder() {
        var pipeline = CommitPipeline()
        let north = room("north"), south = room("south")
        for (runtime, id) in [(north, "n1"), (south, "s1"), (north, "n2"), (south, "s2")] {
            pipeline.append(pending(.nudgeHappiness(1), in: runtime, id: id))
        }
        XCTAssertEqual(pipeline.takeOpen(ofRoom: "north").compactMap(\.intent.id), ["n1", "n2"])
        XCTAssertEqual(pipeline.open.compactMap(\.intent.id), ["s1", "s2"])
        XCTAssertEqual(pipeline.takeOpen().compactMap(\.intent.id), ["s1", "s2"])
        XCTAssertTrue(pipeline.isIdle)
    }
}

private extension CommitPipeline.Batch {
    var batchRooms: [String] { rooms.map(\.name) }
}
