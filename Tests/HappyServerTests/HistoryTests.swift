import Foundation
import HappyCore
import XCTest

/// History and replay (PROTOCOL.md section 11), on the durable store:
/// history is what was broadcast, paged and bounded; the state and the
/// dragon's label at every held seq; past frames equal the frames drawn
/// then; the limit and `gone`; survival across a restart and a SIGKILL;
/// access tokens. `HistoryTests` runs these on SQLite, `HistoryInMemoryTests`
/// with persistence off (the memory store keeps the history), and Redis
/// suites elsewhere. XCTest on Linux finds only the test methods a class
/// declares itself, so each of them lists the checks it runs.
class HistoryRules: XCTestCase {
    /// Settings every server of the class starts with.
    class var baseSettings: [String: Any] { [:] }

    func server(_ settings: [String: Any] = [:]) throws -> ServerProcess {
        var merged = Self.baseSettings
        for (key, value) in settings {
            if let section = value as? [String: Any], let base = merged[key] as? [String: Any] {
                merged[key] = base.merging(section) { _, new in new }
            } else {
                merged[key] = value
            }
        }
        return try ServerProcess(merged)
    }

    /// Sends `actions` one at a time, each acked before the next; returns the
    /// event texts a watcher received, in order.
    func play(_ actions: [(String, [String: Any])], on server: ServerProcess, room: String,
              file: StaticString = #filePath, line: UInt = #line) throws -> [JSONValue] {
        let (actor, _) = try TestClient.join(server, room: room, name: "actor")
        let (watcher, _) = try TestClient.join(server, room: room, name: "watcher")
        var events: [JSONValue] = []
        for (index, action) in actions.enumerated() {
            actor.intent(action.0, id: "i\(index)", action.1)
            let ack = try XCTUnwrap(actor.next(type: "ack", timeout: 10), "no ack for \(action.0)", file: file, line: line)
            XCTAssertNotEqual(ack["result"]?.stringValue, "unchanged", "\(action.0) changed nothing", file: file, line: line)
            events.append(try XCTUnwrap(watcher.next(type: "event", timeout: 10), "no event for \(action.0)",
                                        file: file, line: line))
        }
        actor.close()
        watcher.close()
        return events
    }

    func history(_ server: ServerProcess, _ query: String) throws -> HTTP.Response {
        try HTTP.get("\(server.httpBase)/api/history?\(query)")
    }

    func events(_ response: HTTP.Response) -> [JSONValue] {
        if case .array(let list)? = response.json?["events"] { return list }
        return []
    }

    func nudges(_ count: Int) -> [(String, [String: Any])] {
        (0..<count).map { ("face.nudgeHappiness", ["delta": $0 % 2 == 0 ? 3 : -2]) }
    }

    // MARK: history

    func checkHistoryIsWhatWasBroadcastObjectForObject() throws {
        let server = try server()
        let broadcast = try play([("dragon.forward", [:]), ("face.setHappiness", ["value": 80]),
                                  ("heart.setRate", ["value": 0.25]), ("dragon.toggleHidden", [:])],
                                 on: server, room: "h1")
        let response = try history(server, "room=h1")
        XCTAssertEqual(response.status, 200, response.text)
        let json = try XCTUnwrap(response.json)
        XCTAssertEqual(json["room"]?.stringValue, "h1")
        XCTAssertEqual(json["seq"]?.intValue, 4)
        XCTAssertEqual(json["first"]?.intValue, 1)
        XCTAssertNotNil(json["epoch"]?.stringValue)
        XCTAssertEqual(events(response), broadcast)
    }

    func checkHistoryPagesBySinceAndLimit() throws {
        let server = try server()
        let broadcast = try play(nudges(25), on: server, room: "h2")
        var collected: [JSONValue] = []
        var since = 0
        while true {
            let page = events(try history(server, "room=h2&since=\(since)&limit=10"))
            XCTAssertLessThanOrEqual(page.count, 10)
            guard let last = page.last?["seq"]?.intValue else { break }
            collected += page
            since = last
        }
        XCTAssertEqual(collected, broadcast, "pages join up to everything, in order")
        XCTAssertEqual(events(try history(server, "room=h2")).count, 25, "the default limit is 100")
        XCTAssertEqual(events(try history(server, "room=h2&since=25")).count, 0)
    }

