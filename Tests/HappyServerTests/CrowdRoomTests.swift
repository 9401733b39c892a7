import Foundation
import HappyCore
import XCTest

/// Crowd rooms on a live server (PROTOCOL.md section 12): ticks under load,
/// the switch and back, acks after their tick, history and resume still per
/// event, presence batches, votes, and the configuration's checks.
final class CrowdRoomTests: XCTestCase {
    private func server(_ crowd: [String: Any], limits: [String: Any] = [:]) throws -> ServerProcess {
        var allLimits: [String: Any] = ["intentsPerSecond": 10_000, "intentBurst": 10_000]
        for (key, value) in limits { allLimits[key] = value }
        return try ServerProcess(["crowd": crowd, "limits": allLimits])
    }

    /// The ticks (and other messages) a reader gets until one reaches `seq`.
    private func ticks(through seq: UInt64, of client: TestClient, timeout: Double = 20,
                       file: StaticString = #filePath, line: UInt = #line) -> [JSONValue] {
        var ticks: [JSONValue] = []
        let deadline = Date(timeIntervalSinceNow: timeout)
        while (ticks.last?["seq"]?.doubleValue ?? -1) < Double(seq), Date() < deadline {
            guard let message = client.next(timeout: max(0.1, deadline.timeIntervalSinceNow)) else { break }
            XCTAssertNotEqual(message["type"]?.stringValue, "resync", "no resync under this load", file: file, line: line)
            XCTAssertNotEqual(message["type"]?.stringValue, "event", "tick delivery sends no single event", file: file, line: line)
            if message["type"]?.stringValue == "tick" { ticks.append(message) }
        }
        return ticks
    }

    func testATickRoomSendsGapFreeTicksUnderLoadWithEveryAckAfterItsTick() throws {
        let server = try self.server(["mode": "tick", "tickMs": 50])
        let (reader, welcome) = try TestClient.join(server, name: "reader")
        XCTAssertEqual(welcome["delivery"]?.stringValue, "tick")
        XCTAssertEqual(welcome["tickMs"]?.doubleValue, 50)
        let writers = try (0..<4).map { try TestClient.join(server, name: "w\($0)").0 }
        let perWriter = 50
        let started = Date()
        for round in 0..<perWriter {
            for (index, writer) in writers.enumerated() {
                // Dragon buttons always make an event, even when blocked at the edge.
                writer.intent(round % 2 == 0 ? "dragon.forward" : "dragon.back", id: "\(index)-\(round)")
            }
        }
        let total = UInt64(writers.count * perWriter)
        let ticks = self.ticks(through: total, of: reader)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(ticks.last?["seq"]?.doubleValue, Double(total))
        var expectedFrom = 1.0
        for tick in ticks {
            let from = tick["from"]?.doubleValue ?? -1, seq = tick["seq"]?.doubleValue ?? -1
            guard seq >= from else { continue }  // presence only
            XCTAssertEqual(from, expectedFrom, "no gap, no overlap")
            let counted = tick["names"].map { names -> Double in
                if case .object(let members) = names { return members.compactMap { $0.value.doubleValue }.reduce(0, +) }
                return 0
            } ?? 0
            XCTAssertEqual(counted, seq - from + 1, "names count every event of the range")
            expectedFrom = seq + 1
        }
        XCTAssertLessThanOrEqual(Double(ticks.count), elapsed / 0.05 + 2, "at most one tick per tickMs")

        // A writer's acks each come after a tick that covers their seq.
        var covered = 0.0
        var acks = 0
        while acks < perWriter, let message = writers[0].next(timeout: 10) {
            if message["type"]?.stringValue == "tick" { covered = max(covered, message["seq"]?.doubleValue ?? 0) }
            if message["type"]?.stringValue == "ack" {
                acks += 1
                XCTAssertLessThanOrEqual(message["seq"]?.doubleValue ?? .infinity, covered, "ack before its tick")
            }
        }
        XCTAssertEqual(acks, perWriter)
        let state = try HTTP.get("\(server.httpBase)/api/state").json
        XCTAssertEqual(state?["seq"]?.doubleValue, Double(total))
        XCTAssertEqual(state?["state"], ticks.last?["state"], "the last tick carries the room's state")
    }

    func testAutoSwitchesToTicksUnderLoadAndBackOnceQuiet() throws {
        let server = try self.server(["tickAbove": 30])
        let (reader, welcome) = try TestClient.join(server, name: "reader")
        XCTAssertEqual(welcome["delivery"]?.stringValue, "each")
        let (writer, _) = try TestClient.join(server, name: "writer")
        for index in 0..<40 { writer.intent("dragon.forward", id: "f\(index)") }
        var sawEvent = false
        var switched: JSONValue?
        while switched == nil, let message = reader.next(timeout: 10) {
            if message["type"]?.stringValue == "event" { sawEvent = true }
            if message["type"]?.stringValue == "delivery" { switched = message }
        }
        XCTAssertTrue(sawEvent, "one message per event before the load rose")
        XCTAssertEqual(switched?["mode"]?.stringValue, "tick")
        XCTAssertEqual(ticks(through: 40, of: reader).last?["seq"]?.doubleValue, 40)

        // Quiet for 10 s: the room goes back to one message per event.
        let back = reader.next(type: "delivery", timeout: 20)
        XCTAssertEqual(back?["mode"]?.stringValue, "each")
        writer.intent("dragon.back", id: "after")
        XCTAssertEqual(reader.next(type: "event", timeout: 5)?["seq"]?.doubleValue, 41)
    }

