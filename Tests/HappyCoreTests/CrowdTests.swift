import XCTest
import HappyCore

/// The crowd pieces of the core (PROTOCOL.md section 12): the tick summary,
/// presence batches, their encoding and decoding, and the crowd keys.
final class CrowdTests: XCTestCase {
    private let alice = Participant(id: "c1", name: "alice")
    private let bob = Participant(id: "c2", name: "bob")
    private let reducer = SceneReducer(rules: SceneRules())

    private func room() -> Room<String> {
        Room(name: "lobby", epoch: "e1", snapshot: RoomSnapshot(seq: 0, scene: .standard), historyCapacity: 10)
    }

    private func event(_ action: Action, in room: inout Room<String>, by sender: Participant, votes: VoteTally? = nil) -> RoomEvent {
        let event = room.apply(action, sender: sender, time: 1000, reducer: reducer, votes: votes).event!
        room.commit(event, historyElement: "")
        return event
    }

    func testATickCountsNamesKeepsRecentSendersAndNetsItsChanges() {
        var room = room()
        var tick = TickSummary(room: "lobby", after: 0, state: .standard)
        XCTAssertTrue(tick.isEmpty)
        tick.add(event(.dragonForward, in: &room, by: alice))
        tick.add(event(.setHappiness(60), in: &room, by: bob))
        tick.add(event(.setHappiness(50), in: &room, by: alice))
        tick.add(event(.dragonForward, in: &room, by: bob))
        XCTAssertEqual(tick.from, 1)
        XCTAssertEqual(tick.seq, 4)
        XCTAssertEqual(tick.eventCount, 4)
        XCTAssertEqual(tick.names.map(\.name), ["forwardButtonClicked:", "faceView:didChangeHappiness:"])
        XCTAssertEqual(tick.names.map(\.count), [2, 2])
        XCTAssertEqual(tick.senders, [bob, alice], "most recent first, each once")
        XCTAssertEqual(tick.senderCount, 2)
        XCTAssertEqual(tick.netChanges.map(\.path), [.dragonX], "happiness ended where it started")
        XCTAssertEqual(tick.netChanges.first?.from, .number(10))
        XCTAssertEqual(tick.netChanges.first?.to, .number(30))
        XCTAssertEqual(tick.state.dragon.x, 30)
    }

    func testSendersStopAtEightButAllAreCounted() {
        var room = room()
        var tick = TickSummary(room: "lobby", after: 0, state: .standard)
        for index in 0..<12 { tick.add(event(.nudgeHappiness(1), in: &room, by: Participant(id: "c\(index)", name: "p\(index)"))) }
        XCTAssertEqual(tick.senders.count, TickSummary.senderLimit)
        XCTAssertEqual(tick.senders.first?.name, "p11")
        XCTAssertEqual(tick.senderCount, 12)
    }

    func testATickFollowedByTheNextIsOneTickForBoth() {
        var room = room()
        var first = TickSummary(room: "lobby", after: 0, state: .standard)
        first.add(event(.setHappiness(70), in: &room, by: alice))
        var second = TickSummary(room: "lobby", after: 1, state: room.committed.scene)
        second.add(event(.setHappiness(50), in: &room, by: bob))
        second.presence = PresenceBatch(count: 3, joined: [bob], joinedCount: 1)
        first.append(second)
        XCTAssertEqual(first.from, 1)
        XCTAssertEqual(first.seq, 2)
        XCTAssertEqual(first.names.first?.count, 2)
        XCTAssertEqual(first.senders, [bob, alice])
        XCTAssertTrue(first.netChanges.filter { $0.path == .faceHappiness }.isEmpty, "70 and back to 50")
        XCTAssertEqual(first.presence?.joinedCount, 1)
    }

    func testVotedEventsSumTheirVotesAndNameTheirVoters() {
        var room = room()
        var tick = TickSummary(room: "lobby", after: 0, state: .standard)
        tick.add(event(.dragonForward, in: &room, by: Participant(id: "", name: ""),
                       votes: VoteTally(forward: 41, back: 19, voters: [alice, bob],
                                         voterIDs: Set(["c1", "c2"] + (3...60).map { "c\($0)" }))))
        XCTAssertEqual(tick.votes?.forward, 41)
        XCTAssertEqual(tick.votes?.back, 19)
        XCTAssertEqual(tick.senders, [alice, bob])
        XCTAssertEqual(tick.senderCount, 60)
    }

    func testAVoterInTwoRoundsAndAnEventOfItsOwnIsOneSender() {
        var room = room()
        let carol = Participant(id: "c3", name: "carol")
        let nobody = Participant(id: "", name: "")
        var tick = TickSummary(room: "lobby", after: 0, state: .standard)
        tick.add(event(.dragonForward, in: &room, by: nobody,
                       votes: VoteTally(forward: 2, back: 0, voters: [alice, bob], voterIDs: ["c1", "c2"])))
        tick.add(event(.setHappiness(70), in: &room, by: alice))
        var later = TickSummary(room: "lobby", after: 2, state: room.committed.scene)
        later.add(event(.dragonBack, in: &room, by: nobody,
                        votes: VoteTally(forward: 0, back: 2, voters: [carol, bob], voterIDs: ["c2", "c3"])))
        tick.append(later)
        XCTAssertEqual(tick.senderCount, 3, "alice, bob and carol, however often each sent")
        XCTAssertEqual(tick.votes?.forward, 2)
        XCTAssertEqual(tick.votes?.back, 2)
    }

