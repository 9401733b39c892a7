import HappyCore
@testable import HappyServer
import XCTest

/// A cluster node in-process: the bus is a fake the test publishes on as
/// other nodes would, and store calls run when the test says, so every
/// path of `ClusterLink` and `RoomCatchUp` runs in a fixed order.
final class ClusterLinkTests: XCTestCase {
    private var store: ScriptedStore!
    private var stepped: SteppedStore!
    private var bus: FakeClusterBus!
    private var test: TestServer!
    private let bob = Participant(id: "c1-n2", name: "bob")

    override func setUp() {
        store = ScriptedStore(synchronous: false, keepsHistory: true)
        stepped = SteppedStore(store)
        bus = FakeClusterBus(nodeID: "n1")
        test = TestServer(stepped: stepped, clusterBus: bus)
    }

    /// Runs the store calls and the inbox until both are quiet.
    private func settle() {
        for _ in 0..<20 {
            stepped.runAll()
            test.turn()
            if stepped.jobs.isEmpty { return }
        }
    }

    /// A client welcomed in `room`, whose remote members are `remote`.
    private func joined(_ room: String = "lobby", name: String = "alice", remote: [Participant] = []) -> TestClient {
        let client = test.connect(room: room, name: name)
        settle()
        bus.publish(.members(room: room, remote))
        settle()
        XCTAssertEqual(test.types(of: client).first, "welcome")
        return client
    }

    /// An event as another node encodes and stores it.
    private func remoteEvent(_ action: Action, seq: UInt64, from scene: Scene = .standard,
                             room: String = "lobby") -> (event: StoredEvent, scene: Scene) {
        var state = scene
        let outcome = SceneReducer(rules: SceneRules()).apply(action, to: &state)
        let event = RoomEvent(seq: seq, time: 1_764_460_000_000, room: room, name: outcome.eventName!, sender: bob,
                              changes: outcome.changes, state: state)
        return (StoredEvent(seq: seq, json: ServerMessageEncoder.event(event)), state)
    }

    private func epoch(_ room: String = "lobby") -> String { test.server.directory[room]!.room!.epoch }

    // MARK: presence

