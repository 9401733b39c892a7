import Foundation
import HappyCore
import XCTest

/// Live pointers (PROTOCOL.md section 10): ephemeral, paced, conflated,
/// capped, never echoed, gone on hide and leave, listed in the welcome,
/// validated, rated apart from intents, and never events.
final class PointerTests: XCTestCase {
    private func pointer(_ view: String?, _ x: Double = 0.5, _ y: Double = 0.5, activity: String? = nil) -> [String: Any] {
        var json: [String: Any] = ["type": "pointer", "view": view ?? NSNull(), "x": x, "y": y]
        if let activity { json["activity"] = activity }
        return json
    }

    private func id(_ welcome: JSONValue) throws -> String {
        try XCTUnwrap(welcome["you"]?["id"]?.stringValue)
    }

    /// The `pointers` messages `client` receives until `done` holds for
    /// them (or `timeout`), in order.
    private func collectPointers(_ client: TestClient, timeout: Double = 5,
                                 until done: ([JSONValue]) -> Bool) -> [JSONValue] {
        var batches: [JSONValue] = []
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !done(batches), Date() < deadline {
            guard let batch = client.next(type: "pointers", timeout: deadline.timeIntervalSinceNow) else { break }
            batches.append(batch)
        }
        return batches
    }

    private func entries(_ batch: JSONValue) -> [JSONValue] {
        if case .array(let list)? = batch["pointers"] { return list }
        return []
    }

    private func gone(_ batch: JSONValue) -> [String] {
        if case .array(let list)? = batch["gone"] { return list.compactMap(\.stringValue) }
        return []
    }

    func testAPointerReachesTheOthersWithNameAndActivityButNotItsSender() throws {
        let server = try ServerProcess()
        let (alice, welcomeA) = try TestClient.join(server, room: "pt", name: "alice")
        let (bob, _) = try TestClient.join(server, room: "pt", name: "bob")
        let aliceID = try id(welcomeA)
        alice.send(json: pointer("face", 0.42, 0.61, activity: "drag"))

        let batch = try XCTUnwrap(bob.next(type: "pointers"), "bob saw no pointer")
        XCTAssertEqual(batch["room"]?.stringValue, "pt")
        XCTAssertJSONEqual(entries(batch).first, .object([
            ("id", .string(aliceID)), ("name", .string("alice")), ("view", .string("face")),
            ("x", .number(0.42)), ("y", .number(0.61)), ("activity", .string("drag"))]))
        XCTAssertEqual(gone(batch), [])
        let own = try XCTUnwrap(alice.drainUntilPong()).filter { $0["type"]?.stringValue == "pointers" }
        XCTAssertEqual(own.count, 0, "a client never receives its own pointer: \(own)")
    }

