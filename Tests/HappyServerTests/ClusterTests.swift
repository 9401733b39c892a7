import Foundation
import HappyCore
import XCTest

/// Several happyserver nodes sharing rooms through Redis.
final class ClusterTests: XCTestCase {
    private func cluster(_ redis: RedisProcess, nodes: Int = 3, limits: [String: Any] = [:]) throws -> [ServerProcess] {
        var settings: [String: Any] = ["cluster": ["redis": redis.url]]
        if !limits.isEmpty { settings["limits"] = limits }
        return try (0..<nodes).map { _ in try ServerProcess(settings) }
    }

    private func events(_ client: TestClient, count: Int, timeout: Double = 10) -> [JSONValue] {
        (0..<count).compactMap { _ in client.next(type: "event", timeout: timeout) }
    }

    /// Events up to and including seq `last` (fewer when they stop coming); a resync fails the test.
    private func eventsThrough(_ last: UInt64, of client: TestClient, file: StaticString = #filePath, line: UInt = #line) -> [JSONValue] {
        var events: [JSONValue] = []
        while events.last?["seq"]?.doubleValue != Double(last), let message = client.next(timeout: 10) {
            XCTAssertNotEqual(message["type"]?.stringValue, "resync", "a resync instead of events", file: file, line: line)
            if message["type"]?.stringValue == "event" { events.append(message) }
        }
        return events
    }

    func testClientsOnDifferentNodesSeeEveryEventWithTheSameSeq() throws {
        let redis = try RedisProcess()
        let nodes = try cluster(redis)
        let clients = try nodes.enumerated().map { index, node in try TestClient.join(node, room: "shared", name: "n\(index)").0 }
        let epochs = try nodes.map { try HTTP.get("\($0.httpBase)/api/state?room=shared").json?["epoch"]?.stringValue }
        XCTAssertEqual(Set(epochs).count, 1, "one epoch for the room on every node: \(epochs)")

        clients[0].intent("dragon.forward", id: "a")
        clients[1].intent("face.setHappiness", id: "b", ["value": 77])
        clients[2].intent("heart.setRate", id: "c", ["value": 0.25])
        let seen = clients.map { events($0, count: 3) }
        for list in seen {
            XCTAssertEqual(list.map { $0["seq"]?.doubleValue }, [1, 2, 3])
        }
        XCTAssertEqual(seen[0], seen[1], "node 0 and node 1 disagree")
        XCTAssertEqual(seen[1], seen[2], "node 1 and node 2 disagree")
        let state = try HTTP.get("\(nodes[2].httpBase)/api/state?room=shared").json
        XCTAssertEqual(state?["seq"]?.doubleValue, 3)
        XCTAssertEqual(state?["state"], seen[0].last?["state"])
        XCTAssertEqual(state?["presenceCount"]?.doubleValue, 3, "presence counts every node's clients")
    }

    func testConcurrentIntentsOnAllNodesConvergeWithoutGapsOrDuplicates() throws {
        let redis = try RedisProcess()
        let nodes = try cluster(redis, limits: ["intentsPerSecond": 10_000, "intentBurst": 10_000])
        var clients: [TestClient] = []
        for (index, node) in nodes.enumerated() {
            for copy in 0..<2 { clients.append(try TestClient.join(node, room: "race", name: "c\(index)\(copy)").0) }
        }
        let perClient = 40
        let actions: [(String, [String: Any])] = [
            ("dragon.forward", [:]), ("dragon.back", [:]), ("face.nudgeHappiness", ["delta": 7]),
            ("face.nudgeHappiness", ["delta": -5]), ("heart.setRate", ["value": 0.3]), ("dragon.toggleHidden", [:]),
            ("face.pinch", ["factor": 1.05]),
        ]
        for round in 0..<perClient {
            for (index, client) in clients.enumerated() {
                let (action, parameters) = actions[(round * 7 + index * 3) % actions.count]
                client.intent(action, id: "\(index)-\(round)", parameters)
            }
        }
        // Every intent is answered once; events are the same everywhere, consecutive from 1.
        var streams: [[JSONValue]] = []
        for (index, client) in clients.enumerated() {
            var answers = 0
            var stream: [JSONValue] = []
            let deadline = Date(timeIntervalSinceNow: 60)
            while answers < perClient && Date() < deadline {
                guard let message = client.next(timeout: 10) else { break }
                switch message["type"]?.stringValue {
                case "event": stream.append(message)
                case "ack", "error": answers += 1
                case "resync": XCTFail("client \(index) got a resync at seq \(message["seq"]?.doubleValue ?? -1)")
                default: break
                }
            }
            XCTAssertEqual(answers, perClient, "client \(index) was not answered for every intent")
            streams.append(stream)
        }
        let total = try XCTUnwrap(try HTTP.get("\(nodes[0].httpBase)/api/state?room=race").json?["seq"]?.doubleValue)
        for (index, client) in clients.enumerated() where (streams[index].last?["seq"]?.doubleValue ?? 0) < total {
            // The rest, as long as it keeps coming (a resync fails the test).
            streams[index] += eventsThrough(UInt64(total), of: client)
        }
        for (index, _) in clients.enumerated() {
            XCTAssertEqual(streams[index].map { $0["seq"]?.doubleValue ?? -1 }, consecutive(1, through: Int(total)).map(Double.init),
                           "client \(index) saw gaps or duplicates")
            XCTAssertEqual(streams[index], streams[0], "client \(index) saw other events than client 0")
        }
        for node in nodes {
            let state = try HTTP.get("\(node.httpBase)/api/state?room=race").json
            XCTAssertEqual(state?["seq"]?.doubleValue, total)
            XCTAssertEqual(state?["state"], streams[0].last?["state"])
        }
        // Nodes that commit to one room at once refuse each other's stale commits:
        // the retry path ran, or this test did not test it.
        let conflicts = try nodes.map { try $0.metric("happy_store_conflicts_total") }
        print("cluster convergence: \(Int(total)) events, commit conflicts per node \(conflicts)")
        XCTAssertGreaterThan(conflicts.reduce(0, +), 0, "no commit conflicted: the retry path did not run")
    }

