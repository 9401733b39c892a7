@testable import HappyClientKit
import XCTest

/// The session's rules as values, with no clock and no transport: when to
/// reconnect and after how long, when to ping, which path changes matter.
final class SessionRulesTests: XCTestCase {
    private let policy = ReconnectPolicy(reconnects: true, backoff: Backoff(initial: 1, maximum: 8, jitter: 1))
    private let lost = SessionError.connectionLost(url: "ws://h:1/ws", reason: "gone")

    private func decide(_ code: UInt16?, reason: String = "", attempt: Int = 0, random: Double = 0.5,
                        everWelcomed: Bool = true) -> ReconnectPolicy.Decision {
        policy.decide(close: CloseReason(code: code, reason: reason), error: lost, everWelcomed: everWelcomed,
                      attempt: attempt, random: random)
    }

    func testADropIsRetriedWithFullJitterBackoff() {
        XCTAssertEqual(decide(nil, attempt: 0, random: 0.5), .retry(after: 0.5, attempt: 1))
        XCTAssertEqual(decide(nil, attempt: 2, random: 0.5), .retry(after: 2, attempt: 3), "bound 4, half of it")
        XCTAssertEqual(decide(1001, attempt: 9, random: 0.25), .retry(after: 6, attempt: 10), "capped at 8")
        XCTAssertEqual(decide(nil, attempt: 0, random: 0.999_999), .retry(after: 1e-6, attempt: 1), accuracy: 1e-9)
    }

    func testARestartIsRetriedWithinAQuarterSecondWithNoBackoff() {
        for random in [0, 0.5, 0.999_999] {
            guard case .retry(let delay, let attempt) = decide(1012, attempt: 6, random: random) else {
                return XCTFail("1012 is retried")
            }
            XCTAssertLessThan(delay, 0.25)
            XCTAssertGreaterThanOrEqual(delay, 0)
            XCTAssertEqual(attempt, 6, "the backoff does not grow")
        }
    }

    func testApplicationClosesAndRefusalsEndTheSession() {
        for code: UInt16 in [4000, 4003, 4004, 4500, 4999, 1008, 1003, 1009] {
            XCTAssertEqual(decide(code), .end(lost), "\(code)")
        }
        XCTAssertEqual(decide(1002, reason: "server full"), .retry(after: 0.5, attempt: 1),
                       "lws's 1002 with a reason is 1012-1015: backoff, as it cannot tell which")
        guard case .retry(let restart, 6) = decide(1002, reason: WebSocketCloseCode.serviceRestartReason, attempt: 6,
                                                   random: 0.5) else {
            return XCTFail("a Happy server's restart, as lws reports it, is rejoined at once")
        }
        XCTAssertLessThan(restart, 0.25)
        XCTAssertEqual(decide(nil, everWelcomed: false), .end(lost), "a first connection that fails is an error")
        let once = ReconnectPolicy(reconnects: false, backoff: Backoff())
        XCTAssertEqual(once.decide(close: nil, error: lost, everWelcomed: true, attempt: 0, random: 0), .end(lost))
    }

    func testTheHeartbeatPingsAfterAQuietIntervalAndGivesUpAfterTheTimeout() {
        var monitor = HeartbeatMonitor(Heartbeat(interval: 10, timeout: 5), openedAt: 100)
        XCTAssertEqual(monitor.check(at: 104), .wait(until: 110))
        monitor.heard(at: 106)
        XCTAssertEqual(monitor.check(at: 110), .wait(until: 116), "a message postpones the ping")
        XCTAssertEqual(monitor.check(at: 116), .ping(checkAt: 121))
        XCTAssertEqual(monitor.check(at: 118), .wait(until: 121), "one ping at a time")
        XCTAssertEqual(monitor.check(at: 121), .timedOut)
        var answered = HeartbeatMonitor(Heartbeat(interval: 10, timeout: 5), openedAt: 0)
        XCTAssertEqual(answered.check(at: 10), .ping(checkAt: 15))
        answered.heard(at: 10.5)
        XCTAssertEqual(answered.check(at: 15), .wait(until: 20.5), "the pong came: quiet again")
    }

    func testOnlyAUsablePathThatDiffersFromTheLastCallsForAReconnect() {
        var filter = PathChangeFilter()
        let wifi = PathSummary(isUsable: true, interfaces: ["en0"])
        let cellular = PathSummary(isUsable: true, interfaces: ["pdp_ip0"])
        let offline = PathSummary(isUsable: false, interfaces: [])
        XCTAssertFalse(filter.update(wifi), "the path at start")
        XCTAssertFalse(filter.update(wifi), "the same path again")
        XCTAssertTrue(filter.update(cellular), "Wi-Fi to cellular")
        XCTAssertFalse(filter.update(offline), "no network: nothing to reconnect to")
        XCTAssertTrue(filter.update(cellular), "back online")
    }
}

private func XCTAssertEqual(_ decision: ReconnectPolicy.Decision, _ expected: ReconnectPolicy.Decision,
                            accuracy: Double, file: StaticString = #filePath, line: UInt = #line) {
    guard case .retry(let delay, let attempt) = decision, case .retry(let want, let wantAttempt) = expected else {
        return XCTAssertEqual(decision, expected, file: file, line: line)
    }
    XCTAssertEqual(delay, want, accuracy: accuracy, file: file, line: line)
    XCTAssertEqual(attempt, wantAttempt, file: file, line: line)
}
