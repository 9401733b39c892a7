import Foundation
import HappyCore
import XCTest

/// History and replay (PROTOCOL.md section 11) in cluster mode: two nodes
/// sharing rooms through Redis answer the same past, whichever node wrote it.
final class HistoryClusterTests: XCTestCase {
    private func cluster(_ redis: RedisProcess, persistence: [String: Any] = [:]) throws -> [ServerProcess] {
        var settings: [String: Any] = ["cluster": ["redis": redis.url]]
        if !persistence.isEmpty { settings["persistence"] = persistence }
        return try (0..<2).map { _ in try ServerProcess(settings) }
    }

    private func json(_ url: String, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        let response = try HTTP.get(url)
        XCTAssertEqual(response.status, 200, "\(url): \(response.text)", file: file, line: line)
        return try XCTUnwrap(response.json, "\(url) answered no JSON", file: file, line: line)
    }

    /// Sends intents alternately from a client on each node, waiting until
    /// both clients have seen each event; returns the events as broadcast.
    private func play(_ intents: [(String, [String: Any])], on clients: [TestClient],
                      file: StaticString = #filePath, line: UInt = #line) throws -> [JSONValue] {
        var broadcast: [JSONValue] = []
        for (index, (action, parameters)) in intents.enumerated() {
            clients[index % clients.count].intent(action, id: "i\(index)", parameters)
            let seen = try clients.map { client in
                try XCTUnwrap(client.next(type: "event", timeout: 10), "no event for \(action)", file: file, line: line)
            }
            XCTAssertEqual(seen[0], seen[1], "the nodes broadcast different events", file: file, line: line)
            broadcast.append(seen[0])
        }
        return broadcast
    }

    private var intents: [(String, [String: Any])] { [
        ("dragon.forward", [:]), ("face.setHappiness", ["value": 77]), ("heart.setRate", ["value": 0.25]),
        ("dragon.back", [:]), ("dragon.forward", [:]), ("face.pinch", ["factor": 1.2]),
        ("dragon.toggleHidden", [:]), ("face.nudgeHappiness", ["delta": -7]),
    ] }

    func testHistoryAndPastStatesAreTheSameOnBothNodes() throws {
        let redis = try RedisProcess()
        let nodes = try cluster(redis)
        let (alice, welcome) = try TestClient.join(nodes[0], room: "saga", name: "alice")
        let (bob, _) = try TestClient.join(nodes[1], room: "saga", name: "bob")
        let epoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
        let broadcast = try play(intents, on: [alice, bob])
        XCTAssertEqual(broadcast.map { $0["seq"]?.intValue }, Array(1...8))

        for node in nodes {
            // Every event, object for object as broadcast, whichever node wrote it.
            let page = try json("\(node.httpBase)/api/history?room=saga")
            XCTAssertEqual(page["room"]?.stringValue, "saga")
            XCTAssertEqual(page["epoch"]?.stringValue, epoch)
            XCTAssertEqual(page["seq"]?.intValue, 8)
            XCTAssertEqual(page["first"]?.intValue, 1)
            XCTAssertEqual(page["events"]?.arrayValue, broadcast, "node \(node.port) answers other events")

            // Pages by seq.
            let middle = try json("\(node.httpBase)/api/history?room=saga&since=3&limit=2")
            XCTAssertEqual(middle["events"]?.arrayValue, Array(broadcast[3...4]))
            XCTAssertEqual(try json("\(node.httpBase)/api/history?room=saga&since=8")["events"]?.arrayValue, [])
            XCTAssertEqual(try HTTP.get("\(node.httpBase)/api/history?room=saga&since=9").status, 400)
        }

        // The room after each event agrees on both nodes, with the state broadcast then.
        let initialLabel = try json("\(nodes[0].httpBase)/api/state?room=saga&seq=0")["dragonStatus"]?.stringValue
        var label = try XCTUnwrap(initialLabel)
        let labels = DragonStatus(initial: label)
        for seq in 0...8 {
            let answers = try nodes.map { try json("\($0.httpBase)/api/state?room=saga&seq=\(seq)") }
            XCTAssertEqual(answers[0], answers[1], "the nodes disagree on the room at seq \(seq)")
            XCTAssertEqual(answers[0]["seq"]?.intValue, seq)
            XCTAssertEqual(answers[0]["epoch"]?.stringValue, epoch)
            if seq == 0 {
                XCTAssertJSONEqual(answers[0]["state"], Contract.defaultState)
            } else {
                let event = broadcast[seq - 1]
                XCTAssertEqual(answers[0]["state"], event["state"], "the state at \(seq) is not the one broadcast")
                if let name = event["name"]?.stringValue.flatMap(EventName.init(rawValue:)),
                   let state = event["state"], let x = state["dragon"]?["x"]?.doubleValue,
                   let y = state["dragon"]?["y"]?.doubleValue, let hidden = state["dragon"]?["hidden"]?.boolValue,
                   let next = labels.after(name, dragon: Scene.Dragon(x: x, y: y, hidden: hidden)) {
                    label = next
                }
            }
            XCTAssertEqual(answers[0]["dragonStatus"]?.stringValue, label, "the label at seq \(seq)")
        }
        XCTAssertTrue(label.hasPrefix("hide"), "the label follows the dragon events: \(label)")
        for node in nodes {
            XCTAssertEqual(try HTTP.get("\(node.httpBase)/api/state?room=saga&seq=9").status, 400)
        }

        // Frames of the past render alike on both nodes.
        for seq in [0, 4, 7] {
            let frames = try nodes.map { try HTTP.get("\($0.httpBase)/frame/dragon.png?room=saga&seq=\(seq)") }
            XCTAssertEqual(frames.map(\.status), [200, 200], "the frame at seq \(seq)")
            XCTAssertEqual(frames[0].body, frames[1].body, "the nodes render seq \(seq) differently")
        }
    }

