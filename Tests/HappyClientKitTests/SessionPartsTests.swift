import HappyClientKit
import HappyCore
import XCTest

/// Backoff, close reasons, URLs and message encoding of the session.
final class SessionPartsTests: XCTestCase {
    func testBackoffGrowsExponentiallyUpToTheMaximum() {
        let backoff = Backoff(initial: 0.2, maximum: 5, multiplier: 2, jitter: 0.5)
        XCTAssertEqual(backoff.delay(attempt: 0, random: 0), 0.2, accuracy: 1e-9)
        XCTAssertEqual(backoff.delay(attempt: 1, random: 0), 0.4, accuracy: 1e-9)
        XCTAssertEqual(backoff.delay(attempt: 3, random: 0), 1.6, accuracy: 1e-9)
        XCTAssertEqual(backoff.delay(attempt: 10, random: 0), 5, accuracy: 1e-9)
        XCTAssertEqual(backoff.delay(attempt: 10_000, random: 0), 5, accuracy: 1e-9, "no overflow")
    }

    func testBackoffJitterShortensByUpToItsFraction() {
        let backoff = Backoff(initial: 1, maximum: 1, jitter: 0.5)
        XCTAssertEqual(backoff.delay(attempt: 0, random: 0.999_999), 0.5, accuracy: 1e-5)
        for _ in 0..<100 {
            XCTAssertTrue((0.5...1).contains(backoff.delay(attempt: 0)))
        }
    }

    func testCloseReasonsDescribeTheCodeAndKeepTheReason() {
        let policy = CloseReason(code: 1008, reason: "invalid room name")
        XCTAssertTrue(policy.isFinal)
        XCTAssertEqual(policy.description, "close 1008 (policy violation): invalid room name")
        let going = CloseReason(code: 1001, reason: "server shutting down")
        XCTAssertFalse(going.isFinal)
        XCTAssertEqual(going.description, "close 1001 (going away): server shutting down")
        XCTAssertEqual(CloseReason(code: nil, reason: "").description, "connection closed without a close frame")
    }

    /// PROTOCOL.md section 13: a client must not reconnect by itself after 4003 or 4004.
    func testAnOperatorsCloseIsFinalAndSaysWhatHappened() {
        let kicked = CloseReason(code: 4003, reason: "removed from the room by an operator: spam")
        XCTAssertTrue(kicked.isFinal)
        XCTAssertTrue(kicked.isOperatorRemoval)
        XCTAssertEqual(kicked.removalText, "removed from the room by an operator: spam")
        XCTAssertEqual(CloseReason(code: 4003, reason: "").removalText, "removed from the room by an operator")
        let deleted = CloseReason(code: 4004, reason: "")
        XCTAssertTrue(deleted.isFinal)
        XCTAssertEqual(deleted.removalText, "the room was deleted by an operator")
        XCTAssertEqual(deleted.description, "close 4004 (room deleted by an operator)")
        XCTAssertNil(CloseReason(code: 4000, reason: "").removalText)
        XCTAssertTrue(CloseReason(code: 4000, reason: "").isFinal, "an application code it does not know: no retry")
        XCTAssertTrue(CloseReason(code: 4999, reason: "").isFinal)
        XCTAssertEqual(SessionError.removed(url: "ws://h:1/ws", kicked).description,
                       "removed from the room by an operator: spam (close 4003)")
    }

    func testAnObserverAsksForObserveOne() {
        let configuration = SessionConfiguration(server: WebSocketURL("ws://127.0.0.1:8080")!, room: "kitchen", observe: true)
        XCTAssertEqual(configuration.connectURL().path, "/ws?room=kitchen&observe=1")
    }

    func testA1002WithAReasonIsReadAsTryAgainLater() {
        let full = CloseReason(code: 1002, reason: "server full: 1 clients connected")
        XCTAssertTrue(full.isTryAgainLater)
        XCTAssertFalse(full.isFinal, "worth retrying")
        XCTAssertTrue(full.description.contains("1012–1015"))
        XCTAssertTrue(full.description.hasSuffix(": server full: 1 clients connected"))
        XCTAssertTrue(CloseReason(code: 1013, reason: "").isTryAgainLater)
        XCTAssertTrue(CloseReason(code: 1002, reason: "").isFinal, "a bare 1002 is a protocol error")
    }

