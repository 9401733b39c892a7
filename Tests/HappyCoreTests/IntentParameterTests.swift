import XCTest
import HappyCore

final class IntentParameterTests: XCTestCase {
    private func intentText(_ name: String, _ fields: String) -> String {
        #"{"type":"intent","id":"p1","action":"\#(name)""# + (fields.isEmpty ? "" : "," + fields) + "}"
    }

    private func action(_ name: String, _ fields: String = "", file: StaticString = #filePath, line: UInt = #line) -> Action? {
        switch ClientMessageDecoder.decode(intentText(name, fields)) {
        case .success(.intent(let intent)):
            XCTAssertEqual(intent.id, "p1", file: file, line: line)
            return intent.action
        case let other:
            XCTFail("\(intentText(name, fields)) decoded to \(other)", file: file, line: line)
            return nil
        }
    }

    /// Asserts that the intent is refused with `invalid_value` and the id echoed.
    private func assertInvalid(_ name: String, _ fields: String = "", file: StaticString = #filePath, line: UInt = #line) {
        switch ClientMessageDecoder.decode(intentText(name, fields)) {
        case .success(let message):
            XCTFail("\(intentText(name, fields)) was accepted as \(message)", file: file, line: line)
        case .failure(let error):
            XCTAssertEqual(error.code, .invalidValue, error.message, file: file, line: line)
            XCTAssertEqual(error.id, "p1", file: file, line: line)
            XCTAssertFalse(error.message.isEmpty, file: file, line: line)
        }
    }

    // MARK: integers