    func testKilledNodesClientResumesOnAnotherNode() throws {
        let redis = try RedisProcess()
        let nodes = try cluster(redis)
        let (mover, welcome) = try TestClient.join(nodes[0], room: "move", name: "mover")
        let epoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
        mover.intent("dragon.forward", id: "m")
        let seen = UInt64(try XCTUnwrap(mover.next(type: "ack")?["seq"]?.doubleValue))

        nodes[0].kill()
        XCTAssertNotNil(mover.waitForClose(timeout: 5) as Any?, "the client on the killed node sees its connection close")
        let (writer, _) = try TestClient.join(nodes[1], room: "move", name: "writer")
        var missed: [JSONValue] = []
        for value in [11, 22, 33] {
            writer.intent("face.setHappiness", id: "w\(value)", ["value": value])
            missed.append(try XCTUnwrap(writer.next(type: "event")))
        }
        let (back, resumed) = try TestClient.join(nodes[2], room: "move", name: "mover", since: seen, epoch: epoch)
        XCTAssertEqual(resumed["recovered"]?.boolValue, true)
        XCTAssertEqual(resumed["seq"]?.doubleValue, Double(seen + 3))
        XCTAssertEqual(events(back, count: 3), missed, "the resumed client gets exactly what it missed")
    }

    func testANodeStoppingSendsItsClientsToTheOthersWith1012AndTheyResumeThere() throws {
        let redis = try RedisProcess()
        let nodes = try cluster(redis, nodes: 2)
        let (mover, welcome) = try TestClient.join(nodes[0], room: "restart", name: "mover")
        let epoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
        mover.intent("dragon.forward", id: "m")
        let seen = UInt64(try XCTUnwrap(mover.next(type: "ack")?["seq"]?.doubleValue))
        let raw = try RawWebSocket(port: nodes[0].port, target: "/ws?room=restart&name=raw", timeout: 20)
        _ = raw.nextFrame()

        nodes[0].stop()
        // A node of a cluster going away is a restart: the others serve its rooms.
        guard case .close(let code, let reason)? = raw.readUntilClose().close else { return XCTFail("no close frame") }
        XCTAssertEqual(code, 1012)
        XCTAssertEqual(reason, WebSocketCloseCode.serviceRestartReason)
        XCTAssertNotNil(mover.waitForClose(timeout: 10) as Any?)
        let (back, resumed) = try TestClient.join(nodes[1], room: "restart", name: "mover", since: seen, epoch: epoch)
        XCTAssertEqual(resumed["recovered"]?.boolValue, true)
        back.intent("dragon.back", id: "n")
        XCTAssertEqual(back.next(type: "ack")?["seq"]?.doubleValue, Double(seen + 1))
    }

    func testPresenceOfAKilledNodesClientsDisappears() throws {
        let redis = try RedisProcess()
        let nodes = try cluster(redis, nodes: 2)
        let (observer, _) = try TestClient.join(nodes[0], room: "p", name: "observer")
        _ = try TestClient.join(nodes[1], room: "p", name: "doomed")
        let joined = try XCTUnwrap(observer.next(type: "presence"))
        XCTAssertEqual(joined["joined"]?["name"]?.stringValue, "doomed")
        let started = Date()
        nodes[1].kill()
        let left = try XCTUnwrap(observer.next(type: "presence", timeout: 20), "no left for a dead node's client")
        XCTAssertEqual(left["left"]?["name"]?.stringValue, "doomed")
        let seconds = Date().timeIntervalSince(started)
        XCTAssertLessThan(seconds, 15, "presence TTL plus one heartbeat")
        print("cluster presence: a dead node's client left after \(String(format: "%.1f", seconds)) s")
        XCTAssertEqual(try HTTP.get("\(nodes[0].httpBase)/api/state?room=p").json?["presenceCount"]?.doubleValue, 1)
    }

