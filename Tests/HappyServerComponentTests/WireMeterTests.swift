@testable import HappyServer
import XCTest

/// The frame-level checks made from a socket's byte count: masking and control-frame floods.
final class WireMeterTests: XCTestCase {
    /// Bytes of masked client frames with these payload sizes.
    private func masked(_ sizes: [Int]) -> Int64 {
        sizes.reduce(0) { $0 + Int64($1) + WireMeter.headerBytes(payload: Int64($1)) }
    }

    func testMaskedFramesOfEverySizeAreExactlyAccountedFor() {
        var meter = WireMeter(bytesRead: 200, compressed: false, now: 0)
        let sizes = [0, 1, 125, 126, 65_535, 65_536, 70_000]
        for size in sizes { meter.received(size, frameEnds: true) }
        XCTAssertEqual(meter.check(bytesRead: 200 + masked(sizes), now: 1), .fine)
        XCTAssertEqual(WireMeter.headerBytes(payload: 125), 6)
        XCTAssertEqual(WireMeter.headerBytes(payload: 126), 8)
        XCTAssertEqual(WireMeter.headerBytes(payload: 65_536), 14)
    }

    func testFewerBytesThanMaskedFramesNeedMeansAnUnmaskedFrame() {
        var meter = WireMeter(bytesRead: 0, compressed: false, now: 0)
        meter.received(20, frameEnds: true)
        XCTAssertEqual(meter.check(bytesRead: 22, now: 1), .unmaskedFrame, "2 header bytes, no key")
        var compressed = WireMeter(bytesRead: 0, compressed: true, now: 0)
        compressed.received(200, frameEnds: true)
        XCTAssertEqual(compressed.check(bytesRead: 40, now: 1), .fine, "inflated payloads say nothing of masking")
    }

    func testAFrameInProgressIsNoProof() {
        var meter = WireMeter(bytesRead: 0, compressed: false, now: 0)
        meter.received(1000, frameEnds: false)
        XCTAssertEqual(meter.check(bytesRead: 1000, now: 1), .fine, "its header may still be ahead of what was read")
    }

    func testControlFramesPassWithinTheBudgetAndAFloodDoesNot() {
        var meter = WireMeter(bytesRead: 0, compressed: false, now: 0)
        // A ping a second for a minute: a few bytes each.
        for second in 1...60 { XCTAssertEqual(meter.check(bytesRead: Int64(second * 10), now: Double(second)), .fine) }
        XCTAssertEqual(meter.check(bytesRead: 600 + WireMeter.burstBytes / 2, now: 61), .fine, "a burst within the allowance")
        XCTAssertEqual(meter.check(bytesRead: 600 + 4 * WireMeter.burstBytes, now: 62), .controlFlood)
    }

    func testNoCountNoVerdict() {
        var meter = WireMeter(bytesRead: nil, compressed: false, now: 0)
        XCTAssertTrue(meter.isDue(now: 0, every: 1), "never looked at")
        meter.received(100, frameEnds: true)
        XCTAssertEqual(meter.check(bytesRead: 1, now: 1), .fine)
        XCTAssertFalse(meter.isDue(now: 1.5, every: 1))
    }
}