    /// Intents racing on both nodes (commits conflict and are retried): the
    /// history is still what every client saw, and the labels follow it.
    func testHistoryOfConcurrentIntentsIsWhatEveryClientSaw() throws {
        let redis = try RedisProcess()
        let settings: [String: Any] = ["cluster": ["redis": redis.url],
                                       "limits": ["intentsPerSecond": 10_000, "intentBurst": 10_000]]
        let nodes = try (0..<2).map { _ in try ServerProcess(settings) }
        let clients = try nodes.enumerated().map { try TestClient.join($1, room: "race", name: "c\($0)").0 }
        let perClient = 30
        for round in 0..<perClient {
            for (index, client) in clients.enumerated() {
                let (action, parameters) = intents[(round * 3 + index) % intents.count]
                client.intent(action, id: "\(index)-\(round)", parameters)
            }
        }
        // Every intent is answered (an ack, or an error when it changed nothing);
        // then each client has every event up to the room's seq.
        var streams: [[JSONValue]] = []
        for client in clients {
            var answers = 0
            var stream: [JSONValue] = []
            while answers < perClient, let message = client.next(timeout: 10) {
                switch message["type"]?.stringValue {
                case "event": stream.append(message)
                case "ack", "error": answers += 1
                default: break
                }
            }
            XCTAssertEqual(answers, perClient, "a client was not answered for every intent")
            streams.append(stream)
        }
        let total = try XCTUnwrap(try json("\(nodes[0].httpBase)/api/state?room=race")["seq"]?.intValue)
        for index in streams.indices {
            while streams[index].count < total, let event = clients[index].next(type: "event", timeout: 10) {
                streams[index].append(event)
            }
        }
        XCTAssertGreaterThan(total, perClient)
        XCTAssertEqual(streams[0].map { $0["seq"]?.intValue }, consecutive(1, through: total), "a client missed events")
        XCTAssertEqual(streams[0], streams[1], "the clients saw different events")

        let initial = try XCTUnwrap(try json("\(nodes[0].httpBase)/api/state?room=race&seq=0")["dragonStatus"]?.stringValue)
        let labels = DragonStatus(initial: initial)
        for node in nodes {
            var history: [JSONValue] = []
            var since = 0
            while since < total {
                let page = try json("\(node.httpBase)/api/history?room=race&since=\(since)&limit=25")
                let events = try XCTUnwrap(page["events"]?.arrayValue)
                guard !events.isEmpty else { break }
                history += events
                since = events.last?["seq"]?.intValue ?? total
            }
            XCTAssertEqual(history, streams[0], "node \(node.port) has another history")
        }
        var label = initial
        for seq in consecutive(1, through: total) {
            let event = streams[0][seq - 1]
            if let name = event["name"]?.stringValue.flatMap(EventName.init(rawValue:)),
               let dragon = event["state"]?["dragon"], let x = dragon["x"]?.doubleValue,
               let y = dragon["y"]?.doubleValue, let hidden = dragon["hidden"]?.boolValue,
               let next = labels.after(name, dragon: Scene.Dragon(x: x, y: y, hidden: hidden)) {
                label = next
            }
            guard seq % 7 == 0 || seq == total else { continue }
            let answers = try nodes.map { try json("\($0.httpBase)/api/state?room=race&seq=\(seq)") }
            XCTAssertEqual(answers[0], answers[1], "the nodes disagree on the room at seq \(seq)")
            XCTAssertEqual(answers[0]["state"], event["state"])
            XCTAssertEqual(answers[0]["dragonStatus"]?.stringValue, label, "the label at seq \(seq)")
        }
    }

