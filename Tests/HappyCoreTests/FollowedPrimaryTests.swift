import HappyCore
import XCTest

/// What `/healthz` and `/metrics` say about the Redis primary a node follows.
final class FollowedPrimaryTests: XCTestCase {
    func testHealthLineNamesThePrimaryAndTheLastSwitch() {
        XCTAssertEqual(FollowedPrimary(address: "10.0.0.2:6379", source: "fixed").healthLine(now: 5_000),
                       "redis primary 10.0.0.2:6379 (fixed), never switched")
        let switched = FollowedPrimary(address: "10.0.0.3:6379", source: "sentinel mymaster", switches: 2,
                                       lastSwitchMilliseconds: 1_000)
        XCTAssertEqual(switched.healthLine(now: 13_350),
                       "redis primary 10.0.0.3:6379 (sentinel mymaster), switched 2 times, last 12.3 s ago")
    }

    func testPrometheusSamples() {
        let text = FollowedPrimary(address: "10.0.0.3:6379", source: "sentinel m", switches: 1,
                                   lastSwitchMilliseconds: 1_796_400_000_042).prometheusText
        XCTAssertTrue(text.contains("happy_redis_primary_info{address=\"10.0.0.3:6379\",source=\"sentinel m\"} 1\n"), text)
        XCTAssertTrue(text.contains("happy_redis_primary_switches_total 1\n"), text)
        XCTAssertTrue(text.contains("happy_redis_primary_last_switch_timestamp_seconds 1796400000.042\n"), text)
        XCTAssertTrue(FollowedPrimary(address: "h:1", source: "fixed").prometheusText
            .contains("happy_redis_primary_last_switch_timestamp_seconds 0\n"))
    }
}
