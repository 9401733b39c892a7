import Foundation
import XCTest

/// Every close the server starts reaches the client as a close frame, also
/// while the client keeps sending (PROTOCOL.md section 5): the server stops
/// acting on messages, sends its close frame, and ends the connection only
/// after the client's close frame, or 2 seconds.
final class ServerCloseHandshakeTests: XCTestCase {
    private static func intent(_ index: Int) -> PersistentSender.RawMessage {
        .text(#"{"type":"intent","id":"k\#(index)","action":"dragon.toggleHidden"}"#)
    }

    /// The close frame arrived with `code` and a reason, and the server
    /// ended the connection in order (not with a reset) once we answered.
    private func assertHandshake(_ outcome: PersistentSender.Outcome, code: UInt16, _ label: String,
                                 file: StaticString = #filePath, line: UInt = #line) {
        guard case .close(let received?, let reason)? = outcome.close else {
            return XCTFail("\(label): no close frame after \(outcome.sent) messages sent (\(outcome.ending))",
                           file: file, line: line)
        }
        XCTAssertEqual(received, code, "\(label): \(reason)", file: file, line: line)
        XCTAssertFalse(reason.isEmpty, "\(label): a reason text", file: file, line: line)
        XCTAssertFalse(outcome.endedBeforeAnswer, "\(label): the server waits for our close frame while we still send",
                       file: file, line: line)
        XCTAssertEqual(outcome.ending, .closed,
                       "\(label): after our close frame the server closes in order, not with a reset", file: file, line: line)
        XCTAssertLessThan(outcome.secondsToEnd, 1.9, "\(label): our close frame ends it, not the timeout",
                          file: file, line: line)
    }

    func testFloodClose1008ReachesAClientThatKeepsSending() throws {
        let server = try ServerProcess(["limits": ["intentsPerSecond": 5, "intentBurst": 5]])
        for attempt in 1...3 {
            let client = try PersistentSender(port: server.port, target: "/ws?room=flood", message: Self.intent)
            let outcome = client.awaitServerClose()
            assertHandshake(outcome, code: 1008, "flood \(attempt)")
            XCTAssertTrue(outcome.texts.contains { $0.contains("rate_limited") }, "rate_limited errors came first")
        }
    }

    func testOversizeClose1009ReachesAClientThatKeepsSending() throws {
        let server = try ServerProcess(["limits": ["maxMessageBytes": 256, "intentsPerSecond": 1000, "intentBurst": 1000]])
        let client = try PersistentSender(port: server.port, target: "/ws", batch: 5) { index in
            index == 20 ? .text(ProtocolFlowTests.paddedIntent(id: "big", happiness: 60, bytes: 4000)) : Self.intent(index)
        }
        assertHandshake(client.awaitServerClose(), code: 1009, "oversize")
    }

    func testBinaryClose1003ReachesAClientThatKeepsSending() throws {
        let server = try ServerProcess(["limits": ["intentsPerSecond": 1000, "intentBurst": 1000]])
        let client = try PersistentSender(port: server.port, target: "/ws", batch: 5) { index in
            index == 20 ? PersistentSender.RawMessage(opcode: 0x2, payload: [1, 2, 3]) : Self.intent(index)
        }
        assertHandshake(client.awaitServerClose(), code: 1003, "binary")
    }

    func testFullServerClose1013ReachesAClientThatKeepsSending() throws {
        let server = try ServerProcess(["limits": ["maxClients": 1]])
        _ = try TestClient.join(server)
        let client = try PersistentSender(port: server.port, target: "/ws", message: Self.intent)
        let outcome = client.awaitServerClose()
        assertHandshake(outcome, code: 1013, "maxClients")
        XCTAssertEqual(outcome.texts, [], "no welcome")
    }

    func testShutdownClose1001ReachesAClientThatKeepsSending() throws {
        let server = try ServerProcess(["limits": ["intentsPerSecond": 1000, "intentBurst": 1000]])
        let client = try PersistentSender(port: server.port, target: "/ws", batch: 5, afterWelcome: true, message: Self.intent)
        _ = try eventually(seconds: 20) { try HTTP.get("\(server.httpBase)/api/state").json?["seq"]?.intValue.flatMap { $0 > 10 ? $0 : nil } }
        server.process?.terminate()
        let outcome = client.awaitServerClose()
        assertHandshake(outcome, code: 1001, "shutdown")
        XCTAssertEqual(server.stop(), 0)
    }

    func testAClientThatNeverAnswersTheCloseIsDroppedAfterTwoSeconds() throws {
        let server = try ServerProcess(["limits": ["intentsPerSecond": 5, "intentBurst": 5]])
        let client = try PersistentSender(port: server.port, target: "/ws", message: Self.intent)
        let outcome = client.awaitServerClose(answer: false, endWithin: 10)
        guard case .close(1008?, _)? = outcome.close else { return XCTFail("no 1008 close frame: \(String(describing: outcome.close))") }
        XCTAssertNotEqual(outcome.ending, .timedOut, "the server ends the connection")
        XCTAssertGreaterThan(outcome.secondsToEnd, 1.5, "it waits for the client's close frame first")
        XCTAssertLessThan(outcome.secondsToEnd, 8, "about 2 s, with room for a busy machine")
        let (_, welcome) = try TestClient.join(server, room: "after")
        XCTAssertEqual(welcome["presenceCount"]?.intValue, 1, "the server still serves")
    }
}
