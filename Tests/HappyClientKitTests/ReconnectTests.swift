import Foundation
import HappyClientKit
import XCTest

/// The session's reconnects, driven through the in-memory transport: the
/// real state machine against a server end the test plays.
final class ReconnectTests: XCTestCase {
    func testADroppedTransportIsReconnectedWithBackoffAndResumed() async throws {
        let scripted = ScriptedRoom(backoff: Backoff(initial: 0.05, maximum: 0.1))
        defer { scripted.leave() }
        let first = try await scripted.join(seq: 5)
        first.send(SessionFixtures.eventText(seq: 6, happiness: 60))
        _ = await eventually { scripted.eventSeqs == [6] ? true : nil }
        let pending = Task { try await scripted.room.perform(.dragonForward, timeout: 10) }
        let intent = await first.nextMessage()
        XCTAssertNotNil(intent, "the intent went out")

        first.drop()
        let result = await pending.result
        guard case .failure(let error) = result, case .connectionLost? = error as? SessionError else {
            return XCTFail("a request pending at the drop fails at once: \(result)")
        }
        let left = await scripted.status { $0.isWaiting }
        let waiting = try XCTUnwrap(left)
        XCTAssertLessThanOrEqual(try XCTUnwrap(waiting.retryDelay), 0.05, "the first retry: full jitter of 0.05 s")

        let second = try await scripted.accept(seq: 6, recovered: true)
        XCTAssertEqual(second.query["since"], "6", "resumes after the last event seen")
        XCTAssertEqual(second.query["epoch"], "e1")
        XCTAssertEqual(second.query["room"], "lobby")
        let back = await eventually { scripted.isConnectedAgain ? true : nil }
        XCTAssertNotNil(back, "connected again: \(scripted.statuses.all)")
        XCTAssertEqual(scripted.room.snapshot.connectionState, .connected)
    }

    /// PROTOCOL.md section 2: at once on 1012, within 250 ms at random, no
    /// backoff, resuming with since/epoch. The backoff here would wait 30 s.
    func testA1012RestartRejoinsWithin250MillisecondsWithoutBackoffAndResumes() async throws {
        let scripted = ScriptedRoom(backoff: Backoff(initial: 30, maximum: 60, jitter: 0))
        defer { scripted.leave() }
        var server = try await scripted.join(seq: 5)
        var seq: UInt64 = 5
        for restart in 1...3 {
            seq += 1
            server.send(SessionFixtures.eventText(seq: seq, happiness: Int(seq)))
            let expected = seq
            _ = await eventually { scripted.eventSeqs.last == expected ? true : nil }
            let waitsBefore = scripted.statuses.all.filter(\.isWaiting).count
            let closedAt = Date()
            server.close(code: 1012, reason: "server restarting")
            server = try await scripted.nextConnection(within: 5)
            let elapsed = Date().timeIntervalSince(closedAt)
            XCTAssertLessThan(elapsed, 2.5, "restart \(restart): at once (0.25 s, with room for a busy machine), not 30 s")
            let delays = scripted.statuses.all.filter(\.isWaiting).dropFirst(waitsBefore).compactMap(\.retryDelay)
            XCTAssertEqual(delays.count, 1, "restart \(restart)")
            XCTAssertTrue(delays.allSatisfy { (0..<0.25).contains($0) }, "restart \(restart): jitter \(delays)")
            XCTAssertEqual(server.query["since"], "\(seq)", "restart \(restart)")
            XCTAssertEqual(server.query["epoch"], "e1", "restart \(restart)")
            server.accept()
            server.send(SessionFixtures.welcomeText(seq: seq + 1, recovered: true))
            seq += 1
            server.send(SessionFixtures.eventText(seq: seq, happiness: Int(seq)))
        }
        let last = seq
        _ = await eventually { scripted.eventSeqs.last == last ? true : nil }
        XCTAssertEqual(scripted.eventSeqs, Array(6...last), "every event once across three restarts")
    }

    /// PROTOCOL.md section 13: a client must not reconnect by itself after
    /// 4003; nor after any other 4000–4999 close. A retry would come in 10 ms.
    func testA4003KickAndEvery4000To4999CloseEndTheSessionWithNoRetry() async throws {
        for code: UInt16 in [4003, 4004, 4000, 4999] {
            let scripted = ScriptedRoom(backoff: Backoff(initial: 0.01, maximum: 0.01))
            defer { scripted.leave() }
            let server = try await scripted.join(seq: 1)
            server.close(code: code, reason: "removed from the room by an operator: spam")
            let end = await scripted.status {
                if case .ended = $0 { return true } else { return false }
            }
            let ended = try XCTUnwrap(end, "\(code)")
            guard case .ended(let error) = ended else { return XCTFail("\(ended)") }
            switch (code, error) {
            case (4003, .removed(_, let close)), (4004, .removed(_, let close)): XCTAssertEqual(close.code, code)
            case (_, .closed(_, let close)): XCTAssertEqual(close.code, code)
            default: XCTFail("\(code): \(error)")
            }
            let retry = await scripted.transport.nextConnection(within: 0.3)
            XCTAssertNil(retry, "\(code): no retry")
            XCTAssertFalse(scripted.statuses.all.contains(where: \.isWaiting), "\(code): no retry planned")
            XCTAssertEqual(scripted.transport.connections.count, 1, "\(code)")
        }
    }

    func testSuspendingDisconnectsUntilResumedThenResumes() async throws {
        let scripted = ScriptedRoom(backoff: Backoff(initial: 0.01, maximum: 0.01))
        defer { scripted.leave() }
        let first = try await scripted.join(seq: 3)
        scripted.room.suspend()
        let suspended = await scripted.status { $0 == .suspended }
        XCTAssertNotNil(suspended)
        XCTAssertEqual(first.clientClose, InMemoryPeer.ClientClose(code: 1000, reason: "client suspended"))
        let meanwhile = await scripted.transport.nextConnection(within: 0.3)
        XCTAssertNil(meanwhile, "nothing reconnects while suspended")
        do {
            _ = try await scripted.room.perform(.dragonForward)
            XCTFail("performed while suspended")
        } catch {
            guard case .connectionLost = error else { return XCTFail("\(error)") }
        }

        scripted.room.resume()
        let second = try await scripted.accept(seq: 4, recovered: true)
        second.send(SessionFixtures.eventText(seq: 4, happiness: 70))
        XCTAssertEqual(second.query["since"], "3")
        let resumed = await eventually { scripted.eventSeqs == [4] ? true : nil }
        XCTAssertNotNil(resumed, "the event of the pause")
        XCTAssertEqual(scripted.room.snapshot.connectionState, .connected)
    }

    func testReconnectingNowDropsTheConnectionAndComesBackWithoutBackoff() async throws {
        let scripted = ScriptedRoom(backoff: Backoff(initial: 30, maximum: 60, jitter: 0))
        defer { scripted.leave() }
        let first = try await scripted.join(seq: 2)
        scripted.room.reconnectNow()
        let second = try await scripted.nextConnection(within: 5)
        let dropped = await eventually { first.clientClose }
        XCTAssertEqual(dropped, InMemoryPeer.ClientClose(code: nil, reason: "aborted"), "dropped, not closed politely")
        XCTAssertEqual(second.query["since"], "2")
        XCTAssertFalse(scripted.statuses.all.contains(where: \.isWaiting), "no backoff")
    }
}