    func checkBoundsAndErrors() throws {
        let server = try server()
        _ = try play(nudges(3), on: server, room: "h3")
        for (query, status) in [("since=4", 400), ("limit=0", 400), ("limit=1001", 400), ("since=-1", 400),
                                ("since=x", 400), ("limit=1.5", 400)] {
            let response = try history(server, "room=h3&\(query)")
            XCTAssertEqual(response.status, status, "\(query): \(response.text)")
            XCTAssertEqual(response.json?["code"]?.stringValue, "invalid_value", query)
        }
        let beyond = try HTTP.get("\(server.httpBase)/api/state?room=h3&seq=4")
        XCTAssertEqual(beyond.status, 400)
        XCTAssertEqual(beyond.json?["code"]?.stringValue, "invalid_value")
        XCTAssertEqual(try history(server, "room=bad!name").status, 400)
        let fresh = try XCTUnwrap(try history(server, "room=h3fresh").json)
        XCTAssertEqual(fresh["seq"]?.intValue, 0)
        XCTAssertEqual(fresh["first"]?.intValue, 1, "a room with no events has seq 0 and first 1")
        XCTAssertEqual(fresh["events"], .array([]))
        XCTAssertEqual(try HTTP.post("\(server.httpBase)/api/history?room=h3", body: "").status, 405)
    }

    // MARK: the past state

    func checkStateAndDragonLabelAtEverySeq() throws {
        let server = try server()
        let broadcast = try play([("dragon.forward", [:]), ("face.setHappiness", ["value": 80]),
                                  ("dragon.back", [:]), ("dragon.toggleHidden", [:]),
                                  ("heart.setRate", ["value": 0.75]), ("room.reset", [:])],
                                 on: server, room: "s1")
        let labels = ["forward, (x,y) = (20, 10)", "forward, (x,y) = (20, 10)", "back, (x,y) = (10, 10)",
                      "hide", "hide", "dragon's status"]
        let start = try XCTUnwrap(try HTTP.get("\(server.httpBase)/api/state?room=s1&seq=0").json)
        XCTAssertEqual(start["seq"]?.intValue, 0)
        XCTAssertEqual(start["dragonStatus"]?.stringValue, "dragon's status")
        XCTAssertEqual(start["state"], broadcast.last?["state"], "seq 0 is the defaults, as after the reset")
        for (index, event) in broadcast.enumerated() {
            let seq = index + 1
            let response = try HTTP.get("\(server.httpBase)/api/state?room=s1&seq=\(seq)")
            XCTAssertEqual(response.status, 200, response.text)
            let json = try XCTUnwrap(response.json)
            XCTAssertEqual(json["room"]?.stringValue, "s1")
            XCTAssertEqual(json["seq"]?.intValue, seq)
            XCTAssertEqual(json["state"], event["state"], "state at seq \(seq)")
            XCTAssertEqual(json["dragonStatus"]?.stringValue, labels[index], "label at seq \(seq)")
        }
    }