    func testAHistoryLimitBelowTheResumeWindowIsTheSameOnBothNodes() throws {
        let redis = try RedisProcess()
        let nodes = try cluster(redis, persistence: ["historyLimit": 3])
        let (alice, welcome) = try TestClient.join(nodes[0], room: "short", name: "alice")
        let (bob, _) = try TestClient.join(nodes[1], room: "short", name: "bob")
        let epoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
        let seen = UInt64(try XCTUnwrap(welcome["seq"]?.intValue))
        let broadcast = try play(intents, on: [alice, bob])

        for node in nodes {
            let page = try json("\(node.httpBase)/api/history?room=short&since=0")
            XCTAssertEqual(page["epoch"]?.stringValue, epoch)
            XCTAssertEqual(page["first"]?.intValue, 6, "the newest 3 of 8 events are history")
            XCTAssertEqual(page["events"]?.arrayValue, Array(broadcast[5...]))
            let base = try json("\(node.httpBase)/api/state?room=short&seq=5")
            XCTAssertEqual(base["state"], broadcast[4]["state"])
            XCTAssertEqual(try HTTP.get("\(node.httpBase)/api/state?room=short&seq=4").status, 410)
        }
        // Redis still keeps limits.historySize events for resumes, on either node.
        alice.close()
        let (back, resumed) = try TestClient.join(nodes[1], room: "short", name: "alice", since: seen, epoch: epoch)
        XCTAssertEqual(resumed["recovered"]?.boolValue, true)
        XCTAssertEqual((0..<8).compactMap { _ in back.next(type: "event", timeout: 10) }, broadcast)
    }

    func testAHistoryLimitAboveTheResumeWindowTrimsAndKeepsTheBase() throws {
        let redis = try RedisProcess()
        var settings: [String: Any] = ["cluster": ["redis": redis.url], "persistence": ["historyLimit": 4]]
        settings["limits"] = ["historySize": 2]
        let nodes = try (0..<2).map { _ in try ServerProcess(settings) }
        let (alice, _) = try TestClient.join(nodes[0], room: "trim", name: "alice")
        let (bob, _) = try TestClient.join(nodes[1], room: "trim", name: "bob")
        let broadcast = try play(intents, on: [alice, bob])

        for node in nodes {
            let page = try json("\(node.httpBase)/api/history?room=trim")
            XCTAssertEqual(page["first"]?.intValue, 5, "the newest 4 of 8 events are held")
            XCTAssertEqual(page["events"]?.arrayValue, Array(broadcast[4...]))
            // since older than first - 1 answers from first on.
            XCTAssertEqual(try json("\(node.httpBase)/api/history?room=trim&since=1&limit=1")["events"]?.arrayValue,
                           [broadcast[4]])
            let base = try json("\(node.httpBase)/api/state?room=trim&seq=4")
            XCTAssertEqual(base["state"], broadcast[3]["state"], "the state before the oldest held event")
            XCTAssertTrue(base["dragonStatus"]?.stringValue?.hasPrefix("back") == true, "\(base)")
            let gone = try HTTP.get("\(node.httpBase)/api/state?room=trim&seq=3")
            XCTAssertEqual(gone.status, 410)
            XCTAssertEqual(gone.json?["code"]?.stringValue, "gone")
        }
    }
}

/// The rules every store keeps (HistoryRules), on Redis in cluster mode.
final class HistoryInRedisTests: HistoryRules {
    private var redis: RedisProcess?

    override func setUpWithError() throws {
        redis = try RedisProcess()
    }

    override func tearDown() {
        redis = nil
    }

    override func server(_ settings: [String: Any] = [:]) throws -> ServerProcess {
        let url = try XCTUnwrap(redis?.url)
        return try super.server(settings.merging(["cluster": ["redis": url]]) { _, new in new })
    }

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
