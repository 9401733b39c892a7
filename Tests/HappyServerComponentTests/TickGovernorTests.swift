import HappyCore
@testable import HappyServer
import XCTest

/// A ticking room's tick on a busy or idle service thread (`TickGovernor`).
final class TickGovernorTests: XCTestCase {
    /// Feeds the governor one busy share every `every` seconds for `seconds`;
    /// returns the ticks it asked for after each change.
    private func follow(_ governor: inout TickGovernor, busyShare: Double, floorMs: Int = 50, from start: Double,
                        seconds: Double, every: Double = 0.25) -> [Int] {
        var ticks: [Int] = []
        for index in 0..<Int((seconds / every).rounded(.up)) {
            if governor.update(busyShare: busyShare, floorMs: floorMs, now: start + Double(index) * every) != nil {
                ticks.append(governor.tickMs(floorMs: floorMs))
            }
        }
        return ticks
    }

    // MARK: the governor

    func testTheTickGrowsByHalfAStepPerSecondWhileTheThreadIsBusy() {
        var governor = TickGovernor()
        XCTAssertEqual(governor.tickMs(floorMs: 50), 50, "the floor before any load")
        XCTAssertEqual(follow(&governor, busyShare: 0.9, from: 0, seconds: 3.05), [80, 120, 180, 270],
                       "one step a second, in steps of 10 ms")
    }

    func testTheTickStopsAtItsMaximum() {
        var governor = TickGovernor()
        let ticks = follow(&governor, busyShare: 1, from: 0, seconds: 20)
        XCTAssertEqual(ticks.last, TickGovernor.maximumMs)
        XCTAssertEqual(ticks.filter { $0 == TickGovernor.maximumMs }.count, 1, "no step past the maximum")
        XCTAssertEqual(governor.tickMs(floorMs: 50), 1000)
    }

    func testBetweenTheMarksTheTickHolds() {
        var governor = TickGovernor()
        _ = follow(&governor, busyShare: 0.9, from: 0, seconds: 1.05)
        XCTAssertEqual(governor.tickMs(floorMs: 50), 120)
        // Hovering around the marks, never past them, changes nothing.
        var now = 2.0
        for share in [0.79, 0.51, 0.8, 0.5, 0.6, 0.79, 0.52, 0.7] {
            XCTAssertNil(governor.update(busyShare: share, floorMs: 50, now: now), "share \(share)")
            now += 0.5
        }
        XCTAssertEqual(governor.tickMs(floorMs: 50), 120)
    }

    func testAShortIdleSpellDoesNotShrinkTheTick() {
        var governor = TickGovernor()
        _ = follow(&governor, busyShare: 0.9, from: 0, seconds: 1.05)
        // Idle for 2.5 s, busy again for a moment, idle for 2.5 s: no spell of 3 s.
        XCTAssertEqual(follow(&governor, busyShare: 0.2, from: 2, seconds: 2.5), [])
        XCTAssertEqual(follow(&governor, busyShare: 0.6, from: 4.5, seconds: 0.25), [])
        XCTAssertEqual(follow(&governor, busyShare: 0.2, from: 4.75, seconds: 2.5), [])
        XCTAssertEqual(governor.tickMs(floorMs: 50), 120)
    }

    func testOnceIdleTheTickShrinksByAQuarterEveryThreeSecondsBackToTheFloor() {
        var governor = TickGovernor()
        _ = follow(&governor, busyShare: 0.9, from: 0, seconds: 2.05)
        XCTAssertEqual(governor.tickMs(floorMs: 50), 180)
        XCTAssertEqual(follow(&governor, busyShare: 0.1, from: 3, seconds: 3), [], "not idle for 3 s yet")
        XCTAssertEqual(follow(&governor, busyShare: 0.1, from: 6, seconds: 12), [130, 90, 60, 50])
        XCTAssertNil(governor.stretchedMs, "back at the floor")
        XCTAssertEqual(follow(&governor, busyShare: 0.1, from: 18, seconds: 10), [], "nothing below the floor")
    }

    func testTheFloorStaysTheFloor() {
        var governor = TickGovernor()
        _ = follow(&governor, busyShare: 0.9, from: 0, seconds: 0.05)
        XCTAssertEqual(governor.tickMs(floorMs: 50), 80)
        XCTAssertEqual(governor.tickMs(floorMs: 200), 200, "a room that grew past the stretch ticks at its floor")
        // Busy again: the next step starts from the floor, not from the old stretch.
        XCTAssertEqual(governor.update(busyShare: 0.9, floorMs: 200, now: 1), .grew)
        XCTAssertEqual(governor.tickMs(floorMs: 200), 300)
        XCTAssertEqual(governor.tickMs(floorMs: 1000), 1000)
    }
}