    func testSetHappinessTakesIntegers() {
        XCTAssertEqual(action("face.setHappiness", #""value":80"#), .setHappiness(80))
        XCTAssertEqual(action("face.setHappiness", #""value":-5"#), .setHappiness(-5))
        XCTAssertEqual(action("face.setHappiness", #""value":1000"#), .setHappiness(1000))
    }

    func testIntegralFractionAndExponentFormsAreIntegers() {
        XCTAssertEqual(action("face.setHappiness", #""value":80.0"#), .setHappiness(80))
        XCTAssertEqual(action("face.setHappiness", #""value":8e1"#), .setHappiness(80))
        XCTAssertEqual(action("face.setHappiness", #""value":8.0E+1"#), .setHappiness(80))
        XCTAssertEqual(action("face.nudgeHappiness", #""delta":-1e1"#), .nudgeHappiness(-10))
    }

    func testSetHappinessRejectsNonIntegers() {
        for value in ["50.5", "0.1", #""80""#, "true", "null", "[80]", #"{"v":80}"#, "1e400", "-1e400"] {
            assertInvalid("face.setHappiness", #""value":\#(value)"#)
        }
        assertInvalid("face.setHappiness")
        assertInvalid("face.setHappiness", #""delta":80"#)
    }

    func testNudgeHappinessDeltaMustBeAnIntegerWithin100() {
        XCTAssertEqual(action("face.nudgeHappiness", #""delta":100"#), .nudgeHappiness(100))
        XCTAssertEqual(action("face.nudgeHappiness", #""delta":-100"#), .nudgeHappiness(-100))
        XCTAssertEqual(action("face.nudgeHappiness", #""delta":0"#), .nudgeHappiness(0))
        for value in ["101", "-101", "1e9", "2.5", #""5""#, "false", "null", "1e400"] {
            assertInvalid("face.nudgeHappiness", #""delta":\#(value)"#)
        }
        assertInvalid("face.nudgeHappiness")
        assertInvalid("face.nudgeHappiness", #""value":5"#)
    }

    // MARK: numbers

    func testSetScaleNeedsAPositiveNumber() {
        XCTAssertEqual(action("face.setScale", #""value":1.25"#), .setScale(1.25))
        XCTAssertEqual(action("face.setScale", #""value":50"#), .setScale(50))
        XCTAssertEqual(action("face.setScale", #""value":1e-9"#), .setScale(1e-9))
        for value in ["0", "-0", "-0.5", "-1e400", "1e400", #""1""#, "true", "null"] {
            assertInvalid("face.setScale", #""value":\#(value)"#)
        }
        assertInvalid("face.setScale")
    }

    func testPinchNeedsAPositiveFactor() {
        XCTAssertEqual(action("face.pinch", #""factor":1.5"#), .pinch(1.5))
        XCTAssertEqual(action("face.pinch", #""factor":0.5"#), .pinch(0.5))
        for value in ["0", "-2", #""2""#, "null", "1e400"] {
            assertInvalid("face.pinch", #""factor":\#(value)"#)
        }
        assertInvalid("face.pinch")
        assertInvalid("face.pinch", #""value":2"#)
    }

    func testSetRateAcceptsAnyFiniteNumberForClamping() {
        XCTAssertEqual(action("heart.setRate", #""value":0.25"#), .setRate(0.25))
        XCTAssertEqual(action("heart.setRate", #""value":2"#), .setRate(2))
        XCTAssertEqual(action("heart.setRate", #""value":-1"#), .setRate(-1))
        for value in [#""0.5""#, "true", "null", "1e400", "[0.5]"] {
            assertInvalid("heart.setRate", #""value":\#(value)"#)
        }
        assertInvalid("heart.setRate")
    }

    // MARK: heart.setStyle

    func testSetStyleReadsTopLevelFields() {
        let style = HeartStyle(fillColor: RGBColor(red: 0xAA, green: 0xBB, blue: 0xCC),
                               strokeColor: RGBColor(red: 0x12, green: 0x34, blue: 0xAB), lineWidth: 2.5)
        XCTAssertEqual(action("heart.setStyle", ##""fillColor":"#ABC","strokeColor":"#1234Ab","lineWidth":2.5"##),
                       .setStyle(style))
        XCTAssertEqual(action("heart.setStyle", ##""strokeColor":"#000""##),
                       .setStyle(HeartStyle(strokeColor: RGBColor(red: 0, green: 0, blue: 0))))
    }

    func testSetStyleLineWidthRange() {
        XCTAssertEqual(action("heart.setStyle", #""lineWidth":0"#), .setStyle(HeartStyle(lineWidth: 0)))
        XCTAssertEqual(action("heart.setStyle", #""lineWidth":20"#), .setStyle(HeartStyle(lineWidth: 20)))
        for value in ["20.5", "-1", "-0.1", "1e400", #""2""#, "null", "true"] {
            assertInvalid("heart.setStyle", #""lineWidth":\#(value)"#)
        }
    }

    func testSetStyleRejectsMalformedColours() {
        for value in [#""red""#, ##""#12345""##, ##""#1234567""##, ##""#ggg""##, #""123456""#, ##""#""##, #""""#,
                      ##"" #fff""##, ##""#ff00 0""##, "5", "null", ##"["#fff"]"##] {
            assertInvalid("heart.setStyle", #""fillColor":\#(value)"#)
            assertInvalid("heart.setStyle", #""strokeColor":\#(value),"lineWidth":3"#)
        }
    }

    func testSetStyleNeedsAtLeastOneField() {
        assertInvalid("heart.setStyle")
        assertInvalid("heart.setStyle", ##""value":{"fillColor":"#fff"}"##)
        assertInvalid("heart.setStyle", ##""color":"#fff""##)
    }

    // MARK: dragon

    func testSetHiddenNeedsABoolean() {
        XCTAssertEqual(action("dragon.setHidden", #""value":true"#), .setHidden(true))
        XCTAssertEqual(action("dragon.setHidden", #""value":false"#), .setHidden(false))
        for value in [#""true""#, "1", "0", "null", "[true]"] {
            assertInvalid("dragon.setHidden", #""value":\#(value)"#)
        }
        assertInvalid("dragon.setHidden")
    }

    func testParameterlessActionsIgnoreExtraFields() {
        XCTAssertEqual(action("dragon.forward", #""value":"x""#), .dragonForward)
        XCTAssertEqual(action("dragon.back", #""delta":1"#), .dragonBack)
        XCTAssertEqual(action("dragon.toggleHidden", #""value":true"#), .toggleHidden)
        XCTAssertEqual(action("room.reset", #""force":true"#), .reset)
    }

    func testErrorMessagesNameTheProblem() {
        let text = intentText("face.setHappiness", #""value":50.5"#)
        guard case .failure(let error) = ClientMessageDecoder.decode(text) else { return XCTFail("accepted \(text)") }
        XCTAssertEqual(error, WireError(.invalidValue, "happiness must be an integer", id: "p1"))
    }
}