    func testMovesAreConflatedAndPacedPerInterval() throws {
        let server = try ServerProcess(["limits": ["pointerIntervalMs": 300, "pointersPerSecond": 1000]])
        let (alice, welcomeA) = try TestClient.join(server, room: "pace", name: "alice")
        let (bob, _) = try TestClient.join(server, room: "pace", name: "bob")
        let aliceID = try id(welcomeA)
        let started = Date()
        for step in 1...20 { alice.send(json: pointer("heart", Double(step) / 20, 0.5)) }

        let batches = collectPointers(bob) { list in
            list.last.map { self.entries($0).first?["x"]?.doubleValue == 1.0 } ?? false
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(batches.last.flatMap { entries($0).first?["x"]?.doubleValue }, 1.0, "the last position arrives")
        // 20 moves sent at once: at most one batch per 300 ms, so a handful carry them all.
        XCTAssertLessThanOrEqual(batches.count, Int(elapsed / 0.3) + 2, "paced: \(batches.count) batches in \(elapsed) s")
        XCTAssertLessThan(batches.count, 20, "conflated")
        for batch in batches {
            XCTAssertEqual(entries(batch).filter { $0["id"]?.stringValue == aliceID }.count, 1,
                           "one entry per client and batch: \(batch)")
        }
        XCTAssertEqual(bob.drain(for: 0.7).filter { $0["type"]?.stringValue == "pointers" }.count, 0,
                       "nothing more once nothing moves")
    }

    func testTheCapLimitsABatchAndTheOthersFollowInLaterOnes() throws {
        let server = try ServerProcess(["limits": ["maxPointersPerBatch": 2, "pointerIntervalMs": 100]])
        let (watcher, _) = try TestClient.join(server, room: "cap", name: "watcher")
        var movers: [(TestClient, String)] = []
        for index in 1...5 {
            let (mover, welcome) = try TestClient.join(server, room: "cap", name: "m\(index)")
            movers.append((mover, try id(welcome)))
        }
        for (mover, _) in movers { mover.send(json: pointer("dragon", 0.25, 0.75)) }

        let expected = Set(movers.map(\.1))
        var seen = Set<String>()
        let batches = collectPointers(watcher) { list in
            seen = Set(list.flatMap { self.entries($0).compactMap { $0["id"]?.stringValue } })
            return seen.isSuperset(of: expected)
        }
        XCTAssertEqual(seen, expected, "every mover follows in a later batch")
        for batch in batches { XCTAssertLessThanOrEqual(entries(batch).count, 2, "capped: \(batch)") }
        XCTAssertGreaterThanOrEqual(batches.count, 3)
        let welcome = try TestClient.join(server, room: "cap", name: "late").1
        if case .array(let listed)? = welcome["pointers"] {
            XCTAssertEqual(listed.count, 2, "welcome.pointers holds at most maxPointersPerBatch")
        } else {
            XCTFail("welcome has no pointers list: \(welcome)")
        }
    }

    func testHidingAndLeavingAreListedAsGone() throws {
        let server = try ServerProcess()
        let (alice, welcomeA) = try TestClient.join(server, room: "gone", name: "alice")
        let (bob, _) = try TestClient.join(server, room: "gone", name: "bob")
        let aliceID = try id(welcomeA)

        alice.send(json: pointer("face"))
        XCTAssertEqual(bob.next(type: "pointers").map(entries)?.first?["id"]?.stringValue, aliceID)
        alice.send(json: pointer(nil))
        let hidden = try XCTUnwrap(bob.next(type: "pointers"), "no message after the pointer was hidden")
        XCTAssertEqual(gone(hidden), [aliceID])
        XCTAssertEqual(entries(hidden).count, 0)

        alice.send(json: pointer("heart", 0.1, 0.2))
        XCTAssertEqual(bob.next(type: "pointers").map(entries)?.first?["view"]?.stringValue, "heart")
        alice.close()
        let left = collectPointers(bob) { list in list.contains { self.gone($0).contains(aliceID) } }
        XCTAssertTrue(left.contains { gone($0) == [aliceID] }, "no gone after alice left: \(left)")
    }

    func testTheWelcomeListsTheVisiblePointers() throws {
        let server = try ServerProcess()
        let (alice, welcomeA) = try TestClient.join(server, room: "wp", name: "alice")
        let (bob, welcomeB) = try TestClient.join(server, room: "wp", name: "bob")
        XCTAssertEqual(welcomeB["pointers"], .array([]))
        alice.send(json: pointer("dragon", 0.9, 0.1, activity: "press"))
        XCTAssertNotNil(bob.next(type: "pointers"))

        let (_, welcomeC) = try TestClient.join(server, room: "wp", name: "carol")
        guard case .array(let listed)? = welcomeC["pointers"] else { return XCTFail("no welcome.pointers: \(welcomeC)") }
        XCTAssertEqual(listed.count, 1)
        XCTAssertEqual(listed.first?["id"]?.stringValue, try id(welcomeA))
        XCTAssertEqual(listed.first?["activity"]?.stringValue, "press")
    }

    func testInvalidPointersGetInvalidValueAndTheConnectionStaysOpen() throws {
        let server = try ServerProcess()
        let (alice, _) = try TestClient.join(server, room: "bad", name: "alice")
        let invalid: [[String: Any]] = [
            ["type": "pointer", "view": "nose", "x": 0.5, "y": 0.5],
            ["type": "pointer", "view": "face", "x": 1.5, "y": 0.5],
            ["type": "pointer", "view": "face", "x": "left", "y": 0.5],
            ["type": "pointer", "view": "face", "x": 0.5],
            ["type": "pointer", "view": "face", "x": 0.5, "y": -0.1],
            ["type": "pointer", "view": "face", "x": 0.5, "y": 0.5, "activity": "dance"],
            ["type": "pointer", "view": 3, "x": 0.5, "y": 0.5],
            ["type": "pointer"],
        ]
        for message in invalid {
            alice.send(json: message)
            let error = try XCTUnwrap(alice.next(type: "error"), "no error for \(message)")
            XCTAssertEqual(error["code"]?.stringValue, "invalid_value", "\(message): \(error)")
        }
        XCTAssertNotNil(alice.drainUntilPong(), "the connection stays open")
    }

    func testPointersHaveTheirOwnRateAndNeverDrawOnTheIntentBucket() throws {
        let server = try ServerProcess(["limits": ["intentsPerSecond": 1, "intentBurst": 3, "floodLimit": 5,
                                                   "pointersPerSecond": 5]])
        let (alice, _) = try TestClient.join(server, room: "rate", name: "alice")
        for step in 0..<40 { alice.send(json: pointer("face", Double(step) / 40, 0.5)) }
        alice.intent("face.setHappiness", id: "after", ["value": 70])

        let ack = try XCTUnwrap(alice.next(type: "ack"), "the intent bucket was drained by pointers")
        XCTAssertEqual(ack["id"]?.stringValue, "after")
        let answers = try XCTUnwrap(alice.drainUntilPong())
        XCTAssertEqual(answers.filter { $0["type"]?.stringValue == "error" }.count, 0,
                       "pointers over their rate are dropped silently: \(answers)")
        XCTAssertFalse(alice.isClosed, "never a flood close for pointers")
        XCTAssertGreaterThanOrEqual(try server.metric("happy_pointer_messages_total"), 40)
        XCTAssertGreaterThanOrEqual(try server.metric("happy_pointer_drops_total"), 20)
        XCTAssertGreaterThanOrEqual(try server.metric("happy_pointer_batches_total"), 0)
    }

    func testPointersAreNeverEventsAndDoNotMoveSeqOrResume() throws {
        let server = try ServerProcess()
        let (alice, welcomeA) = try TestClient.join(server, room: "seq", name: "alice")
        let (bob, _) = try TestClient.join(server, room: "seq", name: "bob")
        let seq = try XCTUnwrap(welcomeA["seq"]?.intValue)
        let epoch = try XCTUnwrap(welcomeA["epoch"]?.stringValue)
        for step in 1...5 { alice.send(json: pointer("face", Double(step) / 5, 0.3)) }
        XCTAssertNotNil(bob.next(type: "pointers"))
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=seq").json?["seq"]?.intValue, seq)
        XCTAssertEqual(try server.metric("happy_events_total"), 0)

        bob.close()
        let (again, resumed) = try TestClient.join(server, room: "seq", name: "bob", since: UInt64(seq), epoch: epoch)
        XCTAssertEqual(resumed["recovered"]?.boolValue, true)
        XCTAssertEqual(resumed["seq"]?.intValue, seq)
        let replayed = try XCTUnwrap(again.drainUntilPong())
        XCTAssertEqual(replayed.filter { $0["type"]?.stringValue == "event" }.count, 0, "no pointer is replayed")
    }
}
