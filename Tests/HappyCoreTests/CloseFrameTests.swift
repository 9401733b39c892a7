import HappyCore
import XCTest

final class CloseFrameTests: XCTestCase {
    func testAFrameCarriesTheCodeAndReason() {
        XCTAssertEqual(CloseFrame.frame(code: 1008, reason: "flood"),
                       [0x88, 7, 0x03, 0xF0] + Array("flood".utf8))
        XCTAssertEqual(CloseFrame.frame(code: 1001, reason: ""), [0x88, 2, 0x03, 0xE9])
    }

    func testALongReasonIsCutAtACharacterBoundary() {
        let reason = String(repeating: "a", count: 122) + "é" + "tail"
        let bytes = CloseFrame.reasonBytes(reason)
        XCTAssertEqual(bytes.count, 122, "the two-byte é does not fit in the last byte")
        XCTAssertNotNil(String(validating: bytes, as: UTF8.self), "still valid UTF-8")
        let frame = CloseFrame.frame(code: 1009, reason: reason)
        XCTAssertLessThanOrEqual(frame.count - 2, 125, "a control frame's payload is at most 125 bytes")
        XCTAssertEqual(Int(frame[1]), frame.count - 2)
    }
}
