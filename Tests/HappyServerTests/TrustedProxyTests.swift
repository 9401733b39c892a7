import Foundation
import HappyCore
import XCTest

/// `trustedProxies`: behind a reverse proxy every client arrives from the
/// proxy's address; the per-address cap, the HTTP rate limit and the logs
/// use the client that the proxy names in `X-Forwarded-For` instead.
final class TrustedProxyTests: XCTestCase {
    func testForwardedClientsAreEachCappedAndAFreedSlotIsTakenAgain() throws {
        let server = try ServerProcess(["trustedProxies": ["127.0.0.1"], "limits": ["maxConnectionsPerAddress": 2]])
        let distinct = try (0..<5).map { index in
            try joined(server, name: "d\(index)", forwardedFor: "203.0.113.\(index)")
        }
        XCTAssertEqual(distinct.count, 5, "five clients behind one proxy address, past a cap of 2")

        var same = try (0..<2).map { try joined(server, name: "s\($0)", forwardedFor: "198.51.100.7") }
        let third = try RawWebSocket(port: server.port, target: "/ws?name=s2", headers: ["X-Forwarded-For: 198.51.100.7"])
        XCTAssertFalse(third.upgraded, third.handshake)
        XCTAssertEqual(third.status, 429, third.handshake)
        let chained = try RawWebSocket(port: server.port, target: "/ws?name=s3",
                                       headers: ["X-Forwarded-For: 198.51.100.7, 127.0.0.1"])
        XCTAssertEqual(chained.status, 429, "a trusted hop on the right is skipped: \(chained.handshake)")
        let overHTTP = try RawHTTP.send(port: server.port, "GET /api/state HTTP/1.1\r\nHost: x\r\n"
                                        + "X-Forwarded-For: 198.51.100.7\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(overHTTP.status, 429, "the cap covers the HTTP routes too: \(overHTTP.head)")
        XCTAssertEqual(jsonBody(overHTTP.body)?["code"]?.stringValue, "rate_limited", overHTTP.body)

        try hangUp(same.removeFirst())
        let again = try eventually(seconds: 10) {
            let socket = try RawWebSocket(port: server.port, target: "/ws?name=s4", headers: ["X-Forwarded-For: 198.51.100.7"])
            return socket.upgraded ? socket : nil
        }
        guard case .text(let welcome)? = again.nextFrame() else { return XCTFail("no welcome after a slot was freed") }
        XCTAssertEqual(jsonBody(welcome)?["type"]?.stringValue, "welcome")

        let metrics = try RawHTTP.get(port: server.port, target: "/metrics").body
        XCTAssertTrue(metrics.contains(#"happy_connections_refused_total{reason="perAddress"} 3"#), metrics)
        let log = try logOnceItHas(server, ["refused reason=perAddress peer=198.51.100.7 cap=2", "name=s4 room=lobby"])
        for index in 0..<5 {
            XCTAssertTrue(log.contains("name=d\(index) room=lobby peer=203.0.113.\(index)"), "open line of d\(index):\n\(log)")
        }
        let openLines = log.split(separator: "\n").filter { $0.contains(" INFO open ") }
        XCTAssertEqual(openLines.count, 8, log)
        XCTAssertEqual(openLines.filter { $0.hasSuffix("peer=127.0.0.1") }, [], "no client is logged as the proxy")
        withExtendedLifetime((distinct, same, again)) {}
    }

    func testForwardedForIsIgnoredFromPeersThatAreNotTrusted() throws {
        for trusted in [[], ["192.0.2.1"]] {
            let server = try ServerProcess(["trustedProxies": trusted, "limits": ["maxConnectionsPerAddress": 2]])
            let admitted = try (0..<2).map { try joined(server, name: "p\($0)", forwardedFor: "203.0.113.\($0)") }
            XCTAssertThrowsError(try RawWebSocket(port: server.port, target: "/ws?name=p2",
                                                  headers: ["X-Forwarded-For: 203.0.113.2"]),
                                 "trusting \(trusted): a spoofed header does not get past the cap") { error in
                XCTAssertTrue("\(error)".contains("no handshake answer") || "\(error)".contains("send"), "\(error)")
            }
            let log = try logOnceItHas(server, ["name=p1 room=lobby peer=127.0.0.1",
                                                "refused reason=perAddress peer=127.0.0.1 cap=2"])
            XCTAssertTrue(log.contains("name=p0 room=lobby peer=127.0.0.1"), log)
            XCTAssertFalse(log.contains("peer=203.0.113."), "the forwarded address is never believed:\n\(log)")
            withExtendedLifetime(admitted) {}
        }
    }

    func testTheHTTPRateLimitCountsEachForwardedClient() throws {
        let limits: [String: Any] = ["intentsPerSecond": 0.01, "intentBurst": 2]
        let proxied = try ServerProcess(["trustedProxies": ["127.0.0.1"], "limits": limits])
        XCTAssertEqual(try (0..<3).map { _ in try postIntent(proxied, forwardedFor: "198.51.100.7").status }, [200, 200, 429])
        XCTAssertEqual(try postIntent(proxied, forwardedFor: "2001:db8::7").status, 200, "another client has its own bucket")
        XCTAssertEqual(try postIntent(proxied, forwardedFor: "2001:DB8:0::7").status, 200)
        XCTAssertEqual(try postIntent(proxied, forwardedFor: "2001:db8::7").status, 429, "one client in any spelling")
        XCTAssertEqual(try postIntent(proxied, forwardedFor: nil).status, 200, "the proxy's own requests count as the proxy")
        _ = try logOnceItHas(proxied, ["http refused method=POST path=/api/intent status=429 peer=198.51.100.7",
                                       "status=429 peer=2001:db8::7"])

        let direct = try ServerProcess(["limits": limits])
        XCTAssertEqual(try (0..<3).map { try postIntent(direct, forwardedFor: "198.51.100.\($0)").status }, [200, 200, 429],
                       "without trustedProxies one peer is one client whatever it forwards")
        _ = try logOnceItHas(direct, ["status=429 peer=127.0.0.1"])
    }

    // MARK: helpers

    /// A WebSocket client behind the proxy: upgraded and welcomed.
    private func joined(_ server: ServerProcess, name: String, forwardedFor: String,
                        file: StaticString = #filePath, line: UInt = #line) throws -> RawWebSocket {
        let socket = try RawWebSocket(port: server.port, target: "/ws?name=\(name)", headers: ["X-Forwarded-For: \(forwardedFor)"])
        XCTAssertTrue(socket.upgraded, "\(name): \(socket.handshake)", file: file, line: line)
        guard case .text(let text)? = socket.nextFrame() else {
            throw RawSocket.failure("\(name): no welcome")
        }
        XCTAssertEqual(jsonBody(text)?["type"]?.stringValue, "welcome", file: file, line: line)
        return socket
    }

    /// Closes with a close handshake and waits for the server's close frame.
    private func hangUp(_ socket: RawWebSocket) throws {
        try socket.send(opcode: 0x8, [0x03, 0xE8])
        guard case .close? = socket.readUntilClose().close else { throw RawSocket.failure("no close frame back") }
    }

    private func postIntent(_ server: ServerProcess, forwardedFor: String?) throws -> RawHTTP.Response {
        let body = #"{"action":"dragon.forward"}"#
        let header = forwardedFor.map { "X-Forwarded-For: \($0)\r\n" } ?? ""
        return try RawHTTP.send(port: server.port, "POST /api/intent HTTP/1.1\r\nHost: x\r\n\(header)"
                                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                                + "Connection: close\r\n\r\n\(body)")
    }
}
