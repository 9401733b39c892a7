import Foundation
import HappyLWS
import Synchronization
import XCTest

/// Timers on the host's event loop fire when due, also one scheduled before
/// a later one that lws has already armed its own timer for (lws 4.1's
/// libev glue cannot bring an armed timer forward; the host nudges it).
final class EventLoopTimerTests: XCTestCase {
    func testATimerDueBeforeAnArmedLaterOneFiresOnTime() throws {
        let handler = DefaultHandler()
        let host = try LWSServerHost(LWSServerDescription(
            host: "127.0.0.1", port: 0, protocols: [LWSProtocol(name: "test.v1", id: 0, rxBufferSize: 0, txPacketSize: 0)]),
                                     handler: handler)
        defer { host.destroy() }
        var lateFired = false, earlyFiredAt: Date?
        let late = LWSTimer { lateFired = true }
        let early = LWSTimer { earlyFiredAt = Date() }
        defer { late.cancel(); early.cancel() }

        // Another thread wakes the loop every 2 s, so that a timer the loop
        // misses fails the test late instead of hanging it.
        let finished = Mutex(false)
        let context = host.context
        Thread {
            while !finished.withLock({ $0 }) {
                Thread.sleep(forTimeInterval: 2)
                // Under the lock: the host is destroyed only after `finished`.
                finished.withLock { if !$0 { context.cancelService() } }
            }
        }.start()
        defer { finished.withLock { $0 = true } }

        late.schedule(on: host.context, afterSeconds: 30)
        // Turns until lws has armed its timer for the late one (at most a
        // second apart on the epoll loop, where nothing else wakes it).
        let armedBy = Date().addingTimeInterval(1.5)
        while Date() < armedBy { XCTAssertTrue(host.service()) }
        let scheduledAt = Date()
        early.schedule(on: host.context, afterSeconds: 0.05)
        while earlyFiredAt == nil, Date().timeIntervalSince(scheduledAt) < 10 { XCTAssertTrue(host.service()) }

        let delay = try XCTUnwrap(earlyFiredAt, "the early timer never fired").timeIntervalSince(scheduledAt)
        XCTAssertGreaterThanOrEqual(delay, 0.045)
        XCTAssertLessThan(delay, 0.9, "waited for something else to wake the loop")
        XCTAssertFalse(lateFired)
    }
}

/// Leaves every callback to lws.
private final class DefaultHandler: LWSCallbackHandler {
    func handleCallback(_ callback: LWSCallback) -> Int32 {
        callback.passToDefault()
    }
}