    func testHistoryAndResumeStillGiveEachEvent() throws {
        let server = try self.server(["mode": "tick"])
        let (writer, welcome) = try TestClient.join(server, name: "writer")
        let epoch = try XCTUnwrap(welcome["epoch"]?.stringValue)
        for value in 1...10 { writer.intent("face.setHappiness", id: "s\(value)", ["value": value * 5]) }
        XCTAssertEqual(ticks(through: 10, of: writer).last?["seq"]?.doubleValue, 10)

        let history = try HTTP.get("\(server.httpBase)/api/history").json
        XCTAssertEqual(history?["events"]?.arrayValue?.compactMap { $0["seq"]?.doubleValue }, (1...10).map(Double.init))
        XCTAssertEqual(history?["events"]?.arrayValue?.first?["type"]?.stringValue, "event")

        let (resumed, again) = try TestClient.join(server, name: "back", since: 7, epoch: epoch)
        XCTAssertEqual(again["recovered"]?.boolValue, true)
        let replayed = (0..<3).compactMap { _ in resumed.next(type: "event", timeout: 5)?["seq"]?.doubleValue }
        XCTAssertEqual(replayed, [8, 9, 10], "the missed events one by one")
    }

    func testACrowdHearsOfJoinsAndLeavesInBatches() throws {
        let server = try self.server(["presenceBatchAbove": 3])
        let (first, _) = try TestClient.join(server, name: "first")
        var others = try (0..<5).map { try TestClient.join(server, name: "p\($0)").0 }
        others.removeLast().close()
        var joined = 0, left = 0, singles = 0
        var lastCount = 0.0
        let deadline = Date(timeIntervalSinceNow: 10)
        while (joined < 5 || left < 1), Date() < deadline, let message = first.next(type: "presence", timeout: 5) {
            if message["count"] != nil {
                joined += Int(message["joinedCount"]?.doubleValue ?? 0)
                left += Int(message["leftCount"]?.doubleValue ?? 0)
                lastCount = message["count"]?.doubleValue ?? 0
            } else {
                singles += 1
                if message["joined"] != nil { joined += 1 } else { left += 1 }
            }
        }
        XCTAssertEqual(joined, 5)
        XCTAssertEqual(left, 1)
        XCTAssertLessThanOrEqual(singles, 3, "one by one only while the room was small")
        XCTAssertEqual(lastCount, 5, "the batch's count is everyone in the room")
        _ = others
    }

    func testVotesMoveTheDragonOncePerTickByMajority() throws {
        let server = try self.server(["dragon": "vote", "tickMs": 200])
        let voters = try (0..<5).map { try TestClient.join(server, name: "v\($0)").0 }
        for (index, voter) in voters.enumerated() {
            voter.intent(index < 3 ? "dragon.forward" : "dragon.back", id: "vote\(index)")
        }
        let acks = voters.compactMap { $0.next(type: "ack", timeout: 5) }
        XCTAssertEqual(acks.count, 5)
        XCTAssertEqual(Set(acks.compactMap { $0["result"]?.stringValue }), ["counted"])
        let seqs = Set(acks.compactMap { $0["seq"]?.doubleValue })
        let history = try HTTP.get("\(server.httpBase)/api/history").json?["events"]?.arrayValue ?? []
        XCTAssertLessThanOrEqual(history.count, 2, "at most one event per tick (the votes may straddle two)")
        let votes = history.reduce((0.0, 0.0)) { sum, event in
            (sum.0 + (event["votes"]?["forward"]?.doubleValue ?? 0), sum.1 + (event["votes"]?["back"]?.doubleValue ?? 0))
        }
        XCTAssertEqual(votes.0 + votes.1, 5, "every vote counted once")
        XCTAssertEqual(history.first?["sender"], .null)
        XCTAssertEqual(seqs.subtracting([0]), Set(history.compactMap { $0["seq"]?.doubleValue }),
                       "each ack names its round's event (0 for a tie)")
    }

