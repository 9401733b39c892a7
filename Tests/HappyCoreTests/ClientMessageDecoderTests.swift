import XCTest
import HappyCore

final class ClientMessageDecoderTests: XCTestCase {
    private func failure(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> WireError? {
        failure(bytes: Array(text.utf8), file: file, line: line)
    }

    private func failure(bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> WireError? {
        switch ClientMessageDecoder.decode(bytes) {
        case .success(let message):
            XCTFail("expected an error, got \(message)", file: file, line: line)
            return nil
        case .failure(let error):
            return error
        }
    }

    /// The action of `{"type":"intent","action":name, <fields>}`, or nil with a failure.
    private func action(_ name: String, _ fields: String = "", file: StaticString = #filePath, line: UInt = #line) -> Action? {
        let text = #"{"type":"intent","action":"\#(name)""# + (fields.isEmpty ? "" : "," + fields) + "}"
        switch ClientMessageDecoder.decode(text) {
        case .success(.intent(let intent)):
            return intent.action
        case let other:
            XCTFail("\(text) decoded to \(other)", file: file, line: line)
            return nil
        }
    }

    private func code(_ name: String, _ fields: String = "") -> ErrorCode? {
        failure(#"{"type":"intent","id":"q","action":"\#(name)""# + (fields.isEmpty ? "" : "," + fields) + "}")?.code
    }

    // MARK: bad_json

    func testTextThatIsNotJSONIsBadJSON() {
        for text in ["", "hello", "{", #"{"type":"intent""#, "NaN", "Infinity", "-Infinity", #"{"type":"ping",}"#,
                     "[1,]", #"{"type":"intent","action":"face.setHappiness","value":NaN}"#, "{'type':'ping'}"] {
            XCTAssertEqual(failure(text)?.code, .badJSON, text)
        }
    }

    func testInvalidUTF8IsBadJSON() {
        let prefix = Array(#"{"type":"ping","id":""#.utf8)
        XCTAssertEqual(failure(bytes: prefix + [0xFF] + Array(#""}"#.utf8))?.code, .badJSON)
        XCTAssertEqual(failure(bytes: prefix + [0xC3] + Array(#""}"#.utf8))?.code, .badJSON)
    }

    func testNestingBeyondTheLimitIsBadJSON() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        XCTAssertEqual(failure(#"{"type":"ping","extra":\#(deep)}"#)?.code, .badJSON)
    }

    // MARK: bad_message

    func testNonObjectsAreBadMessage() {
        for text in ["[]", "42", "null", "true", #""intent""#, #"[{"type":"ping"}]"#] {
            XCTAssertEqual(failure(text)?.code, .badMessage, text)
        }
    }

    func testMissingOrUnknownTypeIsBadMessageWithTheIDEchoed() {
        let missing = failure(#"{"id":"m1","action":"dragon.forward"}"#)
        XCTAssertEqual(missing?.code, .badMessage)
        XCTAssertEqual(missing?.id, "m1")
        for type in [#""Intent""#, #""pong""#, "1", "null", "true", #"["intent"]"#] {
            let error = failure(#"{"type":\#(type),"id":"m2"}"#)
            XCTAssertEqual(error?.code, .badMessage, type)
            XCTAssertEqual(error?.id, "m2", type)
        }
    }

    func testMissingOrNonStringActionIsBadMessage() {
        XCTAssertEqual(failure(#"{"type":"intent","id":"a"}"#), WireError(.badMessage, "intent has no \"action\"", id: "a"))
        for value in ["5", "null", "true", #"["dragon.forward"]"#, #"{"name":"dragon.forward"}"#] {
            XCTAssertEqual(failure(#"{"type":"intent","action":\#(value)}"#)?.code, .badMessage, value)
        }
    }

    func testIDMustBeAString() {
        for id in ["7", "true", "[]", "{}"] {
            let error = failure(#"{"type":"ping","id":\#(id)}"#)
            XCTAssertEqual(error?.code, .badMessage, id)
            XCTAssertNil(error?.id)
        }
    }

    func testIDOfAtMost64Characters() {
        let ok = String(repeating: "x", count: 64)
        XCTAssertEqual(ClientMessageDecoder.decode(#"{"type":"ping","id":"\#(ok)"}"#), .success(.ping(id: ok)))
        let wide = String(repeating: "é", count: 64)
        XCTAssertEqual(ClientMessageDecoder.decode(#"{"type":"ping","id":"\#(wide)"}"#), .success(.ping(id: wide)))
        let long = String(repeating: "x", count: 65)
        XCTAssertEqual(failure(#"{"type":"ping","id":"\#(long)"}"#)?.code, .badMessage)
    }

    func testNullIDCountsAsNoID() {
        XCTAssertEqual(ClientMessageDecoder.decode(#"{"type":"ping","id":null}"#), .success(.ping(id: nil)))
    }

    // MARK: unknown_action

    func testUnknownActionEchoesTheID() {
        let error = failure(#"{"type":"intent","id":"u1","action":"face.explode"}"#)
        XCTAssertEqual(error?.code, .unknownAction)
        XCTAssertEqual(error?.id, "u1")
        XCTAssertEqual(code("Face.setHappiness", #""value":1"#), .unknownAction)
        XCTAssertEqual(code(""), .unknownAction)
    }

    // MARK: success

    func testPing() {
        XCTAssertEqual(ClientMessageDecoder.decode(#"{"type":"ping","id":"x"}"#), .success(.ping(id: "x")))
        XCTAssertEqual(ClientMessageDecoder.decode(#"{"type":"ping"}"#), .success(.ping(id: nil)))
    }

    func testIntentKeepsItsID() {
        let result = ClientMessageDecoder.decode(#"{"type":"intent","id":"abc","action":"face.setHappiness","value":80}"#)
        XCTAssertEqual(result, .success(.intent(Intent(id: "abc", action: .setHappiness(80)))))
    }

    func testUnknownFieldsAreIgnored() {
        let text = #"{"extra":{"deep":[1,2,{"x":null}]},"type":"intent","action":"dragon.forward","value":"zz","n":1.5}"#
        XCTAssertEqual(ClientMessageDecoder.decode(text), .success(.intent(Intent(action: .dragonForward))))
    }

    func testEveryWireNameDecodes() {
        let parameters = [
            "face.setHappiness": #""value":1"#, "face.nudgeHappiness": #""delta":1"#, "face.setScale": #""value":1"#,
            "face.pinch": #""factor":1"#, "heart.setRate": #""value":1"#, "heart.setStyle": #""lineWidth":2"#,
            "dragon.setHidden": #""value":true"#,
        ]
        for name in Action.wireNames {
            XCTAssertEqual(action(name, parameters[name] ?? "")?.wireName, name)
        }
    }

    func testDecodeIntentWithoutType() throws {
        let body = try JSONParser.parse(#"{"action":"heart.setRate","value":0.25}"#)
        XCTAssertEqual(try ClientMessageDecoder.decodeIntent(body, id: "h").get(), Intent(id: "h", action: .setRate(0.25)))
        let noAction = try JSONParser.parse(#"{"value":0.25}"#)
        XCTAssertEqual(ClientMessageDecoder.decodeIntent(noAction, id: "h"),
                       .failure(WireError(.badMessage, "intent has no \"action\"", id: "h")))
    }
}
