import HappyLWS
import XCTest

final class PeerCloseTests: XCTestCase {
    private func parse(_ payload: [UInt8]) -> PeerClose? {
        payload.withUnsafeBytes { PeerClose(payload: $0) }
    }

    func testCodeAndReason() {
        XCTAssertEqual(parse([0x03, 0xF1] + Array("room full".utf8)), PeerClose(code: 1009, reason: "room full"))
        XCTAssertEqual(parse([0x03, 0xF5] + Array("réessayez".utf8)), PeerClose(code: 1013, reason: "réessayez"))
    }

    func testACodeWithoutAReason() {
        XCTAssertEqual(parse([0x03, 0xE8]), PeerClose(code: 1000, reason: ""))
    }

    func testAPayloadTooShortForACodeIsNoClose() {
        XCTAssertNil(parse([]))
        XCTAssertNil(parse([0x03]))
    }

    func testInvalidUTF8InTheReasonIsRepaired() {
        XCTAssertEqual(parse([0x0F, 0xA0, 0x61, 0xFF, 0x62]), PeerClose(code: 4000, reason: "a\u{FFFD}b"))
    }
}
