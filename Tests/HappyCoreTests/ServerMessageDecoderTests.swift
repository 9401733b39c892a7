import XCTest
import HappyCore

final class ServerMessageDecoderTests: XCTestCase {
    private let state = String(decoding: ServerMessageEncoder.sceneJSON(.standard), as: UTF8.self)

    private func message(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> ServerMessage {
        try XCTUnwrap(ServerMessage.decode(text), text, file: file, line: line).0
    }

    private func isOther(_ message: ServerMessage) -> Bool {
        if case .other = message { return true }
        return false
    }

    private func stateWith(happiness: String) -> String {
        state.replacingOccurrences(of: #""happiness":50"#, with: #""happiness":\#(happiness)"#)
    }

    // MARK: well-formed messages written by hand

    func testMinimalWelcomeUsesDefaultsForOptionalFields() throws {
        let text = #"{"type":"welcome","room":"r","you":{"id":"c1","name":"n"},"epoch":"e","seq":3,"state":\#(state)}"#
        guard case .welcome(let welcome) = try message(text) else { return XCTFail("not a welcome") }
        XCTAssertEqual(welcome.role, "player")
        XCTAssertEqual(welcome.seq, 3)
        XCTAssertEqual(welcome.presence, [])
        XCTAssertEqual(welcome.presenceCount, 0)
        XCTAssertEqual(welcome.serverTime, 0)
        XCTAssertFalse(welcome.recovered)
        XCTAssertEqual(welcome.state, .standard)
    }

    func testWelcomeWithoutStateIsNotAWelcome() throws {
        XCTAssertTrue(isOther(try message(#"{"type":"welcome","room":"r","you":{"id":"c1","name":"n"},"epoch":"e","seq":3}"#)))
    }

    func testEventWithoutSenderOrChangesStillDecodes() throws {
        guard case .event(let event) = try message(#"{"type":"event","seq":4,"name":"room:didReset:","state":\#(state)}"#)
        else { return XCTFail("not an event") }
        XCTAssertEqual(event.seq, 4)
        XCTAssertEqual(event.sender, Participant(id: "", name: ""))
        XCTAssertTrue(event.changes.isEmpty)
        XCTAssertEqual(event.room, "")
    }

    func testErrorWithAnUnknownCodeBecomesBadMessage() throws {
        guard case .error(let error) = try message(#"{"type":"error","code":"teapot","message":"short and stout"}"#)
        else { return XCTFail("not an error") }
        XCTAssertEqual(error, WireError(.badMessage, "short and stout"))
    }

    func testAckWithoutSeqIsOther() throws {
        XCTAssertTrue(isOther(try message(#"{"type":"ack","id":"a","result":"applied"}"#)))
        XCTAssertTrue(isOther(try message(#"{"type":"resync","seq":1}"#)))
        XCTAssertTrue(isOther(try message(#"{"id":"a"}"#)))
    }

    func testSceneNeedsEveryField() throws {
        let complete = try JSONParser.parse(state)
        XCTAssertEqual(Scene(json: complete), .standard)
        for field in ["\"rate\":0.5,", ",\"hidden\":false", "\"fillColor\":\"#ff0000\","] {
            let text = state.replacingOccurrences(of: field, with: "")
            XCTAssertNil(Scene(json: try JSONParser.parse(text)), text)
        }
        let badColour = state.replacingOccurrences(of: "#000000", with: "black")
        XCTAssertNil(Scene(json: try JSONParser.parse(badColour)))
    }

    // MARK: out-of-range numbers from a faulty or hostile server

    func testHugeOrInfiniteCountersDoNotCrash() throws {
        guard case .pong(_, let time) = try message(#"{"type":"pong","id":"x","serverTime":1e400}"#)
        else { return XCTFail("not a pong") }
        XCTAssertEqual(time, 0)
        XCTAssertTrue(isOther(try message(#"{"type":"ack","seq":1e30,"result":"applied"}"#)))
        XCTAssertTrue(isOther(try message(#"{"type":"resync","seq":-1e400,"state":\#(state)}"#)))
        XCTAssertTrue(isOther(try message(#"{"type":"event","seq":1e20,"name":"x","state":\#(state)}"#)))
        guard case .event(let event) = try message(#"{"type":"event","seq":2,"time":-1e300,"name":"x","state":\#(state)}"#)
        else { return XCTFail("not an event") }
        XCTAssertEqual(event.time, 0)
    }

    func testHugeWelcomeFieldsDoNotCrash() throws {
        let text = #"{"type":"welcome","room":"r","you":{"id":"c1","name":"n"},"epoch":"e","seq":3,"state":\#(state),"presenceCount":1e400,"serverTime":1e19}"#
        guard case .welcome(let welcome) = try message(text) else { return XCTFail("not a welcome") }
        XCTAssertEqual(welcome.presenceCount, 0)
        XCTAssertEqual(welcome.serverTime, 0)
    }

    func testOutOfRangeHappinessMakesTheSceneInvalid() throws {
        for value in ["1e400", "-1e400", "1e19"] {
            XCTAssertNil(Scene(json: try JSONParser.parse(stateWith(happiness: value))), value)
        }
        XCTAssertEqual(Scene(json: try JSONParser.parse(stateWith(happiness: "75")))?.face.happiness, 75)
    }

    func testNegativeSeqIsNotASeq() throws {
        XCTAssertTrue(isOther(try message(#"{"type":"ack","seq":-1,"result":"applied"}"#)))
    }
}
