import Foundation
import HappyClientKit
import XCTest

/// Across a reconnect no event is missed and none is passed on twice: the
/// session asks for what followed its last seq and the room's order holds.
final class ResumeTests: XCTestCase {
    func testAResumedRoomPassesOnEveryEventOnceWithoutAGap() async throws {
        let scripted = ScriptedRoom()
        defer { scripted.leave() }
        let first = try await scripted.join(seq: 5)
        for seq: UInt64 in 6...7 { first.send(SessionFixtures.eventText(seq: seq, happiness: Int(seq))) }
        _ = await eventually { scripted.eventSeqs == [6, 7] ? true : nil }
        first.drop()

        let second = try await scripted.nextConnection()
        XCTAssertEqual(second.query["since"], "7")
        XCTAssertEqual(second.query["epoch"], "e1")
        second.accept()
        // Events 8-10 happened meanwhile: the welcome says so and they follow it;
        // an event sent twice (7 again) is passed on once.
        second.send(SessionFixtures.welcomeText(seq: 10, recovered: true, happiness: 10))
        for seq: UInt64 in [7, 8, 9, 10, 11] { second.send(SessionFixtures.eventText(seq: seq, happiness: Int(seq))) }

        let seqs = await eventually { scripted.eventSeqs.last == 11 ? scripted.eventSeqs : nil }
        XCTAssertEqual(seqs, Array(6...11), "each event once, in order, none skipped")
        XCTAssertFalse(scripted.updates.all.contains { if case .missed = $0 { return true } else { return false } })
        XCTAssertEqual(scripted.room.snapshot.ledger.deliveredSeq, 11)
        XCTAssertEqual(scripted.room.currentState?.face.happiness, 11)
    }

    func testAHistoryTooShortToResumeIsReportedAsMissedNotSkippedSilently() async throws {
        let scripted = ScriptedRoom()
        defer { scripted.leave() }
        let first = try await scripted.join(seq: 5)
        first.drop()
        let second = try await scripted.accept(seq: 40, recovered: false)
        second.send(SessionFixtures.eventText(seq: 41, happiness: 41))
        let updates = await eventually { scripted.eventSeqs == [41] ? scripted.updates.all : nil }
        XCTAssertEqual(updates?.first, .missed(6...40), "the gap is named before what follows it")
    }
}
