import Foundation
import HappyCore
import XCTest

/// Connection-level defences: the per-address cap (`limits.maxConnectionsPerAddress`)
/// and the header/body timeouts that hold off slowloris clients.
final class ConnectionLimitTests: XCTestCase {
    /// lws's `timeout_secs` for request headers and bodies (HappyServer.start).
    static let headerTimeout = 10.0

    func testThePerAddressCapRefusesTheExtraConnectionAndRecovers() throws {
        let server = try ServerProcess(["limits": ["maxConnectionsPerAddress": 4]])
        var clients = try (0..<4).map { try TestClient.join(server, name: "c\($0)").0 }

        let extra = TestClient(url: server.wsURL)
        XCTAssertTrue(extra.waitForClose() != nil, "the fifth connection is dropped")
        XCTAssertFalse(extra.didOpen, "refused at accept, before any handshake")
        let raw = try RawSocket(port: server.port, timeout: 3)
        try? raw.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let refused = raw.readToEnd()
        XCTAssertEqual(refused.bytes, [], "plain HTTP from the same address is refused too")
        XCTAssertTrue(refused.ending.peerClosed, "the server closes a refused connection, it does not hold it: \(refused.ending)")

        clients[0].close()
        _ = clients[0].waitForClose()
        XCTAssertTrue(clients[0].isClosed)
        clients.removeFirst()
        let (again, welcome) = try joinWithin(server, seconds: 5)
        XCTAssertEqual(welcome["presenceCount"]?.intValue, 4, "a freed slot is taken again")
        clients.append(again)

        again.close()
        _ = again.waitForClose()
        XCTAssertTrue(again.isClosed)
        let metrics = try eventually(seconds: 5) { try? server.metricsText() }
        XCTAssertEqual(metricValue(metrics, #"happy_connections_refused_total{reason="perAddress"}"#), 2, metrics)
        XCTAssertTrue(server.logText.contains("reason=perAddress"))
    }

    func testSlowlorisClientsDoNotStarveOthersAndAreCutOff() throws {
        let server = try ServerProcess(["limits": ["intentsPerSecond": 1000, "intentBurst": 1000]])
        let headerDribblers = try (0..<150).map { index in
            let socket = try RawSocket(port: server.port)
            try socket.send("GET /\(index % 2 == 0 ? "ws" : "index.html") HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            return socket
        }
        let bodyDribblers = try (0..<50).map { _ in
            let socket = try RawSocket(port: server.port)
            try socket.send("POST /api/intent HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4000\r\n\r\n{")
            return socket
        }
        let slow = headerDribblers + bodyDribblers
        let opened = Date()
        let dribbling = Dribbler(slow)
        let thread = Thread { dribbling.run(interval: 0.5, until: Date(timeIntervalSinceNow: Self.headerTimeout + 10)) }
        thread.start()
        defer { dribbling.stop() }

        let joinStarted = Date()
        let (client, _) = try TestClient.join(server, name: "patient")
        XCTAssertLessThan(Date().timeIntervalSince(joinStarted), 2, "the welcome came late")
        var slowest = 0.0
        for index in 0..<50 {
            let sent = Date()
            client.intent("face.setHappiness", id: "h\(index)", ["value": index])
            XCTAssertEqual(client.next(type: "ack", timeout: 5)?["id"]?.stringValue, "h\(index)")
            slowest = max(slowest, Date().timeIntervalSince(sent))
        }
        XCTAssertLessThan(slowest, 1, "acks slowed down by idle dribblers")
        XCTAssertEqual(try RawHTTP.get(port: server.port, target: "/healthz").body, "ok")

        let closedAfter = try eventually(seconds: Self.headerTimeout + 8) {
            dribbling.openCount == 0 ? Date().timeIntervalSince(opened) : nil
        }
        print(String(format: "slowloris: %d dribbling connections cut off after %.1f s; slowest ack %.0f ms",
                     slow.count, closedAfter, slowest * 1000))
        XCTAssertGreaterThanOrEqual(closedAfter, Self.headerTimeout - 1, "cut off before the timeout")
        let metrics = try server.metricsText()
        XCTAssertEqual(metricValue(metrics, #"happy_connections_refused_total{reason="slowBody"}"#), Double(bodyDribblers.count),
                       "every body dribbler was dropped by the body deadline: \(metrics)")
        client.intent("dragon.forward", id: "after")
        XCTAssertEqual(client.next(type: "ack")?["id"]?.stringValue, "after", "the patient client is still served")
    }

    func testOversizeHeadersAndBodiesAreRefused() throws {
        let server = try ServerProcess()
        let bigHeader = try RawSocket(port: server.port, timeout: 3)
        try bigHeader.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "a", count: 5000))\r\n\r\n")
        let dropped = bigHeader.readToEnd()
        XCTAssertEqual(dropped.bytes, [], "headers over 4096 bytes: dropped without an answer")
        XCTAssertTrue(dropped.ending.peerClosed, "the server closes the connection, it does not hold it: \(dropped.ending)")
        let fits = try RawHTTP.send(port: server.port, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                    + "X-Padding: \(String(repeating: "a", count: 3000))\r\n\r\n")
        XCTAssertEqual(fits.body, "ok")

        let bigBody = try RawHTTP.send(port: server.port, "POST /api/intent HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        XCTAssertEqual(bigBody.status, 413, "refused from its Content-Length, before a byte of it is read")
        XCTAssertTrue(bigBody.head.lowercased().contains("connection: close"), bigBody.head)
        XCTAssertEqual(JSONValue.parse(bigBody.body)["type"]?.stringValue, "error")
        XCTAssertEqual(try RawHTTP.get(port: server.port, target: "/healthz").body, "ok")
    }

    // MARK: helpers

    private func joinWithin(_ server: ServerProcess, seconds: Double) throws -> (TestClient, JSONValue) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            let client = TestClient(url: server.wsURL)
            if let welcome = client.next(type: "welcome", timeout: 2) { return (client, welcome) }
            if Date() > deadline { throw RawSocket.failure("no welcome within \(seconds) s") }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }
}
