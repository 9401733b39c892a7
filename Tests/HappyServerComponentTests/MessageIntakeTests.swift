import HappyCore
@testable import HappyServer
import XCTest

/// What a client sends: decoded, checked, rate-limited and answered.
final class MessageIntakeTests: XCTestCase {
    func testBadJSONIsAnsweredAndTheConnectionStays() {
        let test = TestServer()
        let client = test.joined()
        test.send(client, "{not json")
        let answers = test.messages(of: client)

        XCTAssertEqual(answers.count, 1)
        XCTAssertEqual(answers.first?["type"]?.stringValue, "error")
        XCTAssertEqual(answers.first?["code"]?.stringValue, "bad_json")
        XCTAssertNil(client.closeFrame)
        XCTAssertEqual(test.metrics.intentErrors["bad_json"], 1)

        test.send(client, #"{"type":"ping","id":"after"}"#)
        XCTAssertEqual(test.messages(of: client).first?["type"]?.stringValue, "pong")
    }

    func testMessagesThatAreNotKnownObjectsAreBadMessages() {
        let test = TestServer()
        let client = test.joined()
        test.send(client, "[1,2]")
        test.send(client, #"{"type":"hello","id":"h1"}"#)
        test.send(client, #"{"type":"intent","id":"u1","action":"face.explode"}"#)
        let answers = test.messages(of: client)

        XCTAssertEqual(answers.map { $0["code"]?.stringValue }, ["bad_message", "bad_message", "unknown_action"])
        XCTAssertEqual(answers.map { $0["id"]?.stringValue }, [nil, "h1", "u1"])
    }

    func testBinaryMessageClosesWithUnsupportedData() {
        let test = TestServer()
        let client = test.joined()
        test.receive(client, [0x7B, 0x7D], binary: true, final: true)
        test.pump(client)

        XCTAssertEqual(client.closeFrame?.closeCode, 1003)
        XCTAssertEqual(client.closeFrame?.closeReason, "binary messages are not accepted; send JSON text")
    }

    func testMessageOverTheLimitClosesWithMessageTooBig() {
        let test = TestServer(config: TestServer.config { $0.limits.maxMessageBytes = 64 })
        let client = test.joined()
        test.send(client, #"{"type":"ping","id":""# + String(repeating: "x", count: 60) + #""}"#)
        test.pump(client)

        XCTAssertEqual(client.closeFrame?.closeCode, 1009)
        XCTAssertEqual(client.closeFrame?.closeReason, "message larger than 64 bytes")
    }

    func testFragmentsAreReassembledAndCountedTogether() {
        let test = TestServer(config: TestServer.config { $0.limits.maxMessageBytes = 64 })
        let client = test.joined()
        test.receive(client, Array(#"{"type":"ping","#.utf8), binary: false, final: false)
        test.receive(client, Array(#""id":"joined"}"#.utf8), binary: false, final: true)
        XCTAssertEqual(test.messages(of: client).first?["id"]?.stringValue, "joined")

        let half = Array(repeating: UInt8(ascii: " "), count: 40)
        test.receive(client, half, binary: false, final: false)
        test.receive(client, half, binary: false, final: false)
        test.pump(client)
        XCTAssertEqual(client.closeFrame?.closeCode, 1009, "two fragments over the limit together")
        XCTAssertTrue(client.connection.intake.assembler.isAssembling == false)
    }

    func testPingIsAnsweredWithPongCarryingItsIdAndTheServerTime() {
        let test = TestServer()
        let client = test.joined()
        test.advance(by: 2.5)
        test.send(client, #"{"type":"ping","id":"p-1"}"#)
        test.send(client, #"{"type":"ping"}"#)
        let pongs = test.messages(of: client)

        XCTAssertEqual(pongs.map { $0["type"]?.stringValue }, ["pong", "pong"])
        XCTAssertEqual(pongs[0]["id"]?.stringValue, "p-1")
        XCTAssertNil(pongs[1]["id"])
        XCTAssertEqual(pongs[0]["serverTime"]?.intValue, Int(test.time.wallMilliseconds))
    }

    func testRateLimitAnswersThenFloodCloses() {
        let test = TestServer(config: TestServer.config {
            $0.limits.intentsPerSecond = 1
            $0.limits.intentBurst = 2
            $0.limits.floodLimit = 2
        })
        let client = test.joined()
        test.send(client, #"{"type":"ping","id":"1"}"#)
        test.send(client, #"{"type":"ping","id":"2"}"#)
        test.sendIntent(client, "face.setHappiness", id: "3", #""value":70"#)
        test.send(client, #"{"type":"ping","id":"4"}"#)
        XCTAssertNil(client.connection.output.closeRequest)
        test.send(client, #"{"type":"ping","id":"5"}"#)  // the third refusal within the window
        test.send(client, #"{"type":"ping","id":"6"}"#)  // ignored: the connection is closing
        let answers = test.messages(of: client)

        XCTAssertEqual(answers.map { $0["type"]?.stringValue }, ["pong", "pong", "error", "error"])
        XCTAssertEqual(answers[2]["code"]?.stringValue, "rate_limited")
        XCTAssertEqual(answers[2]["id"]?.stringValue, "3", "a refused intent's id comes back")
        XCTAssertEqual(answers[2]["message"]?.stringValue, "rate limit of 1.0 messages/s exceeded; message dropped")
        XCTAssertNil(answers[3]["id"], "pings are not intents")
        XCTAssertEqual(client.closeFrame?.closeCode, 1008)
        XCTAssertEqual(client.closeFrame?.closeReason, "too many messages: over the rate limit for too long")
        XCTAssertEqual(test.metrics.rateLimited, 3)
        XCTAssertEqual(test.metrics.floodCloses, 1)
        XCTAssertEqual(test.server.directory["lobby"]?.room?.committed.seq, 0, "the refused intent was not applied")
    }

    func testTokensRefillWithTime() {
        let test = TestServer(config: TestServer.config {
            $0.limits.intentsPerSecond = 1
            $0.limits.intentBurst = 1
        })
        let client = test.joined()
        test.send(client, #"{"type":"ping","id":"1"}"#)
        test.send(client, #"{"type":"ping","id":"2"}"#)
        test.advance(by: 1)
        test.send(client, #"{"type":"ping","id":"3"}"#)

        XCTAssertEqual(test.messages(of: client).map { $0["type"]?.stringValue }, ["pong", "error", "pong"])
    }

    func testIntentsDuringShutdownAreUnavailable() {
        let test = TestServer()
        let client = test.joined()
        test.server.beginShutdown(signal: 0)
        test.sendIntent(client, "face.setHappiness", id: "late", #""value":70"#)
        let answer = test.messages(of: client).first

        XCTAssertEqual(answer?["code"]?.stringValue, "unavailable")
        XCTAssertEqual(answer?["id"]?.stringValue, "late")
        XCTAssertEqual(answer?["message"]?.stringValue, "server shutting down; nothing was applied")
    }

    func testMessagesKeepTheClientAlive() {
        let test = TestServer()
        let client = test.joined()
        test.advance(by: 19)
        test.send(client, #"{"type":"ping"}"#)
        test.advance(by: 19)
        test.sweep()
        XCTAssertFalse(client.connection.output.pingDue, "heard from 19 s ago: no ping yet")
    }
}
