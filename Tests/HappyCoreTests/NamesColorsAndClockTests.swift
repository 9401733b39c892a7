import XCTest
import HappyCore

final class NamesColorsAndClockTests: XCTestCase {
    // MARK: room names

    func testValidRoomNames() {
        for name in ["lobby", "a", "Room_1-b", "0", "-", "_", String(repeating: "z", count: 64)] {
            XCTAssertTrue(Names.isValidRoom(name), name)
        }
    }

    func testInvalidRoomNames() {
        for name in ["", String(repeating: "z", count: 65), "a b", "café", "a/b", "a.b", "room?", "😀", "a\n", "%41"] {
            XCTAssertFalse(Names.isValidRoom(name), name)
        }
    }

    // MARK: display names

    func testDisplayNamesCountCharactersNotBytes() {
        XCTAssertTrue(Names.isValidDisplayName("alice"))
        XCTAssertTrue(Names.isValidDisplayName("Zoë 😀 你好"))
        XCTAssertTrue(Names.isValidDisplayName(String(repeating: "é", count: 32)))
        XCTAssertTrue(Names.isValidDisplayName(String(repeating: "😀", count: 32)))
        XCTAssertFalse(Names.isValidDisplayName(String(repeating: "a", count: 33)))
        XCTAssertFalse(Names.isValidDisplayName(""))
    }

    func testDisplayNamesMustBePrintable() {
        for name in ["a\u{0}b", "tab\there", "line\nbreak", "del\u{7F}", "zero\u{200B}width", "bidi\u{202E}x",
                     "private\u{E000}", "sep\u{2028}"] {
            XCTAssertFalse(Names.isValidDisplayName(name), name.debugDescription)
        }
        XCTAssertTrue(Names.isValidDisplayName("with space"))
    }

    // MARK: roles

    func testRoles() {
        XCTAssertLessThan(Role.viewer, Role.player)
        XCTAssertLessThan(Role.player, Role.admin)
        XCTAssertFalse(Role.viewer.maySendIntents)
        XCTAssertTrue(Role.player.maySendIntents)
        XCTAssertTrue(Role.admin.maySendIntents)
        XCTAssertEqual(Role(rawValue: "admin"), .admin)
        XCTAssertNil(Role(rawValue: "root"))
    }

    // MARK: colours

    func testShortHexExpands() throws {
        let color = try XCTUnwrap(RGBColor(hex: "#F0a"))
        XCTAssertEqual(color, RGBColor(red: 0xFF, green: 0x00, blue: 0xAA))
        XCTAssertEqual(color.hex, "#ff00aa")
        XCTAssertEqual(RGBColor(hex: "#abc")?.hex, "#aabbcc")
    }

    func testLongHexIsPrintedInLowerCase() throws {
        let color = try XCTUnwrap(RGBColor(hex: "#1A2b3C"))
        XCTAssertEqual(color, RGBColor(red: 0x1A, green: 0x2B, blue: 0x3C))
        XCTAssertEqual(color.hex, "#1a2b3c")
        XCTAssertEqual(color.description, "#1a2b3c")
        XCTAssertEqual(RGBColor(red: 0, green: 0, blue: 0).hex, "#000000")
        XCTAssertEqual(RGBColor(red: 255, green: 255, blue: 255).hex, "#ffffff")
    }

    func testMalformedHex() {
        for text in ["", "#", "abc", "ff0000", "#ab", "#abcd", "#abcde", "#abcdefa", "#ggg", "#12345z", "##abc",
                     "# abc", "#abc ", "#ａｂｃ", "#-12"] {
            XCTAssertNil(RGBColor(hex: text), text)
        }
    }

    func testUnitComponents() {
        let components = RGBColor(red: 255, green: 0, blue: 51).unitComponents
        XCTAssertEqual(components.red, 1)
        XCTAssertEqual(components.green, 0)
        XCTAssertEqual(components.blue, 0.2)
    }

    // MARK: wave clock

    func testWaveStepAdvancesEvery20Milliseconds() {
        XCTAssertEqual(WaveClock.step(atMilliseconds: 0), 0)
        XCTAssertEqual(WaveClock.step(atMilliseconds: 19), 0)
        XCTAssertEqual(WaveClock.step(atMilliseconds: 20), 1)
        XCTAssertEqual(WaveClock.step(atMilliseconds: 1999), 99)
        XCTAssertEqual(WaveClock.step(atMilliseconds: 2000), 0)
        XCTAssertEqual(WaveClock.step(atMilliseconds: 1_764_460_000_123), 6)
    }

    func testWavePhaseIsStepTimesPiOver50() {
        XCTAssertEqual(WaveClock.phase(step: 0), 0)
        XCTAssertEqual(WaveClock.phase(step: 50), .pi, accuracy: 1e-15)
        XCTAssertEqual(WaveClock.phase(step: 25), .pi / 2, accuracy: 1e-15)
        XCTAssertEqual(WaveClock.phase(step: 99), 99 * .pi / 50, accuracy: 1e-12)
    }

    // MARK: identifiers

    func testEpochsAreTwelveLowerCaseHexDigits() {
        let epochs = (0..<50).map { _ in Identifiers.newEpoch() }
        for epoch in epochs {
            XCTAssertEqual(epoch.count, 12, epoch)
            XCTAssertTrue(epoch.allSatisfy { "0123456789abcdef".contains($0) }, epoch)
        }
        XCTAssertGreaterThan(Set(epochs).count, 45)
    }
}
