import HappyCore
@testable import HappyServer
import XCTest

/// Live pointers in-process: one shared batch per room and interval, a copy
/// without their own entry for movers, pacing on the manual clock, the
/// skip-and-catch-up rule for long queues, and the separate rate.
final class PointerServiceTests: XCTestCase {
    private func pointer(_ view: String, _ x: Double, _ y: Double = 0.5, activity: String = "idle") -> String {
        #"{"type":"pointer","view":"\#(view)","x":\#(x),"y":\#(y),"activity":"\#(activity)"}"#
    }

    private func batches(_ harness: TestServer, _ client: TestClient) -> [JSONValue] {
        harness.messages(of: client).filter { $0["type"]?.stringValue == "pointers" }
    }

    private func ids(_ batch: JSONValue?) -> [String] {
        guard case .array(let list)? = batch?["pointers"] else { return [] }
        return list.compactMap { $0["id"]?.stringValue }
    }

    private func goneIDs(_ batch: JSONValue?) -> [String] {
        guard case .array(let list)? = batch?["gone"] else { return [] }
        return list.compactMap(\.stringValue)
    }

    func testOneBatchPerTickAndNeverTheReceiversOwnPointer() {
        let harness = TestServer()
        let (alice, bob, carol) = (harness.joined(name: "alice"), harness.joined(name: "bob"), harness.joined(name: "carol"))
        for client in [alice, bob, carol] { _ = harness.messages(of: client) }
        harness.send(alice, pointer("face", 0.1))
        harness.send(bob, pointer("heart", 0.2))
        harness.server.pointers.tick()

        let toCarol = batches(harness, carol)
        XCTAssertEqual(toCarol.count, 1)
        XCTAssertEqual(ids(toCarol.last), [bob.id, alice.id], "both, the most recently moved first")
        XCTAssertEqual(ids(batches(harness, alice).last), [bob.id])
        XCTAssertEqual(ids(batches(harness, bob).last), [alice.id])
        XCTAssertEqual(harness.metrics.pointerBatches, 1)
        XCTAssertEqual(harness.metrics.pointerMessagesOut, 3)
    }

    func testMovesWithinAnIntervalAreConflatedIntoTheNextBatch() {
        let harness = TestServer(config: TestServer.config { $0.limits.pointerIntervalMs = 100 })
        let (alice, bob) = (harness.joined(name: "alice"), harness.joined(name: "bob"))
        _ = harness.messages(of: bob)
        harness.send(alice, pointer("face", 0.1))
        harness.server.pointers.tick()
        XCTAssertEqual(batches(harness, bob).count, 1)

        for x in [0.2, 0.3, 0.4] { harness.send(alice, pointer("face", x)) }
        harness.advance(by: 0.05)
        harness.server.pointers.tick()
        XCTAssertEqual(batches(harness, bob).count, 0, "not before the interval has passed")
        harness.advance(by: 0.06)
        harness.server.pointers.tick()
        let next = batches(harness, bob)
        XCTAssertEqual(next.count, 1)
        guard case .array(let entries)? = next.first?["pointers"] else { return XCTFail("no entries") }
        XCTAssertEqual(entries.count, 1)
        XCTAssertEqual(entries.first?["x"]?.doubleValue, 0.4, "only the latest position")
        harness.advance(by: 0.2)
        harness.server.pointers.tick()
        XCTAssertEqual(batches(harness, bob).count, 0, "no batch while nothing changed")
    }

    func testTheCapSendsTheNewestFirstAndTheRestNext() {
        let harness = TestServer(config: TestServer.config { $0.limits.maxPointersPerBatch = 2 })
        let watcher = harness.joined(name: "watcher")
        let movers = (1...3).map { harness.joined(name: "m\($0)") }
        _ = harness.messages(of: watcher)
        for (index, mover) in movers.enumerated() { harness.send(mover, pointer("dragon", Double(index) / 4)) }
        harness.server.pointers.tick()
        XCTAssertEqual(ids(batches(harness, watcher).last), [movers[2].id, movers[1].id])
        harness.advance(by: 0.06)
        harness.server.pointers.tick()
        XCTAssertEqual(ids(batches(harness, watcher).last), [movers[0].id])
    }

