import HappyCore
@testable import HappyServer
import XCTest

/// The write path: the room's log and the private outbox written in the
/// writable callback, coalesced, resynchronised, paused, closed.
final class BroadcasterTests: XCTestCase {
    func testEventsWaitingTogetherGoOutInOneWrite() {
        let test = TestServer()
        let reader = test.joined()
        let writer = test.joined()
        _ = test.messages(of: reader)  // the writer's presence
        let writesBefore = reader.transport.writes.count
        let requestsBefore = reader.transport.writableRequests

        for value in [60, 70, 80] {
            test.sendIntent(writer, "face.setHappiness", #""value":\#(value)"#)
        }
        XCTAssertEqual(reader.transport.writableRequests - requestsBefore, 1,
                       "one writable request, however many events wait for it")
        test.pump(reader)

        XCTAssertEqual(reader.transport.writes.count, writesBefore + 1)
        let write = reader.transport.writes.last
        XCTAssertEqual(write?.kind, .preframed)
        XCTAssertEqual(write?.frames.compactMap { $0.json?["seq"]?.intValue }, [1, 2, 3])
        XCTAssertEqual(reader.transport.malformedWrites, 0)
        XCTAssertFalse(reader.transport.writablePending, "caught up: no further callback asked for")
        XCTAssertTrue(test.server.broadcaster.isCaughtUp(reader.connection))
    }

    func testAckComesRightAfterItsEvent() {
        let test = TestServer()
        let client = test.joined()
        test.sendIntent(client, "face.setHappiness", id: "a1", #""value":60"#)
        test.sendIntent(client, "heart.setRate", id: "a2", #""value":0.25"#)
        let messages = test.messages(of: client)

        XCTAssertEqual(messages.map { $0["type"]?.stringValue }, ["event", "ack", "event", "ack"])
        XCTAssertEqual(messages[1]["id"]?.stringValue, "a1")
        XCTAssertEqual(messages[1]["seq"]?.intValue, messages[0]["seq"]?.intValue)
        XCTAssertEqual(messages[1]["result"]?.stringValue, "applied")
        XCTAssertEqual(messages[3]["id"]?.stringValue, "a2")
        XCTAssertEqual(messages[3]["seq"]?.intValue, 2)
    }

    func testUnchangedIntentIsAckedWithoutAnEvent() {
        let test = TestServer()
        let client = test.joined()
        test.sendIntent(client, "face.setHappiness", id: "same", #""value":50"#)  // the default
        let messages = test.messages(of: client)

        XCTAssertEqual(messages.map { $0["type"]?.stringValue }, ["ack"])
        XCTAssertEqual(messages.first?["result"]?.stringValue, "unchanged")
        XCTAssertEqual(messages.first?["seq"]?.intValue, 0)
    }

    func testClientTheLogNoLongerHoldsGetsOneResync() {
        let test = TestServer(config: TestServer.config { $0.limits.maxQueuedBytes = 2048 })
        let reader = test.joined()
        let writer = test.joined()
        _ = test.messages(of: reader)
        for value in 1...12 {
            test.sendIntent(writer, "face.setHappiness", #""value":\#(value)"#)
            _ = test.messages(of: writer)
        }
        let runtime = test.server.directory["lobby"]!
        XCTAssertFalse(runtime.log.holds(reader.connection.output.cursor), "the log gave up the reader's entries")

        let messages = test.messages(of: reader)
        XCTAssertEqual(messages.map { $0["type"]?.stringValue }, ["resync"])
        XCTAssertEqual(messages.first?["seq"]?.intValue, 12)
        XCTAssertEqual(messages.first?["state"]?["face"]?["happiness"]?.intValue, 12)
        XCTAssertEqual(messages.first?["presenceCount"]?.intValue, 2)
        XCTAssertEqual(test.metrics.resyncs, 1)
        XCTAssertGreaterThan(test.metrics.outboxDrops, 0)
        XCTAssertEqual(reader.connection.output.cursor, runtime.log.end)
    }

    func testUnreadRepliesPauseReadingUntilHalfHasDrained() {
        let test = TestServer(config: TestServer.config { $0.limits.maxQueuedBytes = 1024 })
        // With an extension the transport frames each message: one per callback.
        let client = test.joined(usesExtensions: true)
        var sent = 0
        while !client.connection.output.readingPaused && sent < 100 {
            sent += 1
            test.send(client, #"{"type":"ping","id":"p\#(sent)"}"#)
        }
        XCTAssertTrue(client.connection.output.readingPaused)
        XCTAssertEqual(client.transport.pauses, 1)
        XCTAssertEqual(test.metrics.readPauses, 1)
        XCTAssertGreaterThan(client.connection.output.outbox.queuedBytes, 1024)

        let half = client.connection.output.outbox.limit / 2
        while test.pumpOnce(client) {
            if client.connection.output.outbox.queuedBytes > half {
                XCTAssertEqual(client.transport.resumes, 0, "still over half: reading stays paused")
            } else {
                XCTAssertEqual(client.transport.resumes, 1, "at half the client is read again")
            }
        }
        XCTAssertFalse(client.connection.output.readingPaused)
        XCTAssertEqual(client.transport.textFrames.compactMap { $0.json }.ofType("pong").count, sent,
                       "replies are never dropped")
        XCTAssertTrue(client.transport.writes.dropFirst().allSatisfy { $0.kind == .text })
    }

    func testCloseWritesTheCodeAndReasonThenWaitsForTheAcknowledgement() {
        let test = TestServer()
        let client = test.joined()
        test.server.broadcaster.close(client.connection, code: .policyViolation, reason: "go away")
        test.pump(client)

        let last = client.transport.writes.last
        XCTAssertEqual(last?.kind, .preframed)
        XCTAssertEqual(last?.frames.count, 1)
        XCTAssertEqual(last?.frames.first?.closeCode, 1008)
        XCTAssertEqual(last?.frames.first?.closeReason, "go away")
        XCTAssertEqual(client.transport.closeAckWaits, [Broadcaster.closeAckSeconds])
        XCTAssertTrue(client.connection.output.closeFrameSent)

        // Nothing follows the close frame.
        let writes = client.transport.writes.count
        test.server.broadcaster.sendError(WireError(.badMessage, "late"), to: client.connection)
        test.pump(client)
        XCTAssertEqual(client.transport.writes.count, writes)
    }

    func testThePeersCloseFrameEndsTheConnectionOnlyOnceTheServersIsOut() {
        let test = TestServer()
        let client = test.joined()
        test.server.broadcaster.close(client.connection, code: .policyViolation, reason: "go away")
        XCTAssertFalse(test.server.broadcaster.peerClosing(client.connection), "no close frame of ours to answer yet")
        test.pump(client)

        XCTAssertEqual(client.closeFrame?.closeCode, 1008, "the server's close frame still goes out")
        XCTAssertTrue(test.server.broadcaster.peerClosing(client.connection), "now the peer's is the answer")
    }

    func testImmediateCloseSkipsWhatIsQueued() {
        let test = TestServer()
        let reader = test.joined()
        let writer = test.joined()
        test.sendIntent(writer, "face.setHappiness", #""value":90"#)
        test.server.broadcaster.close(reader.connection, code: .messageTooBig, reason: "too big")
        test.pump(reader)

        XCTAssertEqual(reader.transport.textFrames.count, 1, "only the welcome")
        XCTAssertEqual(reader.closeFrame?.closeCode, 1009)
    }

    func testGracefulCloseWritesWhatIsQueuedFirst() {
        let test = TestServer()
        let reader = test.joined()
        let writer = test.joined()
        test.sendIntent(writer, "face.setHappiness", #""value":90"#)
        test.registry.closeAll(code: .goingAway, reason: "server shutting down")
        test.pump(reader)

        let frames = reader.transport.frames.dropFirst()  // the welcome
        XCTAssertEqual(frames.map { $0.json?["type"]?.stringValue ?? ($0.isClose ? "close" : "?") },
                       ["presence", "event", "close"])
        XCTAssertEqual(reader.closeFrame?.closeCode, 1001)
        XCTAssertEqual(reader.closeFrame?.closeReason, "server shutting down")
    }

    func testARestartClosesTheRecentWritersFirstAndTheOthersAMomentLater() {
        let test = TestServer()
        let earlyWriter = test.joined(name: "early")
        let reader = test.joined(name: "reader")
        let writer = test.joined(name: "writer")
        test.sendIntent(earlyWriter, "dragon.forward")
        test.advance(by: ConnectionRegistry.recentWriterSeconds + 1)
        test.sendIntent(writer, "dragon.back")
        test.turn()
        for client in [earlyWriter, reader, writer] { test.pump(client) }

        test.server.closing = (.serviceRestart, WebSocketCloseCode.serviceRestartReason)
        test.server.closeClients()
        for client in [earlyWriter, reader, writer] { test.pump(client) }
        XCTAssertEqual(writer.closeFrame?.closeCode, 1012, "the one who wrote lately goes first")
        XCTAssertNil(reader.closeFrame, "the others wait")
        XCTAssertNil(earlyWriter.closeFrame, "a write more than \(ConnectionRegistry.recentWriterSeconds) s ago is not lately")
        XCTAssertEqual(test.timers.delay(of: .restartWave) ?? 0, ConnectionRegistry.restartWaveDelay, accuracy: 1e-6)

        test.advance(by: ConnectionRegistry.restartWaveDelay)
        test.turn()
        for client in [earlyWriter, reader, writer] { test.pump(client) }
        XCTAssertEqual(reader.closeFrame?.closeCode, 1012)
        XCTAssertEqual(reader.closeFrame?.closeReason, WebSocketCloseCode.serviceRestartReason)
        XCTAssertEqual(earlyWriter.closeFrame?.closeCode, 1012)
        XCTAssertEqual(writer.transport.frames.filter(\.isClose).count, 1, "one close each")
    }

    func testAShutdownClosesEveryoneAtOnce() {
        let test = TestServer()
        let reader = test.joined()
        let writer = test.joined()
        test.sendIntent(writer, "dragon.forward")
        test.turn()
        test.pump(reader)
        _ = test.messages(of: reader)  // the writer's join, its event
        test.server.closeClients()
        test.pump(writer)
        // The writer is gone before the reader's close is written: everyone is going, so no leave for it.
        test.close(writer)
        test.pump(reader)
        XCTAssertEqual([reader.closeFrame?.closeCode, writer.closeFrame?.closeCode], [1001, 1001])
        XCTAssertEqual(test.types(of: reader).filter { $0 == "presence" }, [], "no presence left for a client closed with everyone")
        XCTAssertNil(test.timers.delay(of: .restartWave))
    }

    func testFailedWriteReportsTheConnectionBroken() {
        let test = TestServer()
        let client = test.connect()
        client.transport.failWrites = true
        XCTAssertTrue(client.transport.writablePending)
        client.transport.writablePending = false
        XCTAssertFalse(test.server.broadcaster.writeable(client.connection))
    }

    func testEchoConnectionsAreFramedByTheTransport() {
        let test = TestServer()
        let transport = FakeConnectionTransport()
        let echo = test.registry.open(transport: transport, kind: .echo, peerAddress: "192.0.2.30",
                                      usesExtensions: false, query: [:], token: nil)
        let client = TestClient(connection: echo, transport: transport)
        XCTAssertFalse(echo.membership.admitted, "echo connections join no room")
        test.receive(client, [1, 2, 3], binary: true, final: true)
        test.receive(client, Array("hel".utf8), binary: false, final: false)
        test.receive(client, Array("lo".utf8), binary: false, final: true)
        test.pump(client)

        XCTAssertEqual(transport.writes.map(\.kind), [.binary, .text])
        XCTAssertEqual(transport.writes.map(\.bytes), [[1, 2, 3], Array("hello".utf8)])
    }
}
