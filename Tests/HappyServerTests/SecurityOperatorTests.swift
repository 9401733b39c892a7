import Foundation
import HappyCore
import XCTest

/// Who may operate the server (PROTOCOL.md section 13), tried as an attacker
/// would on a live server: a page in the operator's browser, DNS rebinding,
/// a reverse proxy on the same host, a foreign origin (findings 1, 2 and 6
/// of the security review).
final class SecurityOperatorTests: XCTestCase {
    /// A raw request, so that Host, Origin and Content-Type are exactly what an attacker's page makes them.
    private func send(_ server: ServerProcess, _ method: String, _ path: String, headers: [String], body: String = "")
        throws -> RawHTTP.Response {
        var request = "\(method) \(path) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.lowercased().hasPrefix("host:") }) { request += "Host: 127.0.0.1:\(server.port)\r\n" }
        for header in headers { request += header + "\r\n" }
        request += "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        return try RawHTTP.send(port: server.port, request)
    }

    func testALoopbackPageCannotKickWithAPlainFormAndRebindingGetsNothing() throws {
        let server = try ServerProcess()
        let (alice, _) = try TestClient.join(server, room: "lobby", name: "alice")
        let key = "Authorization: Bearer \(server.operatorKey)"
        XCTAssertFalse(server.operatorKey.isEmpty, "the server made an operator key on its first start")

        // The review's reproduction: a form posted from a page open in the operator's browser.
        let form = try send(server, "POST", "/api/rooms/lobby/kick", headers: ["Content-Type: text/plain", "Origin: null"],
                            body: #"{"name":"alice"}"#)
        XCTAssertEqual(form.status, 403, form.body)
        // Sent as the operator's own tools would, without the key: still nothing.
        let keyless = try send(server, "POST", "/api/rooms/lobby/kick", headers: ["Content-Type: application/json"],
                               body: #"{"name":"alice"}"#)
        XCTAssertEqual(keyless.status, 401, keyless.body)
        XCTAssertTrue(keyless.body.contains("operator key"), keyless.body)
        // Even holding the key, a page's plain form or another origin is refused.
        XCTAssertEqual(try send(server, "POST", "/api/rooms/lobby/kick", headers: [key, "Content-Type: text/plain", "Origin: null"],
                                body: #"{"name":"alice"}"#).status, 403)
        XCTAssertEqual(try send(server, "POST", "/api/rooms/lobby/kick",
                                headers: [key, "Content-Type: application/json", "Origin: https://evil.example"],
                                body: #"{"name":"alice"}"#).status, 403)
        // DNS rebinding: the attacker's name now resolves to 127.0.0.1; Host gives it away.
        let rebinding = "Host: rebind.attacker.example:\(server.port)"
        for (method, path) in [("DELETE", "/api/rooms/lobby"), ("GET", "/api/rooms/lobby"), ("GET", "/api/rooms")] {
            let answer = try send(server, method, path, headers: [rebinding, key])
            XCTAssertEqual(answer.status, 403, "\(method) \(path): \(answer.body)")
            XCTAssertFalse(answer.body.contains("127.0.0.1"), "no client address leaks: \(answer.body)")
        }
        XCTAssertNil(alice.closeCode, "alice is still there")

        let kicked = try send(server, "POST", "/api/rooms/lobby/kick", headers: [key, "Content-Type: application/json"],
                              body: #"{"name":"alice"}"#)
        XCTAssertEqual(jsonBody(kicked.body)?["kicked"]?.intValue, 1, kicked.body)
        XCTAssertEqual(alice.waitForClose(timeout: 5), .some(4003))
    }

    func testTheOperatorKeyIsTheServersAloneAndSurvivesARestart() throws {
        let server = try ServerProcess()
        let key = server.operatorKey
        let file = server.dataDirectory.appendingPathComponent("operator.key").path
        XCTAssertEqual(try permissions(file), 0o600)
        XCTAssertEqual(try permissions(server.dataDirectory.path), 0o700)
        XCTAssertGreaterThanOrEqual(key.utf8.count, 43, "32 random bytes")
        server.stop()
        try server.start()
        XCTAssertEqual(server.operatorKey, key, "kept in dataDir and reused")
        // Logged just after the listening line: wait for it rather than read the log at once.
        let log = try logOnceItHas(server, ["operator key file=\(file)"])
        XCTAssertFalse(log.contains(key), "a log that is no terminal never shows the key")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/rooms", headers: server.operatorHeaders).status, 200)
    }

    func testBehindASameHostProxyNobodyIsLoopbackByAccident() throws {
        // The proxy is trusted, but its header is missing or broken: the client is unknown, not the proxy.
        let server = try ServerProcess(["trustedProxies": ["127.0.0.1"]])
        var sockets: [RawWebSocket] = []
        for (index, header) in [["X-Forwarded-For: 203.0.113.9, garbage"], ["X-Forwarded-For: unknown"],
                                ["X-Forwarded-For: ,"], []].enumerated() {
            let socket = try RawWebSocket(port: server.port, target: "/ws?room=behind&name=p\(index)", headers: header)
            XCTAssertTrue(socket.upgraded, socket.handshake)
            _ = socket.nextFrame()
            sockets.append(socket)
        }
        let room = try HTTP.get("\(server.httpBase)/api/rooms/behind", headers: server.operatorHeaders).json
        let addresses = room?["connections"]?.arrayValue?.compactMap { $0["address"]?.stringValue } ?? []
        XCTAssertEqual(addresses, Array(repeating: "unknown", count: 4), "never 127.0.0.1")
        // Without trusted proxies, a proxy's header is worth a warning.
        let unaware = try ServerProcess()
        _ = try HTTP.get("\(unaware.httpBase)/api/state", headers: ["X-Forwarded-For": "198.51.100.7"])
        _ = try logOnceItHas(unaware, ["X-Forwarded-For but trustedProxies is empty"])
        withExtendedLifetime(sockets) {}
    }

    func testAllowedOriginsGuardHTTPIntentsAsTheyGuardWebSockets() throws {
        let server = try ServerProcess(["auth": ["allowedOrigins": ["https://good.example"]]])
        let intent = #"{"type":"intent","action":"dragon.forward"}"#
        let foreign = try send(server, "POST", "/api/intent", headers: ["Content-Type: text/plain", "Origin: https://evil.example"],
                               body: intent)
        XCTAssertEqual(foreign.status, 403, foreign.body)
        XCTAssertEqual(try send(server, "POST", "/api/intent", headers: ["Origin: https://good.example"], body: intent).status, 200)
        XCTAssertEqual(try send(server, "POST", "/api/intent", headers: ["Origin: http://127.0.0.1:\(server.port)"], body: intent).status,
                       200, "the server's own page")
        XCTAssertEqual(try send(server, "POST", "/api/intent", headers: [], body: intent).status, 200, "no browser, no Origin")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["seq"]?.intValue, 3, "the foreign one changed nothing")
    }

    private func permissions(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