    func testTheCrowdKeysAreChecked() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("happy-crowd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = #""port": 0, "webRoot": "\#(ServerProcess.repositoryRoot.appendingPathComponent("web").path)", "dataDir": "\#(directory.appendingPathComponent("data").path)""#
        let cases: [(String, String)] = [
            (#""crowd": { "mode": "sometimes" }"#, #"crowd.mode must be one of "auto", "tick", "each""#),
            (#""crowd": { "tickMs": 5 }"#, "crowd.tickMs must be between 10 and 1000"),
            (#""crowd": { "dragon": true }"#, "crowd.dragon"),
            (#""crowd": { "tickAbove": 0 }"#, "crowd.tickAbove must be at least 1"),
            (#""crowd": { "ticks": 5 }"#, #"unknown key "crowd.ticks""#),
        ]
        for (fragment, message) in cases {
            let config = directory.appendingPathComponent("config.json")
            try Data("{ \(base), \(fragment) }".utf8).write(to: config)
            let outcome = try ServerProcess.run(["--config", config.path], in: directory)
            XCTAssertNotEqual(outcome.status, 0, fragment)
            XCTAssertTrue(outcome.stderr.contains(message), "\(fragment): \(outcome.stderr)")
        }
    }
}

/// Crowd rooms shared by two nodes through Redis: each node builds its ticks
/// from the room's events, gap-free on both; votes are counted per node.
final class CrowdClusterTests: XCTestCase {
    private func nodes(_ redis: RedisProcess, crowd: [String: Any]) throws -> [ServerProcess] {
        try (0..<2).map { _ in
            try ServerProcess(["cluster": ["redis": redis.url], "crowd": crowd,
                               "limits": ["intentsPerSecond": 10_000, "intentBurst": 10_000]])
        }
    }

    /// The event ranges of the ticks a client gets until one reaches `seq`; a gap or a resync fails.
    private func tickRanges(through seq: Double, of client: TestClient, file: StaticString = #filePath,
                            line: UInt = #line) -> [(Double, Double)] {
        var ranges: [(Double, Double)] = []
        let deadline = Date(timeIntervalSinceNow: 20)
        while (ranges.last?.1 ?? 0) < seq, Date() < deadline, let message = client.next(timeout: 10) {
            XCTAssertNotEqual(message["type"]?.stringValue, "resync", file: file, line: line)
            guard message["type"]?.stringValue == "tick", let from = message["from"]?.doubleValue,
                  let last = message["seq"]?.doubleValue, last >= from else { continue }
            if let previous = ranges.last { XCTAssertEqual(from, previous.1 + 1, "gap-free", file: file, line: line) }
            ranges.append((from, last))
        }
        return ranges
    }

    func testTicksAreGapFreeOnEveryNodeWithWritersOnBoth() throws {
        let redis = try RedisProcess()
        let nodes = try self.nodes(redis, crowd: ["mode": "tick"])
        let readers = try nodes.enumerated().map { try TestClient.join($1, room: "crowd", name: "r\($0)").0 }
        let writers = try nodes.enumerated().map { try TestClient.join($1, room: "crowd", name: "w\($0)").0 }
        let perWriter = 40
        for round in 0..<perWriter {
            for (index, writer) in writers.enumerated() {
                writer.intent(round % 2 == 0 ? "dragon.forward" : "dragon.back", id: "\(index)-\(round)")
            }
        }
        let total = Double(perWriter * writers.count)
        for reader in readers {
            let ranges = tickRanges(through: total, of: reader)
            XCTAssertEqual(ranges.last?.1, total)
            XCTAssertEqual(ranges.first?.0, 1)
        }
        let states = try nodes.map { try HTTP.get("\($0.httpBase)/api/state?room=crowd").json }
        XCTAssertEqual(states.map { $0?["seq"]?.doubleValue }, [total, total])
        XCTAssertEqual(states[0]?["state"], states[1]?["state"])
    }

    func testEachNodeCountsItsOwnVotesAndCommitsAtMostOneEventPerTick() throws {
        let redis = try RedisProcess()
        let nodes = try self.nodes(redis, crowd: ["dragon": "vote", "tickMs": 300])
        var voters: [TestClient] = []
        for (index, node) in nodes.enumerated() {
            for copy in 0..<3 { voters.append(try TestClient.join(node, room: "vote", name: "v\(index)\(copy)").0) }
        }
        for (index, voter) in voters.enumerated() { voter.intent("dragon.forward", id: "f\(index)") }
        let acks = voters.compactMap { $0.next(type: "ack", timeout: 10) }
        XCTAssertEqual(acks.count, voters.count)
        XCTAssertEqual(Set(acks.compactMap { $0["result"]?.stringValue }), ["counted"])
        let history = try HTTP.get("\(nodes[1].httpBase)/api/history?room=vote").json?["events"]?.arrayValue ?? []
        XCTAssertGreaterThanOrEqual(history.count, 2, "one voted event per node")
        XCTAssertLessThanOrEqual(history.count, 4, "at most one per node per tick (the votes may straddle two)")
        let forward = history.compactMap { $0["votes"]?["forward"]?.doubleValue }.reduce(0, +)
        XCTAssertEqual(forward, Double(voters.count), "every vote counted once, on its own node")
        XCTAssertEqual(Set(history.compactMap { $0["name"]?.stringValue }), ["forwardButtonClicked:"])
    }
}