    func checkAPastFrameEqualsTheFrameDrawnThenAndIsCachedForLong() throws {
        let server = try server()
        let (actor, _) = try TestClient.join(server, room: "f1", name: "actor")
        var drawn: [Int: Data] = [:]
        for (seq, action) in [(1, ("dragon.forward", [String: Any]())), (2, ("face.setHappiness", ["value": 10])),
                              (3, ("dragon.toggleHidden", [:]))] {
            actor.intent(action.0, id: "f\(seq)", action.1)
            XCTAssertEqual(actor.next(type: "ack")?["seq"]?.intValue, seq)
            let now = try HTTP.get("\(server.httpBase)/frame/scene.png?room=f1&phase=0")
            XCTAssertEqual(now.status, 200)
            drawn[seq] = now.body
        }
        for seq in 1...3 {
            let past = try HTTP.get("\(server.httpBase)/frame/scene.png?room=f1&phase=0&seq=\(seq)")
            XCTAssertEqual(past.status, 200, past.text)
            XCTAssertEqual(past.body, drawn[seq], "the frame at seq \(seq) is the one drawn then")
            let etag = try XCTUnwrap(past.headers.first { $0.key.lowercased() == "etag" }?.value)
            XCTAssertTrue(etag.hasPrefix("\"p-"), "a past frame has its own ETag: \(etag)")
            let cache = past.headers.first { $0.key.lowercased() == "cache-control" }?.value ?? ""
            XCTAssertTrue(cache.contains("max-age=31536000"), cache)
            XCTAssertEqual(try HTTP.get("\(server.httpBase)/frame/scene.png?room=f1&phase=0&seq=\(seq)",
                                        headers: ["If-None-Match": etag]).status, 304)
        }
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/frame/scene.png?room=f1&seq=9").status, 400)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/frame/scene.png?room=f1&seq=x").status, 400)
    }

    // MARK: the limit

    func checkTheLimitKeepsTheNewestAndOlderSeqsAreGone() throws {
        let server = try server(["persistence": ["historyLimit": 5]])
        let broadcast = try play([("dragon.forward", [:])] + nudges(11), on: server, room: "l1")
        let page = try XCTUnwrap(try history(server, "room=l1").json)
        XCTAssertEqual(page["seq"]?.intValue, 12)
        XCTAssertEqual(page["first"]?.intValue, 8)
        XCTAssertEqual(events(try history(server, "room=l1")), Array(broadcast[7...]))
        XCTAssertEqual(events(try history(server, "room=l1&since=2")), Array(broadcast[7...]),
                       "a since older than first - 1 answers from first")
        let gone = try HTTP.get("\(server.httpBase)/api/state?room=l1&seq=6")
        XCTAssertEqual(gone.status, 410, gone.text)
        XCTAssertEqual(gone.json?["code"]?.stringValue, "gone")
        let edge = try XCTUnwrap(try HTTP.get("\(server.httpBase)/api/state?room=l1&seq=7").json)
        XCTAssertEqual(edge["state"], broadcast[6]["state"], "first - 1 is still answered")
        XCTAssertEqual(edge["dragonStatus"]?.stringValue, "forward, (x,y) = (20, 10)",
                       "the label holds although its event is no longer held")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/frame/dragon.png?room=l1&seq=6").status, 410)
    }

    /// `historyLimit` 0 keeps no past: asking for it is answered (nothing
    /// held, 410 for a seq), not a crash, and the room goes on.
    func checkWithoutHistoryThePastIsGoneAndTheRoomGoesOn() throws {
        let server = try server(["persistence": ["historyLimit": 0]])
        let broadcast = try play(nudges(5), on: server, room: "h0")
        let page = try XCTUnwrap(try history(server, "room=h0&since=3").json)
        XCTAssertEqual(page["seq"]?.intValue, 5)
        XCTAssertEqual(page["events"]?.arrayValue?.count, 0, "\(page)")
        let gone = try HTTP.get("\(server.httpBase)/api/state?room=h0&seq=3")
        XCTAssertEqual(gone.status, 410, gone.text)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/frame/face.png?room=h0&seq=2").status, 410)
        let now = try XCTUnwrap(try HTTP.get("\(server.httpBase)/api/state?room=h0").json)
        XCTAssertEqual(now["state"], broadcast.last?["state"], "the server is still up and the room current")
    }

    // MARK: durability

    func checkHistorySurvivesARestartAndASIGKILL() throws {
        let server = try server()
        let broadcast = try play([("dragon.forward", [:])] + nudges(4), on: server, room: "d1")
        XCTAssertEqual(server.stop(), 0)
        try server.start()
        XCTAssertEqual(events(try history(server, "room=d1")), broadcast, "after a restart")
        let more = try play(nudges(3), on: server, room: "d1")
        server.kill()
        try server.start()
        XCTAssertEqual(events(try history(server, "room=d1")), broadcast + more, "after a SIGKILL")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=d1&seq=3").json?["dragonStatus"]?.stringValue,
                       "forward, (x,y) = (20, 10)")
    }

    // MARK: access

    func checkHistoryNeedsATokenWhenAuthIsOn() throws {
        let secret = "history-secret"
        let server = try server(["auth": ["secret": secret]])
        let base = "\(server.httpBase)"
        XCTAssertEqual(try HTTP.get("\(base)/api/history?room=a1").status, 401)
        XCTAssertEqual(try HTTP.get("\(base)/api/state?room=a1&seq=0").status, 401)
        XCTAssertEqual(try HTTP.get("\(base)/frame/face.png?room=a1&seq=0").status, 401)
        let viewer = try TokenMinter.mint(server, subject: "vera", role: "viewer")
        let response = try HTTP.get("\(base)/api/history?room=a1", headers: ["Authorization": "Bearer \(viewer)"])
        XCTAssertEqual(response.status, 200, "any role may read the past: \(response.text)")
        XCTAssertEqual(try HTTP.get("\(base)/api/state?room=a1&seq=0&token=\(viewer)").status, 200)
        let otherRoom = try TokenMinter.mint(server, subject: "vera", role: "viewer", room: "elsewhere")
        XCTAssertEqual(try HTTP.get("\(base)/api/history?room=a1&token=\(otherRoom)").status, 403)
    }
}

