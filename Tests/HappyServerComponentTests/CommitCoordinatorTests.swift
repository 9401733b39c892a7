import HappyCore
@testable import HappyServer
import XCTest

/// Group commit against a store on its own thread: one store call per loop
/// turn, events and acks only after it returns, failures answered and
/// rolled back, `/healthz` following the store's health.
final class CommitCoordinatorTests: XCTestCase {
    private let diskFull = StoreError(.io, "disk full")

    /// A server on an asynchronous store, with `room` loaded and its creation recorded.
    private func serverWithRoom(_ store: ScriptedStore, rooms: [String] = ["lobby"])
        -> (TestServer, [TestClient]) {
        let test = TestServer(store: store)
        var clients: [TestClient] = []
        for room in rooms {
            let client = test.connect(room: room)
            test.waitUntil("the welcome in \(room)") { test.types(of: client) == ["welcome"] }
            clients.append(client)
        }
        settle(test)
        return (test, clients)
    }

    /// Ends the loop turn and waits until nothing applied waits for the store.
    private func settle(_ test: TestServer, file: StaticString = #filePath, line: UInt = #line) {
        test.turn()
        test.waitUntil("the group commit", file: file, line: line) { test.server.coordinator.isIdle }
    }

    func testNewRoomIsRecordedWithItsEpoch() {
        let store = ScriptedStore(synchronous: false)
        let (test, _) = serverWithRoom(store)
        let epoch = test.server.directory["lobby"]?.room?.epoch

        XCTAssertEqual(store.commitCalls.count, 1)
        XCTAssertEqual(store.commitCalls.first?.first?.room, "lobby")
        XCTAssertEqual(store.commitCalls.first?.first?.seq, 0)
        XCTAssertEqual(store.stored("lobby")?.epoch, epoch)
        XCTAssertFalse(test.server.directory["lobby"]!.commits.creationPending)
    }