    func testHidingAndLeavingAreGone() {
        let harness = TestServer()
        let (alice, bob) = (harness.joined(name: "alice"), harness.joined(name: "bob"))
        harness.send(alice, pointer("face", 0.5))
        harness.server.pointers.tick()
        _ = harness.messages(of: bob)
        harness.send(alice, #"{"type":"pointer","view":null}"#)
        harness.advance(by: 0.06)
        harness.server.pointers.tick()
        XCTAssertEqual(goneIDs(batches(harness, bob).last), [alice.id])

        harness.send(alice, pointer("heart", 0.5))
        harness.advance(by: 0.06)
        harness.server.pointers.tick()
        _ = harness.messages(of: bob)
        harness.close(alice)
        harness.advance(by: 0.06)
        harness.server.pointers.tick()
        XCTAssertEqual(goneIDs(batches(harness, bob).last), [alice.id])
        XCTAssertTrue(harness.server.directory["lobby"]?.pointers.visible.isEmpty ?? false)
    }

    /// Section 10: a client never receives its own pointer, so neither its own id in `gone`.
    func testAClientThatHidesItsPointerIsNotToldItsOwnIsGone() {
        let harness = TestServer()
        let (alice, bob, carol) = (harness.joined(name: "alice"), harness.joined(name: "bob"), harness.joined(name: "carol"))
        harness.send(alice, pointer("face", 0.5))
        harness.server.pointers.tick()
        for client in [alice, bob, carol] { _ = harness.messages(of: client) }

        harness.send(alice, #"{"type":"pointer","view":null}"#)
        harness.advance(by: 0.06)
        harness.server.pointers.tick()
        XCTAssertEqual(batches(harness, alice).count, 0, "nothing else changed: alice gets no batch at all")
        XCTAssertEqual(goneIDs(batches(harness, bob).last), [alice.id])

        // Hidden in the same interval as another's move: alice's copy has the move, not her own id.
        harness.send(alice, pointer("face", 0.4))
        harness.advance(by: 0.06)
        harness.server.pointers.tick()
        for client in [alice, bob, carol] { _ = harness.messages(of: client) }
        harness.send(alice, #"{"type":"pointer","view":null}"#)
        harness.send(carol, pointer("heart", 0.3))
        harness.advance(by: 0.06)
        harness.server.pointers.tick()
        let toAlice = batches(harness, alice)
        XCTAssertEqual(toAlice.count, 1)
        XCTAssertEqual(ids(toAlice.last), [carol.id])
        XCTAssertEqual(goneIDs(toAlice.last), [], "not her own id")
        XCTAssertEqual(goneIDs(batches(harness, bob).last), [alice.id])
        XCTAssertEqual(goneIDs(batches(harness, carol).last), [alice.id])
    }

    /// The catch-up after skipped batches lists what went meanwhile, but not the receiver itself.
    func testACatchUpDoesNotListTheReceiversOwnPointerAsGone() {
        let harness = TestServer(config: TestServer.config { $0.limits.maxQueuedBytes = 2048 })
        let (alice, slow) = (harness.joined(name: "alice"), harness.joined(name: "slow"))
        harness.send(slow, pointer("heart", 0.9))
        for step in 1...20 {
            harness.send(alice, pointer("face", Double(step) / 20))
            harness.advance(by: 0.06)
            harness.server.pointers.tick()
        }
        XCTAssertGreaterThan(harness.metrics.pointerSkips, 0, "the slow client was skipped")
        harness.send(slow, #"{"type":"pointer","view":null}"#)
        harness.advance(by: 0.06)
        harness.server.pointers.tick()

        _ = harness.messages(of: slow)  // it catches up
        harness.send(alice, pointer("face", 0.33))
        harness.advance(by: 0.06)
        harness.server.pointers.tick()
        let catchUp = batches(harness, slow).last
        XCTAssertEqual(ids(catchUp), [alice.id], "the full list after a skip")
        XCTAssertEqual(goneIDs(catchUp), [], "its own hidden pointer is not listed")
    }

    func testALongQueueSkipsBatchesThenGetsEveryPointer() {
        let harness = TestServer(config: TestServer.config { $0.limits.maxQueuedBytes = 2048 })
        let (alice, bob, slow) = (harness.joined(name: "alice"), harness.joined(name: "bob"), harness.joined(name: "slow"))
        harness.send(bob, pointer("heart", 0.9))
        // The slow client reads nothing while alice moves: its queue grows past half.
        for step in 1...20 {
            harness.send(alice, pointer("face", Double(step) / 20))
            harness.advance(by: 0.06)
            harness.server.pointers.tick()
        }
        XCTAssertGreaterThan(harness.metrics.pointerSkips, 0, "the slow client was skipped")
        XCTAssertFalse(slow.connection.output.needsResync, "pointers never cause a resync")
        XCTAssertEqual(harness.metrics.resyncs, 0)

        // Bob's pointer goes while the slow client is still skipped.
        harness.send(bob, #"{"type":"pointer","view":null}"#)
        harness.advance(by: 0.06)
        harness.server.pointers.tick()

        _ = harness.messages(of: slow)  // it catches up
        harness.send(alice, pointer("face", 0.33))
        harness.advance(by: 0.06)
        harness.server.pointers.tick()
        let catchUp = batches(harness, slow).last
        XCTAssertEqual(ids(catchUp), [alice.id], "the full list after a skip")
        XCTAssertEqual(goneIDs(catchUp), [bob.id], "and what went meanwhile")
    }

    func testPointersHaveTheirOwnRate() {
        let harness = TestServer(config: TestServer.config { $0.limits.pointersPerSecond = 5 })
        let alice = harness.joined(name: "alice")
        for step in 1...12 { harness.send(alice, pointer("face", Double(step) / 12)) }
        XCTAssertEqual(harness.metrics.pointersIn, 12)
        XCTAssertEqual(harness.metrics.pointersDropped, 7, "a burst of pointersPerSecond, then dropped")
        XCTAssertEqual(harness.metrics.rateLimited, 0)
        XCTAssertFalse(harness.messages(of: alice).contains { $0["type"]?.stringValue == "error" })
        harness.advance(by: 1)
        harness.send(alice, pointer("face", 0.5))
        XCTAssertEqual(harness.metrics.pointersDropped, 7, "the bucket refills")
    }

    func testWelcomeListsVisiblePointersButNotTheNewcomers() {
        let harness = TestServer()
        let alice = harness.joined(name: "alice")
        harness.send(alice, pointer("dragon", 0.7, activity: "press"))
        let bob = harness.connect(name: "bob")
        let welcome = harness.messages(of: bob).first
        guard case .array(let listed)? = welcome?["pointers"] else { return XCTFail("no welcome.pointers") }
        XCTAssertEqual(listed.map { $0["id"]?.stringValue }, [alice.id])
        XCTAssertEqual(listed.first?["activity"]?.stringValue, "press")
    }
}
