@testable import HappyLWS
import XCTest

/// `LWSConnection.text(capacity:_:)`: what C functions write into a buffer
/// (headers, addresses) becomes a String up to the first NUL.
final class CTextTests: XCTestCase {
    private func text(capacity: Int, writing bytes: [UInt8], succeeds: Bool = true) -> String? {
        LWSConnection.text(capacity: capacity) { buffer, length in
            XCTAssertEqual(Int(length), capacity)
            for (index, byte) in bytes.prefix(capacity).enumerated() { buffer[index] = CChar(bitPattern: byte) }
            return succeeds
        }
    }

    func testTheTextEndsAtTheFirstNul() {
        XCTAssertEqual(text(capacity: 16, writing: Array("lobby".utf8) + [0, 65, 66]), "lobby")
    }

    func testABufferTheFunctionLeftUnwrittenIsEmptyNotGarbage() {
        XCTAssertEqual(text(capacity: 64, writing: []), "")
    }

    func testInvalidUTF8IsRepaired() {
        XCTAssertEqual(text(capacity: 8, writing: [0x61, 0xFF, 0x62, 0]), "a\u{FFFD}b")
    }

    func testAFailedCallGivesNil() {
        XCTAssertNil(text(capacity: 8, writing: Array("ab".utf8), succeeds: false))
    }

    func testAFullBufferWithoutNulIsTakenWhole() {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 5000)
        XCTAssertEqual(text(capacity: long.count, writing: long), String(repeating: "x", count: 5000))
    }
}