    func testRedisRestartMidTrafficRecoversAndKeepsAcknowledgedIntents() throws {
        let redis = try RedisProcess()
        let nodes = try cluster(redis, nodes: 2, limits: ["intentsPerSecond": 10_000, "intentBurst": 10_000])
        let (writer, welcome) = try TestClient.join(nodes[0], room: "outage", name: "writer")
        let epoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
        // On the other node: one reader stays through the outage, one leaves during it and resumes after.
        let (stayer, _) = try TestClient.join(nodes[1], room: "outage", name: "stayer")
        let (leaver, _) = try TestClient.join(nodes[1], room: "outage", name: "leaver")
        var acked: [UInt64: JSONValue] = [:]
        var events: [UInt64: JSONValue] = [:]
        var unavailable = 0
        var sent = 0
        var leaverSaw: [UInt64] = []
        let record = { (message: JSONValue) in
            let seq = UInt64(message["seq"]?.doubleValue ?? 0)
            switch message["type"]?.stringValue {
            case "event": events[seq] = message
            case "ack": acked[seq] = events[seq]
            default: break
            }
        }
        let phases: [(seconds: Double, action: () throws -> Void)] = [
            (1.0, { redis.kill() }),
            (0.3, {
                leaverSaw = try XCTUnwrap(leaver.drainUntilPong(), "the leaver's node went away")
                    .compactMap { $0["seq"]?.doubleValue.map(UInt64.init) }
                leaver.close()
            }),
            (0.7, { try redis.start() }), (3.0, {}),
        ]
        for phase in phases {
            let until = Date(timeIntervalSinceNow: phase.seconds)
            while Date() < until {
                writer.intent("face.nudgeHappiness", id: "\(sent)", ["delta": sent % 2 == 0 ? 3 : -2])
                sent += 1
                while let message = writer.next(timeout: 0.02) {
                    record(message)
                    if message["code"]?.stringValue == "unavailable" { unavailable += 1 }
                }
            }
            try phase.action()
        }
        XCTAssertGreaterThan(unavailable, 0, "intents during the outage must be refused with unavailable")
        XCTAssertGreaterThan(acked.count, 10)
        let leftAt = try XCTUnwrap(leaverSaw.last, "the leaver saw no event before the outage")
        XCTAssertEqual(leaverSaw, consecutive(1, through: leftAt), "the leaver's events before the outage have no gap")

        // Redis is back: an intent succeeds again (the node may take a moment to reconnect).
        var afterReturn: JSONValue?
        let retryUntil = Date(timeIntervalSinceNow: 15)
        while afterReturn == nil && Date() < retryUntil {
            writer.intent("dragon.toggleHidden", id: "after-return")
            while let message = writer.next(timeout: 5), afterReturn == nil {
                record(message)
                guard message["id"]?.stringValue == "after-return" else { continue }
                if message["type"]?.stringValue == "ack" { afterReturn = message; break }
                XCTAssertEqual(message["code"]?.stringValue, "unavailable", "\(message)")
                Thread.sleep(forTimeInterval: 0.2)
                break
            }
        }
        let ack = try XCTUnwrap(afterReturn, "no intent succeeded within 15 s of Redis's return")
        XCTAssertEqual(ack["result"]?.stringValue, "applied")
        let last = UInt64(try XCTUnwrap(ack["seq"]?.doubleValue))

        // The leaver resumes on the other node: recovered, and every event it missed, in order.
        let (back, resumed) = try TestClient.join(nodes[1], room: "outage", name: "leaver", since: leftAt, epoch: epoch)
        XCTAssertEqual(resumed["recovered"]?.boolValue, true, "resume after the outage")
        XCTAssertEqual(resumed["epoch"]?.stringValue, epoch)
        // This node may hear of the last event just after the welcome: it then follows live.
        XCTAssertLessThanOrEqual(try XCTUnwrap(resumed["seq"]?.doubleValue), Double(last))
        let missed = eventsThrough(last, of: back)
        XCTAssertEqual(missed.map { $0["seq"]?.doubleValue }, consecutive(leftAt + 1, through: last).map { Double($0) }, "the resumed reader saw a gap")
        // The reader that stayed got every event, through the outage, without a gap or a resync.
        let stayed = eventsThrough(last, of: stayer)
        XCTAssertEqual(stayed.map { $0["seq"]?.doubleValue }, consecutive(1, through: last).map { Double($0) }, "the reader that stayed saw a gap")
        let stayedBySeq = Dictionary(stayed.map { (UInt64($0["seq"]?.doubleValue ?? 0), $0) }, uniquingKeysWith: { first, _ in first })
        let missedBySeq = Dictionary(missed.map { (UInt64($0["seq"]?.doubleValue ?? 0), $0) }, uniquingKeysWith: { first, _ in first })
        for (seq, event) in acked where seq > 0 {
            XCTAssertEqual(stayedBySeq[seq], event, "acked event \(seq) differs on the other node")
            if seq > leftAt { XCTAssertEqual(missedBySeq[seq], event, "acked event \(seq) replayed otherwise") }
        }
        print("cluster outage: \(acked.count) acked, \(unavailable) refused while Redis was down, final seq \(last), "
              + "resumed from \(leftAt)")
    }
}
