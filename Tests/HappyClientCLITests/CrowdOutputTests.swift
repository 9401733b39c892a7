@testable import HappyClientCLI
import HappyClientKit
import HappyCore
import XCTest

/// A crowd room's lines (`watch`) and what `play` shows of the crowd: ticks,
/// presence batches, delivery switches, votes, the tally of the last second.
final class CrowdOutputTests: XCTestCase {
    private static let state = """
        {"face":{"happiness":50,"smile":0,"scale":0.9},\
        "heart":{"rate":0.5,"fillColor":"#ff0000","strokeColor":"#000000","lineWidth":1},\
        "dragon":{"x":60,"y":10,"hidden":false}}
        """

    private func tick(from: Int, seq: Int, names: String, senders: [String] = ["alice"], senderCount: Int? = nil,
                      changes: String = "", presence: String? = nil, votes: String? = nil) -> TickMessage {
        let list = senders.map { #"{"id":"id-\#($0)","name":"\#($0)"}"# }.joined(separator: ",")
        let text = """
            {"type":"tick","room":"lobby","from":\(from),"seq":\(seq),"time":1764504245000,"names":{\(names)},\
            "senders":[\(list)],"senderCount":\(senderCount ?? senders.count),"changes":[\(changes)],\
            "state":\(Self.state)\(presence.map { #","presence":\#($0)"# } ?? "")\(votes.map { #","votes":\#($0)"# } ?? "")}
            """
        guard case .tick(let tick)? = ServerMessage.decode(text)?.0 else { fatalError("bad tick: \(text)") }
        return tick
    }

    private let forwardAndBack = #""forwardButtonClicked:":41,"backButtonClicked:":19"#

    func testATickIsOneLineWithItsRangeSendersAndCounts() {
        let lines = EventLines(offsetSeconds: 0)
        let crowd = tick(from: 131, seq: 190, names: forwardAndBack, senders: ["alice", "bob"], senderCount: 37,
                         presence: #"{"count":5234,"joined":[],"left":[],"joinedCount":120,"leftCount":33}"#)
        XCTAssertEqual(lines.tick(crowd), "12:04:05 #131–190 alice and 36 others: 41 forward, 19 back; +120 joined, 33 left (5234 here)")
        XCTAssertEqual(lines.tick(tick(from: 7, seq: 7, names: #""faceView:didChangeHappiness:":1"#)),
                       "12:04:05 #7 alice: 1 happiness")
        XCTAssertEqual(lines.tick(tick(from: 8, seq: 9, names: #""heartView:didChangeRate:":2"#, senders: ["alice", "bob"])),
                       "12:04:05 #8–9 alice and bob: 2 rate")
        XCTAssertEqual(lines.tick(tick(from: 8, seq: 9, names: #""heartView:didChangeRate:":2"#, senders: ["alice"], senderCount: 2)),
                       "12:04:05 #8–9 alice and 1 other: 2 rate")
        let presenceOnly = tick(from: 10, seq: 9, names: "", senders: [],
                                presence: #"{"count":3,"joined":[{"id":"c9","name":"dave"}],"left":[],"joinedCount":1,"leftCount":0}"#)
        XCTAssertEqual(lines.tick(presenceOnly), "12:04:05 +1 joined, 0 left (3 here)")
    }

    func testATicksCountsUseTheEventTablesWords() {
        let lines = EventLines(offsetSeconds: 0)
        for name in EventName.allCases {
            XCTAssertEqual(lines.tick(tick(from: 3, seq: 4, names: #""\#(name.rawValue)":2"#)),
                           "12:04:05 #3–4 alice: 2 \(name.spec.word)")
        }
        XCTAssertEqual(lines.tick(tick(from: 3, seq: 3, names: #""heartView:didGlow:":1"#)), "12:04:05 #3 alice: 1 heartView:didGlow:",
                       "a name this client does not know, as sent")
    }

    func testAVotedTickCountsItsVotesAndNamesItsVoters() {
        let voted = tick(from: 191, seq: 191, names: #""forwardButtonClicked:":1"#, senders: ["carol"], senderCount: 1215,
                         votes: #"{"forward":812,"back":403}"#)
        XCTAssertEqual(EventLines(offsetSeconds: 0).tick(voted), "12:04:05 #191 carol and 1214 others: 812 forward, 403 back")
        XCTAssertEqual(EventLines.who([], count: 0), "the crowd")
        XCTAssertEqual(EventLines.who([], count: 1), "1 person")
        XCTAssertEqual(EventLines.who([], count: 40), "40 people")
    }

    func testAVotedEventNamesTheCrowdAndItsVotes() throws {
        let text = """
            {"type":"event","seq":12,"room":"lobby","time":1764504245000,"name":"forwardButtonClicked:","sender":null,\
            "changes":[{"path":"dragon.x","from":50,"to":60}],"state":\(Self.state),"votes":{"forward":3,"back":2}}
            """
        guard case .event(let event)? = ServerMessage.decode(text)?.0 else { return XCTFail("not an event") }
        XCTAssertEqual(EventLines(offsetSeconds: 0).event(event),
                       "12:04:05 #12 the crowd (3 forward, 2 back)  dragon (50, 10) → (60, 10)  forwardButtonClicked:")
        XCTAssertEqual(PlayModel.label(after: event, status: DragonStatus())?.shown, "the crowd: forward, (x,y) = (60, 10)")
    }

    func testDeliverySwitchesMissedEventsAndBatches() {
        let lines = EventLines(offsetSeconds: 0)
        XCTAssertEqual(lines.delivery(.tick, tickMs: 50, atMilliseconds: 1764504245000), "12:04:05 delivery: one tick every 50 ms")
        XCTAssertEqual(lines.delivery(.each, tickMs: 50, atMilliseconds: 1764504245000), "12:04:05 delivery: one message per event")
        XCTAssertEqual(lines.missed(41...44, atMilliseconds: 1764504245000), "12:04:05 events #41–44 did not arrive (the state is current)")
        XCTAssertEqual(lines.missed(41...41, atMilliseconds: 1764504245000), "12:04:05 event #41 did not arrive (the state is current)")
        let batch = PresenceBatch(count: 5234, joinedCount: 120, leftCount: 33)
        XCTAssertEqual(lines.presence(.batch(batch), atMilliseconds: 1764504247000), "12:04:07 +120 joined, 33 left (5234 here)")
    }

    func testTheTallyCountsTheLastSecondFromTicksVotesAndEvents() {
        var tally = CrowdTally()
        XCTAssertFalse(tally.isCrowd(at: 0, delivery: .each))
        XCTAssertTrue(tally.isCrowd(at: 0, delivery: .tick))
        tally.add(tick(from: 1, seq: 60, names: forwardAndBack, senders: ["alice", "bob"]), at: 10.0)
        tally.add(tick(from: 61, seq: 61, names: #""forwardButtonClicked:":1"#, senders: ["carol"],
                       votes: #"{"forward":5,"back":7}"#), at: 10.5)
        XCTAssertEqual(tally.counts(at: 10.6).forward, 46)
        XCTAssertEqual(tally.counts(at: 10.6).back, 26)
        XCTAssertEqual(tally.counts(at: 11.2).forward, 5, "the first tick is over a second old")
        XCTAssertEqual(tally.counts(at: 11.6).forward, 0)
        XCTAssertEqual(tally.recent.map(\.name), ["carol", "alice", "bob"], "newest first")
        XCTAssertTrue(tally.isCrowd(at: 15, delivery: .each), "a crowd lingers after its last tick")
        XCTAssertFalse(tally.isCrowd(at: 21, delivery: .each))
        XCTAssertEqual(tally.line(at: 10.6, here: 5234), "here (5234) · last second: 46 forward, 26 back · recent: carol, alice, bob")
    }

    func testTheLabelAfterATickFollowsItsDragonEvents() {
        let status = DragonStatus()
        let moved = #"{"path":"dragon.x","from":40,"to":60}"#
        let onlyForward = tick(from: 1, seq: 3, names: #""forwardButtonClicked:":3"#, senders: ["alice"], changes: moved)
        XCTAssertEqual(PlayModel.label(after: onlyForward, status: status)?.shown, "alice: forward, (x,y) = (60, 10)")
        let both = tick(from: 1, seq: 60, names: forwardAndBack, senders: ["alice", "bob"], senderCount: 37, changes: moved)
        XCTAssertEqual(PlayModel.label(after: both, status: status)?.shown, "the crowd: forward, (x,y) = (60, 10)")
        let backwards = tick(from: 1, seq: 60, names: forwardAndBack, changes: #"{"path":"dragon.x","from":80,"to":60}"#)
        XCTAssertEqual(TickLabel.event(of: backwards), .backButtonClicked, "the net move wins over the count")
        XCTAssertEqual(TickLabel.event(of: tick(from: 1, seq: 60, names: forwardAndBack)), .forwardButtonClicked,
                       "no net move: the most frequent")
        XCTAssertNil(PlayModel.label(after: tick(from: 1, seq: 2, names: #""heartView:didChangeRate:":2"#), status: status))
    }

    func testPlayShowsTheCrowdInThePeopleLine() {
        let texts = PlayScreen.texts(room: "big", url: "ws://x/ws", you: nil, connection: "connected", seq: 9, scene: nil,
                                     statusLabel: "", lastAnswer: nil, presence: [], presenceCount: 5234,
                                     steering: "steering: nobody", crowd: "here (5234) · last second: 4 forward, 1 back · recent: a")
        XCTAssertEqual(texts.presence, "here (5234) · last second: 4 forward, 1 back · recent: a")
    }
}
