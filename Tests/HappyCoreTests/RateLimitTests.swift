import XCTest
import HappyCore

final class RateLimitTests: XCTestCase {
    private func takes(_ bucket: inout TokenBucket, at now: Double, attempts: Int) -> Int {
        (0..<attempts).reduce(0) { count, _ in bucket.take(now: now) ? count + 1 : count }
    }

    // MARK: TokenBucket

    func testStartsWithAFullBurst() {
        var bucket = TokenBucket(ratePerSecond: 2, burst: 3, now: 100)
        XCTAssertEqual(bucket.ratePerSecond, 2)
        XCTAssertEqual(bucket.burst, 3)
        XCTAssertTrue(bucket.take(now: 100))
        XCTAssertTrue(bucket.take(now: 100))
        XCTAssertTrue(bucket.take(now: 100))
        XCTAssertFalse(bucket.take(now: 100))
        XCTAssertFalse(bucket.take(now: 100))
    }

    func testRefillsAtTheConfiguredRate() {
        var bucket = TokenBucket(ratePerSecond: 2, burst: 3, now: 0)
        XCTAssertEqual(takes(&bucket, at: 0, attempts: 10), 3)
        XCTAssertFalse(bucket.take(now: 0.25))
        XCTAssertTrue(bucket.take(now: 0.5))
        XCTAssertFalse(bucket.take(now: 0.5))
        XCTAssertEqual(takes(&bucket, at: 1.5, attempts: 10), 2)
    }

    func testRefillIsCappedAtTheBurst() {
        var bucket = TokenBucket(ratePerSecond: 2, burst: 3, now: 0)
        XCTAssertEqual(takes(&bucket, at: 0, attempts: 3), 3)
        XCTAssertEqual(takes(&bucket, at: 3600, attempts: 10), 3)
    }

    func testPartialTokensAccumulate() {
        var bucket = TokenBucket(ratePerSecond: 4, burst: 1, now: 0)
        XCTAssertTrue(bucket.take(now: 0))
        XCTAssertFalse(bucket.take(now: 0.125))
        XCTAssertTrue(bucket.take(now: 0.25))
        XCTAssertFalse(bucket.take(now: 0.375))
        XCTAssertTrue(bucket.take(now: 0.5))
    }

    func testTheProtocolDefaultsAllow120ThenSixtyPerSecond() {
        var bucket = TokenBucket(ratePerSecond: 60, burst: 120, now: 0)
        XCTAssertEqual(takes(&bucket, at: 0, attempts: 500), 120)
        XCTAssertEqual(takes(&bucket, at: 1, attempts: 500), 60)
        XCTAssertEqual(takes(&bucket, at: 1.5, attempts: 500), 30)
    }

    func testTimeGoingBackwardsNeitherRefillsNorBreaks() {
        var bucket = TokenBucket(ratePerSecond: 1, burst: 2, now: 10)
        XCTAssertEqual(takes(&bucket, at: 10, attempts: 5), 2)
        XCTAssertFalse(bucket.take(now: 5))
        XCTAssertFalse(bucket.take(now: 10.5))
        XCTAssertTrue(bucket.take(now: 11))
    }

    // MARK: FloodMeter

    func testFloodingMeansMoreThanTheLimitWithinTheWindow() {
        var meter = FloodMeter(limit: 3)
        XCTAssertEqual(meter.window, 10)
        XCTAssertFalse(meter.record(now: 0))
        XCTAssertFalse(meter.record(now: 1))
        XCTAssertFalse(meter.record(now: 2))
        XCTAssertTrue(meter.record(now: 3))
    }

    func testOldRecordsLeaveTheWindow() {
        var meter = FloodMeter(limit: 3, window: 10)
        for time in [0.0, 1, 2] { XCTAssertFalse(meter.record(now: time)) }
        XCTAssertFalse(meter.record(now: 11.5))
        XCTAssertFalse(meter.record(now: 12.5))
        XCTAssertFalse(meter.record(now: 12.6))
        XCTAssertTrue(meter.record(now: 12.7))
    }

    func testARecordExactlyOneWindowOldHasExpired() {
        var meter = FloodMeter(limit: 1, window: 10)
        XCTAssertFalse(meter.record(now: 0))
        XCTAssertFalse(meter.record(now: 10))
        XCTAssertTrue(meter.record(now: 19.5))
    }

    func testASteadyTrickleNeverFloodsButABurstOnTopDoes() {
        var meter = FloodMeter(limit: 100, window: 10)
        for i in 0..<1000 {
            XCTAssertFalse(meter.record(now: Double(i) * 0.25), "record \(i)")
        }
        let now = 999 * 0.25
        for extra in 1...60 {
            XCTAssertFalse(meter.record(now: now), "extra \(extra)")
        }
        XCTAssertTrue(meter.record(now: now))
    }

    func testLimitOfTheProtocolDefault() {
        var meter = FloodMeter(limit: 100)
        let flags = (0..<101).map { _ in meter.record(now: 50) }
        XCTAssertEqual(flags.firstIndex(of: true), 100)
    }
}
