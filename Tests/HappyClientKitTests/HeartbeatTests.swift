import Foundation
import HappyClientKit
import XCTest

/// A connection that dies without a word is noticed by the heartbeat: the
/// status does not stay `.connected`, and the session comes back.
final class HeartbeatTests: XCTestCase {
    func testASilentConnectionIsDroppedAtThePingTimeoutAndTheStatusSaysSo() async throws {
        let scripted = ScriptedRoom(backoff: Backoff(initial: 0.05, maximum: 0.1),
                                    heartbeat: Heartbeat(interval: 0.2, timeout: 0.3))
        defer { scripted.leave() }
        let joinedAt = Date()
        let first = try await scripted.join(seq: 9)
        first.answersPings = false

        let left = await scripted.status { $0.isWaiting }
        let waiting = try XCTUnwrap(left, "the status left .connected")
        let noticedAfter = Date().timeIntervalSince(joinedAt)
        guard case .waiting(_, let reason) = waiting else { return XCTFail("\(waiting)") }
        XCTAssertEqual(reason, "no answer to a ping within 0.3 s")
        XCTAssertGreaterThanOrEqual(noticedAfter, 0.5, "not before the quiet interval and the timeout")
        XCTAssertGreaterThanOrEqual(first.pingCount, 1)
        XCTAssertEqual(first.clientClose, InMemoryPeer.ClientClose(code: nil, reason: "aborted"), "dropped")

        let second = try await scripted.accept(seq: 9, recovered: true)
        XCTAssertEqual(second.query["since"], "9")
        let back = await eventually { scripted.isConnectedAgain ? true : nil }
        XCTAssertNotNil(back, "connected again: \(scripted.statuses.all)")
    }

    func testAnAnsweredHeartbeatKeepsTheConnection() async throws {
        let scripted = ScriptedRoom(heartbeat: Heartbeat(interval: 0.1, timeout: 1))
        defer { scripted.leave() }
        let server = try await scripted.join(seq: 0)
        let pinged = await eventually { server.pingCount >= 3 ? true : nil }
        XCTAssertNotNil(pinged, "it pings while quiet")
        XCTAssertEqual(scripted.statuses.all.last, .connected)
        XCTAssertFalse(scripted.statuses.all.contains(where: \.isWaiting), "\(scripted.statuses.all)")
        XCTAssertEqual(scripted.transport.connections.count, 1)
        XCTAssertFalse(server.hasEnded)
    }
}
