import HappyCore
@testable import HappyServer
import XCTest

/// The keepalive decisions as a value, then the registry's sweep acting on
/// them through the transport.
final class KeepaliveTests: XCTestCase {
    private let policy = Keepalive.Policy(pingInterval: 20, pingTimeout: 10, writeTimeout: 30)

    private func sweep(_ keepalive: inout Keepalive, at now: Double, paused: Bool = false, caughtUp: Bool = true,
                       stalledSince: Double = 0) -> Keepalive.Action {
        keepalive.sweep(now: now, policy: policy, readingPaused: paused, caughtUp: caughtUp, stalledSince: stalledSince)
    }

    // MARK: the value

    func testNothingBeforeThePingInterval() {
        var keepalive = Keepalive(now: 100)
        XCTAssertEqual(sweep(&keepalive, at: 119.9), .none)
        XCTAssertNil(keepalive.pingSentAt)
    }

    func testPingAfterTheIntervalOfSilence() {
        var keepalive = Keepalive(now: 100)
        XCTAssertEqual(sweep(&keepalive, at: 120), .sendPing)
        XCTAssertEqual(keepalive.pingSentAt, 120)
        // One ping at a time: the next sweep waits for its answer.
        XCTAssertEqual(sweep(&keepalive, at: 125), .none)
    }

    func testUnansweredPingDropsAfterTheTimeout() {
        var keepalive = Keepalive(now: 100)
        XCTAssertEqual(sweep(&keepalive, at: 120), .sendPing)
        XCTAssertEqual(sweep(&keepalive, at: 130), .none, "exactly the timeout is still in time")
        XCTAssertEqual(sweep(&keepalive, at: 130.5), .dropUnresponsive)
    }

    func testPongResetsTheTimers() {
        var keepalive = Keepalive(now: 100)
        XCTAssertEqual(sweep(&keepalive, at: 120), .sendPing)
        keepalive.received(at: 125)
        XCTAssertNil(keepalive.pingSentAt)
        XCTAssertEqual(sweep(&keepalive, at: 140), .none, "no timeout once answered")
        XCTAssertEqual(sweep(&keepalive, at: 145), .sendPing, "next ping an interval after the pong")
    }

    func testPausedReadingSuspendsThePingTimeout() {
        var keepalive = Keepalive(now: 100)
        XCTAssertEqual(sweep(&keepalive, at: 120), .sendPing)
        // The pong waits unread behind the client's messages: no timeout, no new ping.
        XCTAssertEqual(sweep(&keepalive, at: 200, paused: true), .none)
        XCTAssertNil(keepalive.pingSentAt)
        XCTAssertEqual(sweep(&keepalive, at: 201), .sendPing, "pings resume with reading")
    }

    func testSlowReaderAfterTheWriteTimeout() {
        var keepalive = Keepalive(now: 100)
        keepalive.received(at: 125)
        XCTAssertEqual(sweep(&keepalive, at: 130, caughtUp: false, stalledSince: 100), .none, "30 s is still in time")
        XCTAssertEqual(sweep(&keepalive, at: 130.5, caughtUp: false, stalledSince: 100), .dropSlowReader)
        XCTAssertEqual(sweep(&keepalive, at: 130.5, caughtUp: true, stalledSince: 100), .none,
                       "a client with nothing queued is not slow")
    }

    func testWriteTimeoutAppliesWhileReadingIsPaused() {
        var keepalive = Keepalive(now: 100)
        XCTAssertEqual(sweep(&keepalive, at: 140, paused: true, caughtUp: false, stalledSince: 100), .dropSlowReader)
    }

    func testSlowReaderTakesPrecedenceOverAPing() {
        var keepalive = Keepalive(now: 100)
        XCTAssertEqual(sweep(&keepalive, at: 131, caughtUp: false, stalledSince: 100), .dropSlowReader)
    }

    func testPingTimeoutTakesPrecedenceOverSlowReader() {
        var keepalive = Keepalive(now: 100)
        XCTAssertEqual(sweep(&keepalive, at: 120), .sendPing)
        XCTAssertEqual(sweep(&keepalive, at: 131, caughtUp: false, stalledSince: 100), .dropUnresponsive)
    }

    // MARK: the sweep

    func testSweepWritesAPingWithTheHappyPayload() {
        let test = TestServer()
        let client = test.joined()
        test.advance(by: 20)
        test.sweep()
        XCTAssertTrue(client.transport.writablePending)
        test.pump(client)

        let ping = client.transport.writes.last
        XCTAssertEqual(ping?.kind, .ping)
        XCTAssertEqual(ping?.frames, [WebSocketFrame(opcode: WebSocketFrame.ping, payload: Array("happy".utf8))])
        XCTAssertFalse(client.connection.output.pingDue)
    }

    func testSweepKillsAClientThatDoesNotAnswer() {
        let test = TestServer()
        let client = test.joined()
        test.advance(by: 20)
        test.sweep()
        test.pump(client)
        test.advance(by: 10)
        test.sweep()
        XCTAssertEqual(client.transport.kills, 0)
        test.advance(by: 1)
        test.sweep()

        XCTAssertEqual(client.transport.kills, 1)
        XCTAssertEqual(test.metrics.pingTimeouts, 1)
        XCTAssertNil(client.closeFrame, "a dead peer is dropped without a close handshake")
    }

    func testPongKeepsTheClient() {
        let test = TestServer()
        let client = test.joined()
        test.advance(by: 20)
        test.sweep()
        test.pump(client)
        test.advance(by: 5)
        test.server.registry.noteAlive(client.connection)
        test.advance(by: 10)
        test.sweep()

        XCTAssertEqual(client.transport.kills, 0)
        XCTAssertEqual(test.metrics.pingTimeouts, 0)
    }

    func testSweepKillsASlowReader() {
        let test = TestServer()
        let reader = test.joined()
        let writer = test.joined()
        test.sendIntent(writer, "face.setHappiness", id: "h", #""value":70"#)
        XCTAssertEqual(test.types(of: writer), ["event", "ack"])
        XCTAssertTrue(reader.transport.writablePending, "the event waits for the reader")
        // The reader's writable callback never comes (its socket is full).
        test.advance(by: 15)
        test.server.registry.noteAlive(reader.connection)  // it still sends, so pings are answered
        test.advance(by: 15)
        test.sweep()
        XCTAssertEqual(reader.transport.kills, 0)
        test.advance(by: 1)
        test.sweep()

        XCTAssertEqual(reader.transport.kills, 1)
        XCTAssertEqual(test.metrics.slowReaderCloses, 1)
        XCTAssertEqual(writer.transport.kills, 0)
    }

    func testSweepLeavesAClosingConnectionToItsCloseTimeout() {
        let test = TestServer()
        let client = test.joined()
        test.server.broadcaster.close(client.connection, code: .goingAway, reason: "bye")
        test.pump(client)
        XCTAssertTrue(client.connection.output.closeFrameSent)
        test.advance(by: 100)
        test.sweep()
        XCTAssertEqual(client.transport.kills, 0)
        XCTAssertEqual(client.transport.writes.filter { $0.kind == .ping }.count, 0)
    }
}