    func testIntentsOfOneTurnAreRecordedInOneCommit() {
        let store = ScriptedStore(synchronous: false, keepsHistory: true)
        let (test, clients) = serverWithRoom(store)
        let client = clients[0]
        for (index, value) in [60, 70, 80].enumerated() {
            test.sendIntent(client, "face.setHappiness", id: "g\(index)", #""value":\#(value)"#)
        }
        XCTAssertEqual(store.commitCalls.count, 1, "nothing is written before the turn ends")
        settle(test)

        XCTAssertEqual(store.commitCalls.count, 2)
        let commit = store.commitCalls.last
        XCTAssertEqual(commit?.count, 1, "one room, one commit")
        XCTAssertEqual(commit?.first?.baseSeq, 0)
        XCTAssertEqual(commit?.first?.seq, 3)
        XCTAssertEqual(commit?.first?.events.map(\.seq), [1, 2, 3])
        XCTAssertEqual(commit?.first?.scene.face.happiness, 80)
        XCTAssertEqual(test.messages(of: client).map { $0["type"]?.stringValue },
                       ["event", "ack", "event", "ack", "event", "ack"])
    }

    func testIntentsInSeveralRoomsShareOneStoreCall() {
        let store = ScriptedStore(synchronous: false)
        let (test, clients) = serverWithRoom(store, rooms: ["north", "south"])
        test.sendIntent(clients[0], "face.setHappiness", #""value":60"#)
        test.sendIntent(clients[1], "heart.setRate", #""value":0.25"#)
        let callsBefore = store.commitCalls.count
        settle(test)

        XCTAssertEqual(store.commitCalls.count, callsBefore + 1)
        XCTAssertEqual(store.commitCalls.last?.map(\.room), ["north", "south"])
    }

    func testEventsAndAcksWaitForTheStore() {
        let store = ScriptedStore(synchronous: false)
        let (test, clients) = serverWithRoom(store)
        let client = clients[0]
        let other = test.connect()
        test.waitUntil("the second welcome") { !test.messages(of: other).isEmpty }
        _ = test.messages(of: client)

        test.sendIntent(client, "face.setHappiness", id: "w1", #""value":60"#)
        test.turn()  // the commit starts on the store thread; its answer waits in the inbox
        XCTAssertTrue(test.messages(of: client).isEmpty, "no ack before the commit returns")
        XCTAssertTrue(test.messages(of: other).isEmpty, "no event before the commit returns")
        XCTAssertEqual(test.server.directory["lobby"]?.room?.committed.seq, 0)

        test.waitUntil("the commit") { test.server.coordinator.isIdle }
        XCTAssertEqual(test.messages(of: client).map { $0["type"]?.stringValue }, ["event", "ack"])
        XCTAssertEqual(test.messages(of: other).first?["seq"]?.intValue, 1)
        XCTAssertEqual(test.server.directory["lobby"]?.room?.committed.seq, 1)
    }

    func testStoreFailureRefusesEveryIntentOfTheBatchAndRollsBack() {
        let store = ScriptedStore(synchronous: false)
        let (test, clients) = serverWithRoom(store)
        let client = clients[0]
        store.failWrites(with: diskFull)
        test.sendIntent(client, "face.setHappiness", id: "f1", #""value":60"#)
        test.sendIntent(client, "face.setHappiness", id: "f2", #""value":70"#)
        settle(test)

        let answers = test.messages(of: client)
        XCTAssertEqual(answers.map { $0["code"]?.stringValue }, ["unavailable", "unavailable"])
        XCTAssertEqual(answers.map { $0["id"]?.stringValue }, ["f1", "f2"])
        XCTAssertEqual(answers.first?["message"]?.stringValue,
                       "the change could not be recorded (disk full); nothing was applied")
        let room = test.server.directory["lobby"]?.room
        XCTAssertEqual(room?.committed.seq, 0)
        XCTAssertEqual(room?.committed.scene.face.happiness, 50, "the working state was rolled back")
        XCTAssertFalse(test.server.coordinator.storeHealthy)
        XCTAssertEqual(test.metrics.storeFailures, 1)
        XCTAssertEqual(test.metrics.intentErrors["unavailable"], 2)
        XCTAssertEqual(client.connection.commits.pending, 0)

        let health = test.request("GET", "/healthz")
        XCTAssertEqual(health.status, 503)
        XCTAssertEqual(health.text, "unavailable: store scripted: disk full")
    }

    func testRecoveryTakesIntentsAgainAndHealthzIsOK() {
        let store = ScriptedStore(synchronous: false)
        let (test, clients) = serverWithRoom(store)
        let client = clients[0]
        store.failWrites(with: diskFull)
        test.sendIntent(client, "face.setHappiness", id: "lost", #""value":60"#)
        settle(test)
        _ = test.messages(of: client)

        store.failWrites(with: nil)
        test.sendIntent(client, "face.setHappiness", id: "kept", #""value":65"#)
        settle(test)

        let answers = test.messages(of: client)
        XCTAssertEqual(answers.map { $0["type"]?.stringValue }, ["event", "ack"])
        XCTAssertEqual(answers.first?["seq"]?.intValue, 1, "the failed intent left no gap")
        XCTAssertEqual(answers.last?["id"]?.stringValue, "kept")
        XCTAssertTrue(test.server.coordinator.storeHealthy)
        XCTAssertEqual(store.stored("lobby")?.seq, 1)
        XCTAssertEqual(store.stored("lobby")?.scene.face.happiness, 65)
        let health = test.request("GET", "/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.text, "ok")
    }

    func testSynchronousStoreRecordsEachIntentAtOnce() {
        let store = ScriptedStore(synchronous: true)
        let test = TestServer(store: store)
        let client = test.joined()
        test.sendIntent(client, "face.setHappiness", #""value":60"#)
        test.sendIntent(client, "face.setHappiness", #""value":70"#)

        // The room's creation went with the first intent; no loop turn was needed.
        XCTAssertEqual(store.commitCalls.map { $0.map(\.seq) }, [[0, 1], [2]])
        XCTAssertEqual(test.types(of: client), ["event", "ack", "event", "ack"])
    }

    func testRoomFromTheStoreKeepsItsEpochAndSeq() {
        let store = ScriptedStore(synchronous: true)
        var scene = TestServer.config().sceneRules.defaults
        scene.face.happiness = 33
        store.seed(StoredRoom(name: "kept", epoch: "epoch-7", seq: 7, scene: scene, history: []))
        let test = TestServer(store: store)
        let client = test.connect(room: "kept")
        let welcome = test.messages(of: client).first

        XCTAssertEqual(welcome?["epoch"]?.stringValue, "epoch-7")
        XCTAssertEqual(welcome?["seq"]?.intValue, 7)
        XCTAssertEqual(welcome?["state"]?["face"]?["happiness"]?.intValue, 33)
        test.sendIntent(client, "face.setHappiness", #""value":34"#)
        XCTAssertEqual(store.commitCalls.last?.first?.baseSeq, 7)
        XCTAssertEqual(store.commitCalls.last?.first?.seq, 8)
        XCTAssertEqual(store.commitCalls.last?.first?.epoch, "epoch-7")
    }

    func testShutdownClosesClientsOnlyAfterTheCommitInFlight() {
        let stepped = SteppedStore(ScriptedStore(synchronous: false))
        let test = TestServer(stepped: stepped)
        let client = test.connect()
        stepped.runAll()
        XCTAssertEqual(test.types(of: client), ["welcome"])
        test.sendIntent(client, "face.setHappiness", id: "last", #""value":60"#)
        test.turn()  // in flight
        XCTAssertEqual(stepped.pending, [.commit(["lobby", "lobby"])], "the room's creation and the intent, in one batch")
        test.server.beginShutdown(signal: 0)
        test.turn()
        test.pump(client)
        XCTAssertNil(client.closeFrame, "the intent in flight is answered first")

        stepped.runAll()
        test.turn()
        test.pump(client)
        let frames = client.transport.frames.dropFirst()
        XCTAssertEqual(frames.map { $0.json?["type"]?.stringValue ?? ($0.isClose ? "close" : "?") },
                       ["event", "ack", "close"])
        XCTAssertEqual(client.closeFrame?.closeCode, 1001)
    }

    func testHTTPIntentIsAnsweredAfterTheCommit() {
        let store = ScriptedStore(synchronous: false)
        let (test, _) = serverWithRoom(store)
        let post = test.request("POST", "/api/intent", body: #"{"id":"h1","action":"face.setHappiness","value":61}"#)
        XCTAssertNil(post.status, "no answer before the commit")
        test.turn()
        test.finish(post)

        XCTAssertEqual(post.status, 200)
        XCTAssertEqual(post.json?["type"]?.stringValue, "ack")
        XCTAssertEqual(post.json?["id"]?.stringValue, "h1")
        XCTAssertEqual(store.stored("lobby")?.scene.face.happiness, 61)
    }

    // MARK: step by step (the store worker run by the test)

    /// A server whose store calls wait for the test, with `lobby` loaded and recorded.
    private func steppedServer() -> (TestServer, SteppedStore, ScriptedStore, TestClient) {
        let store = ScriptedStore(synchronous: false)
        let stepped = SteppedStore(store)
        let test = TestServer(stepped: stepped)
        let client = test.connect()
        stepped.runAll()
        test.turn()
        stepped.runAll()
        XCTAssertEqual(test.types(of: client), ["welcome"])
        return (test, stepped, store, client)
    }

    func testADoubtfulWriteIsResentUntilAnsweredAndOnlyThenAcked() {
        let (test, stepped, store, client) = steppedServer()
        store.failWrites(with: StoreError(.inDoubt, "no answer after sending"))
        test.sendIntent(client, "face.setHappiness", id: "wait", #""value":77"#)
        test.turn()
        stepped.runNext()
        XCTAssertEqual(stepped.jobs.map(\.delay), [CommitMachine.inDoubtRetrySeconds], "sent again, after a pause")
        XCTAssertEqual(test.messages(of: client), [], "neither ack nor refusal while in doubt")
        test.advance(by: 4)
        XCTAssertTrue(test.request("GET", "/healthz").text.hasPrefix("unavailable: commits in doubt for 4.0 s"))

        store.failWrites(with: nil)
        stepped.runAll()
        test.turn()
        XCTAssertEqual(test.messages(of: client).map { $0["type"]?.stringValue }, ["event", "ack"])
        XCTAssertEqual(test.request("GET", "/healthz").text, "ok")
        XCTAssertEqual(store.stored("lobby")?.scene.face.happiness, 77)
    }

    func testWhileTheStoreIsAwayIntentsAreRefusedAtOnceAndItsReturnIsNoticed() {
        let (test, stepped, store, client) = steppedServer()
        store.failWrites(with: StoreError(.unreachable, "connection refused"))
        test.sendIntent(client, "face.setHappiness", id: "lost", #""value":60"#)
        test.turn()
        stepped.runAll()
        XCTAssertEqual(test.messages(of: client).first?["code"]?.stringValue, "unavailable")
        test.sendIntent(client, "face.setHappiness", id: "probe", #""value":61"#)
        test.turn()  // one batch finds out whether the store is back
        test.sendIntent(client, "face.setHappiness", id: "meanwhile", #""value":62"#)
        let refused = test.messages(of: client)
        XCTAssertEqual(refused.map { $0["id"]?.stringValue }, ["meanwhile"], "refused at once, not queued")

        store.failWrites(with: nil)
        stepped.runAll()
        test.turn()
        XCTAssertEqual(test.messages(of: client).map { $0["type"]?.stringValue }, ["event", "ack"])
        XCTAssertTrue(test.server.coordinator.storeHealthy)
    }

    func testWorkWaitingForTheBatchInFlightRunsOnceItIsAnswered() {
        let (test, stepped, _, client) = steppedServer()
        var ran = 0
        test.server.coordinator.whenBatchFinishes { ran += 1 }
        XCTAssertEqual(ran, 1, "nothing in flight: at once")
        test.sendIntent(client, "face.setHappiness", #""value":60"#)
        test.turn()
        test.server.coordinator.whenBatchFinishes { ran += 1 }
        XCTAssertEqual(ran, 1)
        stepped.runAll()
        XCTAssertEqual(ran, 2)
    }
}