    func testNobodyIsWelcomedBeforeTheRoomsRemotePresenceIsKnown() {
        let client = test.connect(room: "lobby", name: "alice")
        settle()
        XCTAssertEqual(bus.watched, ["lobby"])
        XCTAssertEqual(test.types(of: client), [], "the room is loaded, its other nodes unheard")

        bus.publish(.members(room: "lobby", [bob]))
        settle()
        let welcome = test.messages(of: client).first
        XCTAssertEqual(welcome?["type"]?.stringValue, "welcome")
        XCTAssertEqual(welcome?["presenceCount"]?.intValue, 2)
        XCTAssertEqual(welcome?["presence"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["alice", "bob"])
    }

    func testRemoteJoinsAndLeavesReachLocalClientsOnce() {
        let client = joined()
        bus.publish(.joined(room: "lobby", bob))
        bus.publish(.joined(room: "lobby", bob))
        settle()
        XCTAssertEqual(test.messages(of: client).map { $0["joined"]?["name"]?.stringValue }, ["bob"], "known once")
        XCTAssertEqual(test.server.directory["lobby"]?.presenceCount, 2)

        bus.publish(.left(room: "lobby", bob))
        bus.publish(.left(room: "lobby", bob))
        settle()
        XCTAssertEqual(test.messages(of: client).map { $0["left"]?["name"]?.stringValue }, ["bob"])
        XCTAssertEqual(test.server.directory["lobby"]?.presenceCount, 1)
    }

    func testJoinsAndLeavesAreAnnouncedToTheOtherNodes() {
        let client = joined(name: "alice")
        test.close(client)
        XCTAssertEqual(bus.announced, ["joined alice lobby", "left alice lobby"])
    }

    // MARK: events from other nodes

    func testEventsThatFollowOnReachClientsAsTheOtherNodeEncodedThem() {
        let client = joined()
        let first = remoteEvent(.dragonForward, seq: 1)
        bus.publish(RemoteEvents(origin: "n2", room: "lobby", epoch: epoch(), seq: 1, scene: first.scene,
                                 events: [first.event]))
        settle()
        let events = test.messages(of: client).ofType("event")
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(test.server.directory["lobby"]?.room?.committed.seq, 1)
        XCTAssertEqual(Array(client.transport.textFrames.last?.payload ?? []), first.event.json, "byte for byte")
        XCTAssertEqual(test.server.directory["lobby"]?.room?.dragonStatus, "forward, (x,y) = (20, 10)")
    }

    func testEventsAfterAGapMakeTheNodeReadTheRoomAgain() {
        let client = joined()
        let one = remoteEvent(.setHappiness(60), seq: 1)
        let two = remoteEvent(.setHappiness(70), seq: 2, from: one.scene)
        store.seed(StoredRoom(name: "lobby", epoch: epoch(), seq: 2, scene: two.scene, history: [one.event, two.event]))
        // The bus missed event 1 (an outage): only 2 arrives.
        bus.publish(RemoteEvents(origin: "n2", room: "lobby", epoch: epoch(), seq: 2, scene: two.scene, events: [two.event]))
        test.turn()
        XCTAssertEqual(stepped.pending, [.load("lobby")], "read again, not resynced")
        settle()
        XCTAssertEqual(test.messages(of: client).ofType("event").compactMap { $0["seq"]?.intValue }, [1, 2])
    }

    func testANewEpochResyncsTheMembers() {
        let client = joined()
        let one = remoteEvent(.setHappiness(90), seq: 1)
        bus.publish(RemoteEvents(origin: "n2", room: "lobby", epoch: "another", seq: 1, scene: one.scene, events: [one.event]))
        settle()
        let resync = test.messages(of: client).ofType("resync").first
        XCTAssertEqual(resync?["epoch"]?.stringValue, "another")
        XCTAssertEqual(resync?["state"]?["face"]?["happiness"]?.intValue, 90)
    }

    func testAfterAnOutageEveryRoomIsReadAgain() {
        _ = joined("north")
        _ = joined("south", name: "bob")
        bus.reconnect()
        test.turn()
        XCTAssertEqual(Set(stepped.pending.map { "\($0)" }), ["load(\"north\")", "load(\"south\")"])
    }

    func testARoomTheStoreLostStartsAgainWithANewEpoch() {
        let client = joined()
        let before = epoch()
        settle()
        store.forget("lobby")
        bus.reconnect()
        settle()
        XCTAssertNotEqual(epoch(), before)
        XCTAssertEqual(test.messages(of: client).ofType("resync").first?["epoch"]?.stringValue, epoch())
        XCTAssertEqual(store.stored("lobby")?.epoch, epoch(), "the new epoch is recorded")
    }

    // MARK: reads and the commit path

    func testAReadWhileAnIntentWaitsForTheStoreIsRepeatedAfterTheBatch() {
        let client = joined()
        settle()
        test.sendIntent(client, "face.setHappiness", id: "mine", #""value":61"#)
        test.turn()  // the batch is in flight
        bus.reconnect()
        test.turn()
        XCTAssertEqual(stepped.pending, [.commit(["lobby"]), .load("lobby")])
        stepped.run(.load("lobby"))  // the read may show the intent's own event
        XCTAssertEqual(stepped.pending, [.commit(["lobby"])], "not taken as another node's event while the intent waits")
        stepped.run(.commit(["lobby"]))
        XCTAssertEqual(stepped.pending, [.load("lobby")], "read again once the intent is settled")
        settle()
        XCTAssertEqual(test.messages(of: client).map { $0["type"]?.stringValue }, ["event", "ack"], "no resync, no repeat")
    }

    func testAFailedReadIsTriedAgainASecondLater() {
        _ = joined()
        settle()
        store.failReads(with: StoreError(.unreachable, "connection refused"))
        bus.reconnect()
        test.turn()
        settle(times: 1)
        XCTAssertEqual(stepped.jobs.map(\.delay), [ClusterLink.refreshRetrySeconds])
        XCTAssertEqual(stepped.pending, [.load("lobby")])
    }

    func testAConflictCatchesUpAndAppliesTheIntentAgainOnTop() {
        let client = joined()
        settle()
        let theirs = remoteEvent(.dragonForward, seq: 1)
        store.anotherNodeRecords(StoredRoom(name: "lobby", epoch: epoch(), seq: 1, scene: theirs.scene,
                                            history: [theirs.event]))
        test.sendIntent(client, "face.setHappiness", id: "mine", #""value":61"#)
        settle()
        let messages = test.messages(of: client)
        XCTAssertEqual(messages.map { $0["type"]?.stringValue }, ["event", "event", "ack"])
        XCTAssertEqual(messages.compactMap { $0["seq"]?.intValue }, [1, 2, 2], "theirs first, mine after with a new seq")
        XCTAssertEqual(test.metrics.commitConflicts, 1)
        XCTAssertEqual(store.stored("lobby")?.seq, 2)
        XCTAssertEqual(test.server.directory["lobby"]?.room?.dragonStatus, "forward, (x,y) = (20, 10)")
    }

    func testTheBusProblemIsNamedOnHealthz() {
        bus.problem = "cluster bus: subscriber disconnected for 2.0 s"
        let health = test.request("GET", "/healthz")
        XCTAssertEqual(health.status, 503)
        XCTAssertEqual(health.text, "unavailable: cluster bus: subscriber disconnected for 2.0 s")
    }
}

private extension ClusterLinkTests {
    func settle(times: Int) {
        for _ in 0..<times {
            stepped.runNext()
            test.turn()
        }
    }
}