/// Section 11 on the durable store (SQLite).
final class HistoryTests: HistoryRules {
    func testHistoryIsWhatWasBroadcastObjectForObject() throws { try checkHistoryIsWhatWasBroadcastObjectForObject() }
    func testHistoryPagesBySinceAndLimit() throws { try checkHistoryPagesBySinceAndLimit() }
    func testBoundsAndErrors() throws { try checkBoundsAndErrors() }
    func testStateAndDragonLabelAtEverySeq() throws { try checkStateAndDragonLabelAtEverySeq() }
    func testAPastFrameEqualsTheFrameDrawnThenAndIsCachedForLong() throws { try checkAPastFrameEqualsTheFrameDrawnThenAndIsCachedForLong() }
    func testTheLimitKeepsTheNewestAndOlderSeqsAreGone() throws { try checkTheLimitKeepsTheNewestAndOlderSeqsAreGone() }
    func testWithoutHistoryThePastIsGoneAndTheRoomGoesOn() throws { try checkWithoutHistoryThePastIsGoneAndTheRoomGoesOn() }
    func testHistorySurvivesARestartAndASIGKILL() throws { try checkHistorySurvivesARestartAndASIGKILL() }
    func testHistoryNeedsATokenWhenAuthIsOn() throws { try checkHistoryNeedsATokenWhenAuthIsOn() }
}

/// Section 11 with persistence off: the memory store keeps the history.
final class HistoryInMemoryTests: HistoryRules {
    override class var baseSettings: [String: Any] { ["persistence": ["enabled": false]] }

    func testHistoryIsWhatWasBroadcastObjectForObject() throws { try checkHistoryIsWhatWasBroadcastObjectForObject() }
    func testHistoryPagesBySinceAndLimit() throws { try checkHistoryPagesBySinceAndLimit() }
    func testBoundsAndErrors() throws { try checkBoundsAndErrors() }
    func testStateAndDragonLabelAtEverySeq() throws { try checkStateAndDragonLabelAtEverySeq() }
    func testAPastFrameEqualsTheFrameDrawnThenAndIsCachedForLong() throws { try checkAPastFrameEqualsTheFrameDrawnThenAndIsCachedForLong() }
    func testTheLimitKeepsTheNewestAndOlderSeqsAreGone() throws { try checkTheLimitKeepsTheNewestAndOlderSeqsAreGone() }
    func testWithoutHistoryThePastIsGoneAndTheRoomGoesOn() throws { try checkWithoutHistoryThePastIsGoneAndTheRoomGoesOn() }
    func testHistoryNeedsATokenWhenAuthIsOn() throws { try checkHistoryNeedsATokenWhenAuthIsOn() }
}
