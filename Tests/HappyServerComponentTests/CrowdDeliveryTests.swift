import HappyCore
@testable import HappyServer
import XCTest

/// Crowd rooms in-process (PROTOCOL.md section 12): ticks, the switch
/// between delivery modes, presence batches and votes, on the manual clock.
final class CrowdDeliveryTests: XCTestCase {
    private func server(_ change: (inout HappyConfig.CrowdSection) -> Void = { _ in },
                        limits: (inout HappyConfig.LimitsSection) -> Void = { _ in }) -> TestServer {
        TestServer(config: TestServer.config {
            change(&$0.crowd)
            limits(&$0.limits)
        })
    }

    /// Moves the clock on by one tick and ends the loop turn (the tick timer fires).
    private func nextTick(_ test: TestServer, ms: Int = 50) {
        test.advance(by: Double(ms) / 1000 + 0.001)
        test.turn()
    }

    private func types(_ messages: [JSONValue]) -> [String] { messages.map { $0["type"]?.stringValue ?? "?" } }

    // MARK: ticks

    func testATickRoomSaysSoInTheWelcomeAndSendsOneTickForItsEvents() {
        let test = server { $0.mode = .tick }
        let alice = test.connect(name: "alice")
        let welcome = test.messages(of: alice).first
        XCTAssertEqual(welcome?["delivery"]?.stringValue, "tick")
        XCTAssertEqual(welcome?["tickMs"]?.intValue, 50)
        let bob = test.joined(name: "bob")
        _ = test.messages(of: alice)
        test.sendIntent(alice, "face.setHappiness", id: "a1", #""value":60"#)
        test.sendIntent(bob, "dragon.forward", id: "b1")
        test.sendIntent(alice, "face.setHappiness", id: "a2", #""value":70"#)
        XCTAssertEqual(types(test.messages(of: bob)), [], "nothing before the tick")

        nextTick(test)
        let toBob = test.messages(of: bob)
        XCTAssertEqual(types(toBob), ["tick", "ack"], "the sender's ack after the tick that carries its event")
        let tick = toBob[0]
        XCTAssertEqual(tick["from"]?.intValue, 1)
        XCTAssertEqual(tick["seq"]?.intValue, 3)
        XCTAssertEqual(tick["names"]?["faceView:didChangeHappiness:"]?.intValue, 2)
        XCTAssertEqual(tick["names"]?["forwardButtonClicked:"]?.intValue, 1)
        XCTAssertEqual(tick["senders"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["alice", "bob"])
        XCTAssertEqual(tick["senderCount"]?.intValue, 2)
        XCTAssertEqual(tick["state"]?["face"]?["happiness"]?.intValue, 70)
        let toAlice = test.messages(of: alice)
        XCTAssertEqual(types(toAlice), ["tick", "ack", "ack"], "the sender gets the same tick as everyone")
        XCTAssertEqual(toAlice[0], tick)
        XCTAssertEqual(test.metrics.ticks, 1)
    }

    func testTicksFollowEachOtherWithoutGapsAndOnlyWhenSomethingHappened() {
        let test = server { $0.mode = .tick }
        let client = test.joined()
        var ranges: [(Int, Int)] = []
        for round in 0..<3 {
            for step in 0...round { test.sendIntent(client, "face.nudgeHappiness", #""delta":\#(step + 1)"#) }
            nextTick(test)
            for tick in test.messages(of: client).ofType("tick") {
                ranges.append((tick["from"]?.intValue ?? -1, tick["seq"]?.intValue ?? -1))
            }
        }
        XCTAssertEqual(ranges.map(\.0), [1, 2, 4])
        XCTAssertEqual(ranges.map(\.1), [1, 3, 6])
        nextTick(test)
        nextTick(test)
        XCTAssertEqual(test.messages(of: client), [], "a quiet room sends no tick")
    }

    func testATicksChangesAreNetAndLeaveOutWhatEndedWhereItStarted() {
        let test = server { $0.mode = .tick }
        let client = test.joined()
        test.sendIntent(client, "face.setHappiness", #""value":60"#)
        test.sendIntent(client, "face.setHappiness", #""value":50"#)
        test.sendIntent(client, "dragon.forward")
        test.sendIntent(client, "dragon.forward")
        nextTick(test)
        let changes = test.messages(of: client).ofType("tick").first?["changes"]?.arrayValue ?? []
        XCTAssertEqual(changes.compactMap { $0["path"]?.stringValue }, ["dragon.x"])
        XCTAssertEqual(changes.first?["from"]?.doubleValue, 10)
        XCTAssertEqual(changes.first?["to"]?.doubleValue, 30)
    }

    func testAClientThatWroteNoTickYetGetsOneTickForAll() {
        let test = server { $0.mode = .tick }
        let slow = test.joined(name: "slow"), writer = test.joined(name: "writer")
        for round in 0..<3 {
            test.sendIntent(writer, "face.nudgeHappiness", #""delta":\#(round + 1)"#)
            nextTick(test)
            _ = test.messages(of: writer)
        }
        let ticks = test.messages(of: slow).ofType("tick")
        XCTAssertEqual(ticks.count, 1, "one pending tick, extended: \(ticks)")
        XCTAssertEqual(ticks.first?["from"]?.intValue, 1)
        XCTAssertEqual(ticks.first?["seq"]?.intValue, 3)
        XCTAssertEqual(ticks.first?["names"]?["faceView:didChangeHappiness:"]?.intValue, 3)
        XCTAssertGreaterThanOrEqual(test.metrics.ticksMerged, 1)
    }

    func testAnHTTPIntentInATickRoomIsAnsweredAfterTheTick() {
        let test = server { $0.mode = .tick }
        _ = test.joined()
        let post = test.begin("POST", "/api/intent", body: Array(#"{"id":"h1","action":"dragon.forward"}"#.utf8))
        test.pump(post)
        XCTAssertNil(post.status)
        nextTick(test)
        test.pump(post)
        XCTAssertEqual(post.status, 200)
        XCTAssertEqual(post.json?["seq"]?.intValue, 1)
    }

    // MARK: switching

    func testAutoSwitchesToTicksUnderLoadAndBackAfterTenQuietSeconds() {
        let test = server { $0.tickAbove = 10 }
        let (a, b, c) = (test.joined(name: "a"), test.joined(name: "b"), test.joined(name: "c"))
        _ = [a, b].map { test.messages(of: $0) }
        for value in 51...54 { test.sendIntent(a, "face.setHappiness", #""value":\#(value)"#) }
        let toC = test.messages(of: c)
        // 4 events × 3 clients = 12 > 10: the fourth event already rides in a tick.
        XCTAssertEqual(types(toC), ["event", "event", "event", "delivery"])
        XCTAssertEqual(toC.last?["mode"]?.stringValue, "tick")
        XCTAssertEqual(toC.last?["tickMs"]?.intValue, 50)
        nextTick(test)
        XCTAssertEqual(test.messages(of: c).ofType("tick").first?["from"]?.intValue, 4)
        XCTAssertEqual(test.metrics.deliverySwitches, 1)

        for _ in 0..<9 { test.advance(by: 1); test.turn() }
        XCTAssertEqual(test.messages(of: c), [], "not quiet for 10 s yet")
        test.sendIntent(b, "face.setHappiness", #""value":40"#)
        for _ in 0..<12 { test.advance(by: 1); test.turn() }
        XCTAssertEqual(types(test.messages(of: c)), ["tick", "delivery"], "the last tick, then the switch")
        test.sendIntent(b, "face.setHappiness", #""value":41"#)
        XCTAssertEqual(types(test.messages(of: c)), ["event"])
        XCTAssertEqual(test.metrics.deliverySwitches, 2)
    }

    func testFixedEachNeverTicks() {
        let test = server { $0.mode = .each; $0.tickAbove = 1 }
        let (a, b) = (test.joined(name: "a"), test.joined(name: "b"))
        for value in 51...60 { test.sendIntent(a, "face.setHappiness", #""value":\#(value)"#) }
        nextTick(test)
        XCTAssertEqual(Set(types(test.messages(of: b))), ["event"])
    }

    // MARK: presence

    func testACrowdsJoinsAndLeavesGoInOneBatchPerTick() {
        let test = server({ $0.presenceBatchAbove = 2 }, limits: { $0.presenceBroadcastMax = 3 })
        let first = test.joined(name: "first")
        _ = test.joined(name: "second")
        XCTAssertEqual(types(test.messages(of: first)), ["presence"], "two clients: one message per join")
        let late = (1...3).map { test.joined(name: "late\($0)") }
        test.close(late[0])
        XCTAssertEqual(test.messages(of: first), [], "batched until the tick")
        nextTick(test)
        let batches = test.messages(of: first)
        XCTAssertEqual(types(batches), ["presence"])
        let batch = batches.first
        XCTAssertEqual(batch?["count"]?.intValue, 4)
        XCTAssertEqual(batch?["joinedCount"]?.intValue, 3)
        XCTAssertEqual(batch?["leftCount"]?.intValue, 1)
        XCTAssertEqual(batch?["joined"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["late1"],
                       "named only up to presenceBroadcastMax clients")
        XCTAssertEqual(test.metrics.presenceBatches, 1)
    }

    func testACrowdsWelcomeNamesNoMoreThanItsBatchesDo() {
        let test = server({ $0.presenceBatchAbove = 60 }, limits: { $0.presenceBroadcastMax = 1000 })
        for index in 1...70 { _ = test.joined(name: "p\(index)") }
        let late = test.connect(name: "late")
        let welcome = test.messages(of: late).first
        XCTAssertEqual(welcome?["presenceCount"]?.intValue, 71)
        XCTAssertEqual(welcome?["presence"]?.arrayValue?.count, 60, "a crowd of 71: the batch size, not 1000")
        let small = server { $0.presenceBatchAbove = 60 }
        for index in 1...5 { _ = small.joined(name: "p\(index)") }
        XCTAssertEqual(small.messages(of: small.connect(name: "x")).first?["presence"]?.arrayValue?.count, 6)
    }

    func testPastPresenceBroadcastMaxACrowdsCountsGoOutOncePerSecond() {
        let test = server({ $0.presenceBatchAbove = 2 }, limits: { $0.presenceBroadcastMax = 3 })
        let first = test.joined(name: "first")
        (2...4).forEach { _ = test.joined(name: "p\($0)") }
        nextTick(test)
        _ = test.messages(of: first)
        _ = test.joined(name: "p5")
        nextTick(test)
        XCTAssertEqual(test.messages(of: first), [], "counts only: not a tick later")
        test.advance(by: 0.95)
        test.turn()
        let batch = test.messages(of: first)
        XCTAssertEqual(types(batch), ["presence"], "a second after the last batch")
        XCTAssertEqual(batch.first?["count"]?.intValue, 5)
        XCTAssertEqual(batch.first?["joinedCount"]?.intValue, 1)
    }

    func testABigTickingRoomTicksLessOftenAndSaysSo() {
        let test = server {
            $0.mode = .tick
            $0.tickWritesPerSecond = 1000  // 50 clients at 20 ticks a second
        }
        let watcher = test.joined(name: "watcher")
        var others = (1...74).map { test.joined(name: "p\($0)") }
        nextTick(test)
        let changed = test.messages(of: watcher)
        XCTAssertEqual(types(changed), ["delivery", "tick"], "the new tick announced before the tick")
        XCTAssertEqual(changed.first?["mode"]?.stringValue, "tick")
        XCTAssertEqual(changed.first?["tickMs"]?.intValue, 80, "75 clients within 1000 ticks a second")
        others.append(test.connect(name: "late"))
        XCTAssertEqual(test.messages(of: others.last!).first?["tickMs"]?.intValue, 80, "a welcome names the room's tick")

        test.sendIntent(watcher, "dragon.forward", id: "f")
        nextTick(test)
        XCTAssertEqual(types(test.messages(of: watcher)), [], "not 50 ms after the last tick")
        nextTick(test, ms: 30)
        XCTAssertEqual(types(test.messages(of: watcher)), ["tick", "ack"])

        // Back to 50 ms once the room has shrunk by more than a quarter.
        for client in others.prefix(60) { test.close(client) }
        others.removeFirst(60)
        test.sendIntent(watcher, "dragon.back", id: "b")
        nextTick(test, ms: 80)
        let shrunk = test.messages(of: watcher)
        XCTAssertEqual(types(shrunk), ["delivery", "tick", "ack"])
        XCTAssertEqual(shrunk.first?["tickMs"]?.intValue, 50)
    }

    func testATicksLengthFollowsHowBusyTheServiceThreadIs() {
        // A budget so small that two clients' ticks weigh (a tenth of it: 10 writes a second).
        let test = server {
            $0.mode = .tick
            $0.tickWritesPerSecond = 100
        }
        let watcher = test.joined(name: "watcher"), writer = test.joined(name: "writer")
        var delta = 1
        /// Events every tenth of a second for `seconds`, the service thread
        /// busy for `busyShare` of it; the ticks announced meanwhile.
        func serve(seconds: Double, busyShare: Double) -> [Int] {
            var announced: [Int] = []
            for _ in 0..<Int((seconds * 10).rounded()) {
                test.sendIntent(writer, "face.nudgeHappiness", #""delta":\#(delta)"#)
                delta = -delta
                test.serve(seconds: 0.1, busyShare: busyShare)
                announced += test.messages(of: watcher).ofType("delivery").map {
                    XCTAssertEqual($0["mode"]?.stringValue, "tick")
                    return $0["tickMs"]?.intValue ?? -1
                }
                _ = test.messages(of: writer)
            }
            return announced
        }

        XCTAssertEqual(serve(seconds: 2, busyShare: 0.3), [], "an idle thread: the tick of the room's size")
        XCTAssertEqual(serve(seconds: 3, busyShare: 0.95), [80, 120, 180], "busy: half again, once a second")
        XCTAssertEqual(test.messages(of: test.connect(name: "late")).first?["tickMs"]?.intValue, 180,
                       "a welcome names the longer tick")
        XCTAssertEqual(serve(seconds: 5, busyShare: 0.65), [], "between the marks: the tick holds")
        let idle = serve(seconds: 5, busyShare: 0.1)
        XCTAssertEqual(idle, [130], "a quarter shorter after 3 s idle (the busy second before included)")
        XCTAssertEqual(serve(seconds: 12, busyShare: 0.1), [90, 60, 50], "back to the floor, a step every 3 s")
        XCTAssertEqual(serve(seconds: 5, busyShare: 0.1), [], "never below the floor")
    }

    func testASmallRoomKeepsItsTickHoweverBusyTheThread() {
        // Two clients' ticks are far from a tenth of the default budget (100 000 writes a second).
        let test = server { $0.mode = .tick }
        let watcher = test.joined(name: "watcher"), writer = test.joined(name: "writer")
        for index in 0..<30 {
            test.sendIntent(writer, "face.nudgeHappiness", #""delta":\#(index % 2 == 0 ? 1 : -1)"#)
            test.serve(seconds: 0.1, busyShare: 0.95)
            XCTAssertEqual(test.messages(of: watcher).ofType("delivery"), [], "a busy thread, a small room: no longer tick")
            _ = test.messages(of: writer)
        }
    }

    func testPresenceRidesInTheTickInTickMode() {
        let test = server { $0.mode = .tick }
        let watcher = test.joined(name: "watcher")
        _ = test.joined(name: "newcomer")
        XCTAssertEqual(test.messages(of: watcher), [])
        nextTick(test)
        let tick = test.messages(of: watcher).first
        XCTAssertEqual(tick?["type"]?.stringValue, "tick")
        XCTAssertEqual(tick?["from"]?.intValue, 1, "no event: from is seq + 1")
        XCTAssertEqual(tick?["seq"]?.intValue, 0)
        XCTAssertEqual(tick?["presence"]?["joined"]?.arrayValue?.compactMap { $0["name"]?.stringValue },
                       ["watcher", "newcomer"], "both joined since the last tick")
        XCTAssertEqual(tick?["presence"]?["count"]?.intValue, 2)
    }

    // MARK: votes

    func testTheMajorityOfATicksVotesMovesTheDragonOnce() {
        let test = server { $0.dragon = .vote }
        let voters = (1...5).map { test.joined(name: "v\($0)") }
        for (index, voter) in voters.enumerated() {
            test.sendIntent(voter, index < 3 ? "dragon.forward" : "dragon.back", id: "vote\(index)")
        }
        XCTAssertEqual(test.server.directory["lobby"]?.room?.committed.seq, 0, "counted, not applied")
        nextTick(test)
        let messages = test.messages(of: voters[0]).filter { $0["type"]?.stringValue != "presence" }
        XCTAssertEqual(types(messages), ["event", "ack"])
        let event = messages[0]
        XCTAssertEqual(event["name"]?.stringValue, "forwardButtonClicked:")
        XCTAssertEqual(event["sender"], .null)
        XCTAssertEqual(event["votes"]?["forward"]?.intValue, 3)
        XCTAssertEqual(event["votes"]?["back"]?.intValue, 2)
        XCTAssertEqual(messages[1]["result"]?.stringValue, "counted")
        XCTAssertEqual(messages[1]["seq"]?.intValue, 1)
        XCTAssertEqual(messages[1]["id"]?.stringValue, "vote0")
        XCTAssertEqual(test.messages(of: voters[4]).ofType("ack").first?["id"]?.stringValue, "vote4")
        XCTAssertEqual(test.metrics.voteRounds, 1)
    }

    func testATieMovesNothingAndEachVoterIsAnsweredWithSeqZero() {
        let test = server { $0.dragon = .vote }
        let (a, b) = (test.joined(name: "a"), test.joined(name: "b"))
        _ = test.messages(of: a)
        test.sendIntent(a, "dragon.forward", id: "f")
        test.sendIntent(b, "dragon.back", id: "b")
        nextTick(test)
        let toA = test.messages(of: a)
        XCTAssertEqual(types(toA), ["ack"])
        XCTAssertEqual(toA.first?["seq"]?.intValue, 0)
        XCTAssertEqual(toA.first?["result"]?.stringValue, "counted")
        XCTAssertEqual(test.server.directory["lobby"]?.room?.committed.seq, 0)
    }

    func testAClientCountsOncePerTickItsLatestVote() {
        let test = server { $0.dragon = .vote }
        let (a, b) = (test.joined(name: "a"), test.joined(name: "b"))
        test.sendIntent(a, "dragon.forward", id: "1")
        test.sendIntent(a, "dragon.forward", id: "2")
        test.sendIntent(a, "dragon.back", id: "3")
        test.sendIntent(b, "dragon.back", id: "4")
        nextTick(test)
        let event = test.messages(of: b).ofType("event").first
        XCTAssertEqual(event?["name"]?.stringValue, "backButtonClicked:")
        XCTAssertEqual(event?["votes"]?["forward"]?.intValue, 0)
        XCTAssertEqual(event?["votes"]?["back"]?.intValue, 2)
        XCTAssertEqual(test.messages(of: a).ofType("ack").compactMap { $0["id"]?.stringValue }, ["1", "2", "3"],
                       "every vote is answered")
    }

    func testVotesInATickRoomRideInTheTickAndAreAckedAfterIt() {
        let test = server { $0.dragon = .vote; $0.mode = .tick }
        let voters = (1...3).map { test.joined(name: "v\($0)") }
        for voter in voters { test.sendIntent(voter, "dragon.forward", id: voter.id) }
        nextTick(test)  // the round ends: the event is recorded (it rides in the next tick)
        nextTick(test)
        let messages = test.messages(of: voters[0])
        let tick = messages.ofType("tick").last
        XCTAssertEqual(tick?["votes"]?["forward"]?.intValue, 3)
        XCTAssertEqual(tick?["senderCount"]?.intValue, 3, "the voters are the tick's senders")
        XCTAssertEqual(types(messages).suffix(2), ["tick", "ack"])
    }

    func testAVoterWhoAlsoSentAnotherIntentIsOneSenderOfTheTick() {
        let test = server { $0.dragon = .vote; $0.mode = .tick }
        // Ten voters: a tick names the last eight; v1, the first, is counted but not named.
        let voters = (1...10).map { test.joined(name: "v\($0)") }
        for voter in voters { test.sendIntent(voter, "dragon.forward", id: voter.id) }
        nextTick(test)  // the round ends: its event rides in the next tick
        test.sendIntent(voters[0], "face.setHappiness", id: "h", #""value":90"#)
        nextTick(test)
        let tick = test.messages(of: voters[1]).ofType("tick").last
        XCTAssertEqual(tick?["names"]?["forwardButtonClicked:"]?.intValue, 1)
        XCTAssertEqual(tick?["names"]?["faceView:didChangeHappiness:"]?.intValue, 1)
        XCTAssertEqual(tick?["senderCount"]?.intValue, 10, "v1 voted and set the happiness: one sender")
    }

    func testOtherIntentsAreNotVotes() {
        let test = server { $0.dragon = .vote }
        let client = test.joined()
        test.sendIntent(client, "face.setHappiness", id: "h", #""value":90"#)
        XCTAssertEqual(types(test.messages(of: client)), ["event", "ack"], "applied at once")
    }
}