    func testConnectURLsCarryRoomNameTokenAndTheResumePoint() {
        var configuration = SessionConfiguration(server: WebSocketURL("ws://127.0.0.1:8080")!, room: "kitchen",
                                                 name: "al ice", token: "t.k.n")
        XCTAssertEqual(configuration.endpoint.description, "ws://127.0.0.1:8080/ws")
        XCTAssertEqual(configuration.connectURL().path, "/ws?room=kitchen&name=al%20ice&token=t.k.n")
        XCTAssertEqual(configuration.connectURL(resumingAfter: 12, epoch: "e9").path,
                       "/ws?room=kitchen&name=al%20ice&token=t.k.n&since=12&epoch=e9")
        XCTAssertEqual(configuration.displayURL, "ws://127.0.0.1:8080/ws", "no token in what people see")
        configuration.server = WebSocketURL("wss://example.org/happy/ws?x=1")!
        configuration.token = nil
        XCTAssertEqual(configuration.connectURL().path, "/happy/ws?x=1&room=kitchen&name=al%20ice")
        XCTAssertEqual(configuration.displayURL, "wss://example.org:443/happy/ws")
    }

    func testIntentsAreEncodedWithTheirParameters() throws {
        func decoded(_ action: Action) throws -> JSONValue { try JSONParser.parse(IntentEncoder.intent(action, id: "i1")) }
        let happiness = try decoded(.setHappiness(80))
        XCTAssertEqual(happiness["type"], .string("intent"))
        XCTAssertEqual(happiness["id"], .string("i1"))
        XCTAssertEqual(happiness["action"], .string("face.setHappiness"))
        XCTAssertEqual(happiness["value"], .number(80))
        XCTAssertEqual(try decoded(.nudgeHappiness(-5))["delta"], .number(-5))
        XCTAssertEqual(try decoded(.pinch(1.1))["factor"], .number(1.1))
        XCTAssertEqual(try decoded(.setHidden(true))["value"], .bool(true))
        let style = try decoded(.setStyle(HeartStyle(fillColor: RGBColor(hex: "#f00"), lineWidth: 2)))
        XCTAssertEqual(style["fillColor"], .string("#ff0000"))
        XCTAssertNil(style["strokeColor"])
        XCTAssertEqual(style["lineWidth"], .number(2))
        XCTAssertEqual(IntentEncoder.intent(.dragonForward, id: nil), #"{"type":"intent","action":"dragon.forward"}"#)
    }

    func testEncodedIntentsDecodeOnTheServerSideToTheSameAction() {
        let actions: [Action] = [.setHappiness(80), .nudgeHappiness(5), .setScale(1.2), .pinch(0.9), .setRate(0.7),
                                 .setStyle(HeartStyle(strokeColor: RGBColor(hex: "#000"))), .dragonForward,
                                 .dragonBack, .setHidden(false), .toggleHidden, .reset]
        for action in actions {
            let decoded = ClientMessageDecoder.decode(IntentEncoder.intent(action, id: "x"))
            XCTAssertEqual(try? decoded.get(), .intent(Intent(id: "x", action: action)), action.wireName)
        }
        XCTAssertEqual(try? ClientMessageDecoder.decode(IntentEncoder.ping(id: "p1")).get(), .ping(id: "p1"))
    }

    func testPingSamplesGiveTheRoundTripAndTheClockOffset() {
        let sample = PingSample(sentAt: 1000, receivedAt: 1010, serverTime: 1105)
        XCTAssertEqual(sample.roundTripMilliseconds, 10)
        XCTAssertEqual(sample.clockOffsetMilliseconds, 100)
        let stepped = PingSample(sentAt: 1000, receivedAt: 61010, serverTime: 1105, roundTripMilliseconds: 10)
        XCTAssertEqual(stepped.roundTripMilliseconds, 10, "the wall clock jumped a minute; the monotonic trip did not")
    }

    func testSessionErrorsNameTheURLAndTheReason() {
        XCTAssertEqual(SessionError.cannotConnect(url: "ws://h:1/ws", reason: "Connection refused").description,
                       "cannot connect to ws://h:1/ws: Connection refused")
        XCTAssertEqual(SessionError.refused(WireError(.invalidValue, "happiness must be an integer")).description,
                       "refused by the server: invalid_value: happiness must be an integer")
        XCTAssertEqual(SessionError.closed(url: "ws://h:1/ws", CloseReason(code: 1008, reason: "bad token")).description,
                       "refused by the server at ws://h:1/ws: close 1008 (policy violation): bad token")
        XCTAssertEqual(SessionError.timeout("no pong within 5 s").description, "timeout: no pong within 5 s")
    }
}