    func testPresenceBatchesNameAtMostFiftyAndCountAll() {
        var batch = PresenceBatch(count: 0)
        for index in 0..<70 { batch.join(Participant(id: "j\(index)", name: "n"), named: true) }
        batch.leave(alice, named: false)
        XCTAssertEqual(batch.joined.count, PresenceBatch.listLimit)
        XCTAssertEqual(batch.joinedCount, 70)
        XCTAssertEqual(batch.left, [], "past presenceBroadcastMax only counted")
        XCTAssertEqual(batch.leftCount, 1)
    }

    func testTicksAndBatchesDecodeAsTheyWereEncoded() throws {
        var room = room()
        var tick = TickSummary(room: "lobby", after: 0, state: .standard)
        tick.add(event(.dragonForward, in: &room, by: alice))
        tick.time = 1_764_460_000_456
        tick.presence = PresenceBatch(count: 5234, joined: [bob], left: [], joinedCount: 120, leftCount: 33)
        let text = String(decoding: ServerMessageEncoder.tick(tick), as: UTF8.self)
        guard case .tick(let decoded)? = ServerMessage.decode(text)?.0 else { return XCTFail("not a tick: \(text)") }
        XCTAssertEqual(decoded.from, 1)
        XCTAssertEqual(decoded.seq, 1)
        XCTAssertEqual(decoded.time, 1_764_460_000_456)
        XCTAssertEqual(decoded.names.first?.name, "forwardButtonClicked:")
        XCTAssertEqual(decoded.senders, [alice])
        XCTAssertEqual(decoded.changes.map(\.path), ["dragon.x"])
        XCTAssertEqual(decoded.presence, tick.presence)
        XCTAssertEqual(decoded.state, room.committed.scene)

        let delivery = String(decoding: ServerMessageEncoder.delivery(.tick, tickMs: 50), as: UTF8.self)
        XCTAssertEqual(delivery, #"{"type":"delivery","mode":"tick","tickMs":50}"#)
        let batch = String(decoding: ServerMessageEncoder.presence(batch: PresenceBatch(count: 2, joined: [alice],
                                                                                        joinedCount: 1)), as: UTF8.self)
        guard case .presenceBatch(let decodedBatch)? = ServerMessage.decode(batch)?.0 else { return XCTFail(batch) }
        XCTAssertEqual(decodedBatch.count, 2)
        XCTAssertEqual(decodedBatch.joined, [alice])
    }

    func testAVotedEventHasNoSenderAndCarriesItsVotes() throws {
        var room = room()
        let voted = event(.dragonBack, in: &room, by: Participant(id: "", name: ""), votes: VoteTally(forward: 3, back: 5))
        let text = String(decoding: ServerMessageEncoder.event(voted), as: UTF8.self)
        XCTAssertTrue(text.contains(#""sender":null"#), text)
        XCTAssertTrue(text.contains(#""votes":{"forward":3,"back":5}"#), text)
        let again = try XCTUnwrap(RoomEvent(json: Array(text.utf8)))
        XCTAssertEqual(again.votes?.forward, 3)
        XCTAssertEqual(again.changes, voted.changes, "read back from another node's JSON")
    }

    func testTheCrowdKeys() throws {
        let config = try HappyConfig.parse(#"{ "crowd": { "mode": "tick", "tickMs": 100, "tickAbove": 500, "presenceBatchAbove": 10, "dragon": "vote" } }"#)
        XCTAssertEqual(config.crowd.mode, .tick)
        XCTAssertEqual(config.crowd.tickMs, 100)
        XCTAssertEqual(config.crowd.tickAbove, 500)
        XCTAssertEqual(config.crowd.presenceBatchAbove, 10)
        XCTAssertEqual(config.crowd.dragon, .vote)
        let defaults = HappyConfig().crowd
        XCTAssertEqual([defaults.tickMs, defaults.tickAbove, defaults.presenceBatchAbove], [50, 20_000, 100])
        XCTAssertEqual(defaults.mode, .auto)
        XCTAssertEqual(defaults.dragon, .each)
        for (text, expected) in [(#"{ "crowd": { "tickMs": 2000 } }"#, "crowd.tickMs must be between 10 and 1000"),
                                 (#"{ "crowd": { "mode": 1 } }"#, "crowd.mode must be one of"),
                                 (#"{ "crowd": { "presenceBatchAbove": -1 } }"#, "crowd.presenceBatchAbove must not be negative"),
                                 (#"{ "crowd": { "tickWritesPerSecond": 10 } }"#, "crowd.tickWritesPerSecond must be 0")] {
            XCTAssertThrowsError(try HappyConfig.parse(text)) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(text): \(error)")
            }
        }
    }

    func testABigRoomsTickGrowsWithItsClientsWithinTheWriteBudget() {
        var crowd = HappyConfig().crowd
        XCTAssertEqual(crowd.tickWritesPerSecond, 100_000)
        XCTAssertEqual(crowd.tickMilliseconds(clients: 10), 50)
        XCTAssertEqual(crowd.tickMilliseconds(clients: 5000), 50, "5000 clients at 20 ticks a second: within budget")
        XCTAssertEqual(crowd.tickMilliseconds(clients: 5001), 60, "in steps of 10 ms")
        XCTAssertEqual(crowd.tickMilliseconds(clients: 10_000), 100)
        XCTAssertEqual(crowd.tickMilliseconds(clients: 1_000_000), 1000, "never past a second")
        crowd.tickWritesPerSecond = 0
        XCTAssertEqual(crowd.tickMilliseconds(clients: 1_000_000), 50, "0: always tickMs")
    }
}
