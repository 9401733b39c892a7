import HappyClientKit
import HappyCore
import XCTest

/// The ledger passes every event on exactly once across reconnects.
final class RoomLedgerTests: XCTestCase {
    func testTheFirstWelcomeIsFreshAndSetsTheResumePoint() {
        var ledger = RoomLedger()
        XCTAssertNil(ledger.resumePoint)
        XCTAssertEqual(ledger.welcome(SessionFixtures.welcome(seq: 130)), .fresh)
        XCTAssertEqual(ledger.resumePoint?.since, 130)
        XCTAssertEqual(ledger.resumePoint?.epoch, "e1")
        XCTAssertEqual(ledger.state?.face.happiness, 50)
        XCTAssertEqual(ledger.presence.map(\.name), ["me"])
    }

    func testEventsAdvanceTheStateAndDuplicatesAreDropped() {
        var ledger = RoomLedger()
        _ = ledger.welcome(SessionFixtures.welcome(seq: 3))
        XCTAssertFalse(ledger.event(SessionFixtures.event(seq: 3, happiness: 10)), "seq 3 is covered by the welcome")
        XCTAssertTrue(ledger.event(SessionFixtures.event(seq: 4, happiness: 40)))
        XCTAssertFalse(ledger.event(SessionFixtures.event(seq: 4, happiness: 40)), "the same event twice")
        XCTAssertEqual(ledger.deliveredSeq, 4)
        XCTAssertEqual(ledger.state?.face.happiness, 40)
    }

    func testAResumeReplaysOnlyTheMissedEventsAndKeepsTheWelcomeState() {
        var ledger = RoomLedger()
        _ = ledger.welcome(SessionFixtures.welcome(seq: 0))
        XCTAssertTrue(ledger.event(SessionFixtures.event(seq: 1, happiness: 51)))
        XCTAssertTrue(ledger.event(SessionFixtures.event(seq: 2, happiness: 52)))
        let outcome = ledger.welcome(SessionFixtures.welcome(seq: 4, recovered: true, happiness: 54))
        XCTAssertEqual(outcome, .resumed(missed: 2))
        XCTAssertFalse(ledger.event(SessionFixtures.event(seq: 2, happiness: 52)), "already seen")
        XCTAssertTrue(ledger.event(SessionFixtures.event(seq: 3, happiness: 53)))
        XCTAssertEqual(ledger.state?.face.happiness, 54, "a replayed event does not roll the state back")
        XCTAssertTrue(ledger.event(SessionFixtures.event(seq: 4, happiness: 54)))
        XCTAssertTrue(ledger.event(SessionFixtures.event(seq: 5, happiness: 55)))
        XCTAssertEqual(ledger.state?.face.happiness, 55)
        XCTAssertEqual(ledger.deliveredSeq, 5)
    }

    func testAWelcomeThatCannotResumeReportsTheGap() {
        var ledger = RoomLedger()
        _ = ledger.welcome(SessionFixtures.welcome(seq: 2))
        XCTAssertEqual(ledger.welcome(SessionFixtures.welcome(seq: 9, recovered: false)), .gap(lastSeen: 2, seq: 9))
        XCTAssertEqual(ledger.deliveredSeq, 9)
        XCTAssertFalse(ledger.event(SessionFixtures.event(seq: 9, happiness: 1)))
    }

    func testANewEpochStartsTheNumberingAgain() {
        var ledger = RoomLedger()
        _ = ledger.welcome(SessionFixtures.welcome(seq: 50))
        XCTAssertEqual(ledger.welcome(SessionFixtures.welcome(epoch: "e2", seq: 0)), .newEpoch)
        XCTAssertTrue(ledger.event(SessionFixtures.event(seq: 1, happiness: 1)))
        XCTAssertEqual(ledger.resumePoint?.epoch, "e2")
    }

