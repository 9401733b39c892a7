import HappyCore
@testable import HappyServer
import XCTest

/// The service thread's busy share over the last second (`ServiceLoad`), on the manual clock.
final class ServiceLoadTests: XCTestCase {
    private func load() -> (ServiceLoad, ManualTimeSource) {
        let time = ManualTimeSource()
        let clock = ServiceClock(source: time)
        return (ServiceLoad(clock: clock), time)
    }

    /// Turns of `turn` seconds, each waiting `waitShare` of it.
    private func turns(_ load: ServiceLoad, _ time: ManualTimeSource, seconds: Double, waitShare: Double,
                       turn: Double = 0.01) {
        for _ in 0..<Int((seconds / turn).rounded()) {
            time.advance(by: turn)
            load.waited(turn * waitShare)
        }
    }

    func testTheBusyShareIsTheTimeNotSpentWaiting() {
        let (load, time) = load()
        XCTAssertEqual(load.busyShare(), 0, "nothing measured yet")
        turns(load, time, seconds: 2, waitShare: 0.25)
        XCTAssertEqual(load.busyShare(), 0.75, accuracy: 0.02)
        turns(load, time, seconds: 0.5, waitShare: 1)
        XCTAssertEqual(load.busyShare(), 0.375, accuracy: 0.07, "half the window waited, half at 0.75")
        turns(load, time, seconds: 1, waitShare: 1)
        XCTAssertEqual(load.busyShare(), 0, accuracy: 0.01, "a second of waiting")
    }

    func testALongWaitCountsOnlyWithinTheWindow() {
        let (load, time) = load()
        turns(load, time, seconds: 1, waitShare: 0)
        XCTAssertEqual(load.busyShare(), 1, accuracy: 0.01)
        // Five seconds waiting, then 0.3 s of work before the next wait ends.
        time.advance(by: 5.3)
        load.waited(5)
        XCTAssertEqual(load.busyShare(), 0.3, accuracy: 0.1, "the wait came first, the work after it")
    }

    func testTheGaugeIsExported() {
        let test = TestServer()
        test.serve(seconds: 1.5, busyShare: 0.6)
        let text = test.request("GET", "/metrics").text
        XCTAssertTrue(text.contains("# TYPE happy_service_busy_ratio gauge\n"), text)
        let line = text.split(separator: "\n").first { $0.hasPrefix("happy_service_busy_ratio ") }
        let value = line.flatMap { Double($0.split(separator: " ")[1]) }
        XCTAssertEqual(value ?? -1, 0.6, accuracy: 0.02)
    }
}
