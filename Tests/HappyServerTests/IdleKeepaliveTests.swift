import Foundation
import HappyCore
import XCTest

/// WebSocket keepalive (docs/operations.md, limits): after `pingIntervalSeconds` of
/// silence the server pings; a peer that does not answer within
/// `pingTimeoutSeconds` is dropped and its `presence` left is broadcast.
/// Driven with a raw socket, so the test decides when pongs are sent.
final class IdleKeepaliveTests: XCTestCase {
    private static let interval = 1.0
    private static let timeout = 1.0
    /// The sweep runs every half ping interval (0.5 s here): a ping and its timeout are each noticed that late at most.
    private static let slack = 3.5

    func testAPeerIsKeptWhileItAnswersPingsAndDroppedOnceItStops() throws {
        let server = try ServerProcess(["limits": ["pingIntervalSeconds": Self.interval,
                                                   "pingTimeoutSeconds": Self.timeout]])
        let (alice, _) = try TestClient.join(server, room: "k", name: "alice")
        let raw = try RawWebSocket(port: server.port, target: "/ws?room=k&name=quiet", timeout: 0.2)
        XCTAssertTrue(raw.upgraded, raw.handshake)
        let joined = try XCTUnwrap(alice.next(type: "presence")?["joined"])
        XCTAssertEqual(joined["name"]?.stringValue, "quiet")

        // Idle but answering: several intervals pass, the pings come and the peer stays.
        var answered = 0
        let idleUntil = Date(timeIntervalSinceNow: 5 * Self.interval)
        while Date() < idleUntil {
            guard let frame = raw.nextFrame() else {
                XCTAssertFalse(raw.socket.discardReceivedAndCheckClosed(), "dropped although it answered every ping")
                continue
            }
            if case .ping(let payload) = frame {
                try raw.send(opcode: 0xA, payload)
                answered += 1
            }
        }
        XCTAssertGreaterThanOrEqual(answered, 2, "pings after each idle interval")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=k").json?["presenceCount"]?.intValue, 2)

        // Still reading, no longer answering.
        let stopped = Date()
        var unanswered = 0
        var dropped: Double?
        while dropped == nil && Date().timeIntervalSince(stopped) < Self.interval + Self.timeout + Self.slack + 3 {
            if let frame = raw.nextFrame() {
                if case .ping = frame { unanswered += 1 }
            } else if raw.socket.discardReceivedAndCheckClosed() {
                dropped = Date().timeIntervalSince(stopped)
            }
        }
        let elapsed = try XCTUnwrap(dropped, "a peer that stopped answering pings was not dropped")
        print(String(format: "silent peer dropped %.1f s after it stopped answering pings", elapsed))
        XCTAssertGreaterThanOrEqual(unanswered, 1, "dropped after a ping went unanswered")
        XCTAssertGreaterThanOrEqual(elapsed, Self.timeout - 0.2, "not before the ping could time out")
        XCTAssertLessThanOrEqual(elapsed, Self.interval + Self.timeout + Self.slack)

        let left = try XCTUnwrap(alice.next(type: "presence", timeout: 3), "no presence left for the dropped peer")
        XCTAssertEqual(left["left"]?["id"], joined["id"])
        XCTAssertFalse(alice.isClosed, "the client kit answers pings by itself and stays")
        alice.send(#"{"type":"ping","id":"here"}"#)
        XCTAssertEqual(alice.next(type: "pong")?["id"]?.stringValue, "here")
        let metrics = try HTTP.get("\(server.httpBase)/metrics").text
        XCTAssertTrue(metrics.contains("\nhappy_ping_timeouts_total 1\n"), metrics)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=k").json?["presenceCount"]?.intValue, 1)
    }
}