    func testAPrimedLedgerAsksForAReplay() {
        var ledger = RoomLedger()
        ledger.prime(since: 7, epoch: "e1")
        XCTAssertEqual(ledger.resumePoint?.since, 7)
        XCTAssertEqual(ledger.welcome(SessionFixtures.welcome(seq: 9, recovered: true)), .resumed(missed: 2))
        XCTAssertTrue(ledger.event(SessionFixtures.event(seq: 8, happiness: 8)))
    }

    func testResyncReplacesTheStateAndSkipsOlderEvents() {
        var ledger = RoomLedger()
        _ = ledger.welcome(SessionFixtures.welcome(seq: 1))
        ledger.resync(seq: 10, state: .standard, presence: [Participant(id: "c2", name: "bob")], presenceCount: 1)
        XCTAssertEqual(ledger.deliveredSeq, 10)
        XCTAssertFalse(ledger.event(SessionFixtures.event(seq: 10, happiness: 3)))
        XCTAssertTrue(ledger.event(SessionFixtures.event(seq: 11, happiness: 3)))
        XCTAssertEqual(ledger.presence.map(\.name), ["bob"])
    }

    func testPresenceChangesUpdateTheList() {
        var ledger = RoomLedger()
        _ = ledger.welcome(SessionFixtures.welcome(seq: 0))
        let bob = Participant(id: "c2", name: "bob")
        ledger.presence(.joined(bob))
        XCTAssertEqual(ledger.presence, [Participant(id: "c1", name: "me"), bob])
        XCTAssertEqual(ledger.presenceCount, 2)
        ledger.presence(.left(bob))
        XCTAssertEqual(ledger.presence.map(\.id), ["c1"])
        XCTAssertEqual(ledger.presenceCount, 1)
    }

    func testTheStateAfterARecentEventIsKnown() {
        var ledger = RoomLedger()
        _ = ledger.welcome(SessionFixtures.welcome(seq: 0))
        _ = ledger.event(SessionFixtures.event(seq: 1, happiness: 61))
        _ = ledger.event(SessionFixtures.event(seq: 2, happiness: 62))
        XCTAssertEqual(ledger.state(after: 1)?.face.happiness, 61)
        XCTAssertEqual(ledger.state(after: 99)?.face.happiness, 62, "unknown seq: the current state")
    }

    func testATickMovesTheStateOnAndSaysWhichEventsNeverCame() {
        var ledger = RoomLedger()
        _ = ledger.welcome(SessionFixtures.welcome(seq: 10))
        let first = ledger.tick(SessionFixtures.tick(from: 8, seq: 12, x: 30))
        XCTAssertTrue(first.isNew, "a first tick may start at or before the welcome's seq")
        XCTAssertNil(first.missed)
        XCTAssertEqual(ledger.deliveredSeq, 12)
        XCTAssertEqual(ledger.state?.dragon.x, 30)
        XCTAssertFalse(ledger.tick(SessionFixtures.tick(from: 11, seq: 12, x: 30)).isNew, "nothing new")
        let gap = ledger.tick(SessionFixtures.tick(from: 16, seq: 20, x: 50))
        XCTAssertTrue(gap.isNew)
        XCTAssertEqual(gap.missed, 13...15)
        XCTAssertEqual(ledger.state?.dragon.x, 50, "the tick's state is current all the same")
        XCTAssertEqual(ledger.deliveredSeq, 20)
    }

    func testATickOfJoinsAndLeavesOnlyKeepsTheSeqAndCountsThePeople() {
        var ledger = RoomLedger()
        _ = ledger.welcome(SessionFixtures.welcome(seq: 4))
        let intake = ledger.tick(SessionFixtures.tick(from: 5, seq: 4, x: 10,
                                                      presence: #"{"count":3,"joined":[{"id":"c2","name":"bob"}],"left":[],"joinedCount":2,"leftCount":0}"#))
        XCTAssertTrue(intake.isNew)
        XCTAssertNil(intake.missed)
        XCTAssertEqual(ledger.deliveredSeq, 4)
        XCTAssertEqual(ledger.presenceCount, 3)
        XCTAssertEqual(ledger.presence.map(\.name), ["me", "bob"])
    }
}
