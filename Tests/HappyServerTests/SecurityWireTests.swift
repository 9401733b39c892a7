import Foundation
import HappyCore
import HappyServer
import XCTest

/// WebSocket frames that break RFC 6455 or flood the server without a
/// message, and tokens that bend the rules, on a live server (findings 8 and
/// 9 of the security review).
final class SecurityWireTests: XCTestCase {
    /// A raw client, welcomed.
    private func welcomed(_ server: ServerProcess, name: String) throws -> RawWebSocket {
        let socket = try RawWebSocket(port: server.port, target: "/ws?name=\(name)", timeout: 10)
        XCTAssertTrue(socket.upgraded, socket.handshake)
        guard case .text(let welcome)? = socket.nextFrame(), welcome.contains("\"welcome\"") else {
            throw RawSocket.failure("no welcome")
        }
        return socket
    }

    /// The close frame the server sends, skipping what comes before it.
    private func closeFrame(of socket: RawWebSocket) -> (code: UInt16?, reason: String)? {
        while let frame = socket.nextFrame() {
            if case .close(let code, let reason) = frame { return (code, reason) }
        }
        return nil
    }

    func testAnUnmaskedClientFrameClosesWithProtocolError() throws {
        let server = try ServerProcess()
        let socket = try welcomed(server, name: "bare")
        try socket.send(opcode: 0x1, Array(#"{"type":"intent","action":"dragon.forward","id":"u"}"#.utf8), masked: false)
        let close = closeFrame(of: socket)
        XCTAssertEqual(close?.code, 1002, "RFC 6455 section 5.1")
        XCTAssertTrue(close?.reason.contains("masked") == true, close?.reason ?? "")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["seq"]?.intValue, 0, "its intent was not applied")

        // Masked frames of every size stay welcome.
        let honest = try welcomed(server, name: "honest")
        for padding in [0, 100, 200, 70_000 / 20, 4000] {
            // Trailing spaces keep it JSON; the sizes cross the frame header's 7-bit and 16-bit lengths.
            try honest.send(text: #"{"type":"ping","id":"p\#(padding)"}"# + String(repeating: " ", count: min(padding, 4000)))
            guard case .text(let pong)? = honest.nextFrame() else { return XCTFail("no answer after \(padding) spaces") }
            XCTAssertTrue(pong.contains("\"p\(padding)\""), pong)
        }
    }

    func testAPingFloodIsClosedAndOthersAreServedMeanwhile() throws {
        let server = try ServerProcess()
        let flooder = try welcomed(server, name: "flooder")
        let (alice, _) = try TestClient.join(server, name: "alice")
        let ping = RawWebSocket.frame(opcode: 0x9, Array(repeating: 0x61, count: 125))
        let burst = Array(Array(repeating: ping, count: 256).joined())
        let flooding = Thread {
            let deadline = Date(timeIntervalSinceNow: 30)
            while Date() < deadline, (try? flooder.socket.send(burst)) != nil {}
        }
        flooding.start()
        alice.intent("dragon.forward", id: "during")
        XCTAssertEqual(alice.next(type: "ack", timeout: 10)?["id"]?.stringValue, "during", "the flood does not hold others up")
        let ended = flooder.socket.awaitEnd(seconds: 25)
        XCTAssertTrue(ended.peerClosed, "the flooder is dropped: \(ended)")
        let metrics = try eventually(seconds: 5) { try? server.metricsText() }
        XCTAssertGreaterThanOrEqual(metricValue(metrics, "happy_flood_closes_total") ?? 0, 1, metrics)
    }

    func testAFloodOfEmptyFragmentsIsClosed() throws {
        let server = try ServerProcess(["limits": ["intentsPerSecond": 10, "intentBurst": 10, "floodLimit": 20]])
        let socket = try welcomed(server, name: "empty")
        try socket.send(opcode: 0x1, [], fin: false)
        let empty = RawWebSocket.frame(opcode: 0x0, [], fin: false)
        try socket.socket.send(Array(Array(repeating: empty, count: 5000).joined()))
        XCTAssertEqual(closeFrame(of: socket)?.code, 1008)
    }

    func testTokensNotYetValidOrNamingAClaimTwiceAreRefused() throws {
        let secret = "wire-secret"
        let server = try ServerProcess(["auth": ["secret": secret, "audience": "happy-test"]])
        let verifier = HMACSHA256.verifier(secret: secret)
        func signed(_ payload: String) -> String {
            let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
            let body = Base64URL.encode(Array(payload.utf8))
            let signature = Base64URL.encode(HMACSHA256.digest(key: Array(secret.utf8), message: Array("\(header).\(body)".utf8)))
            return "\(header).\(body).\(signature)"
        }
        let now = Int(Date().timeIntervalSince1970)
        let refused = [
            ("nbf ahead", signed(#"{"sub":"a","role":"player","aud":"happy-test","nbf":\#(now + 3600)}"#)),
            ("role twice", signed(#"{"sub":"a","role":"player","aud":"happy-test","role":"admin"}"#)),
            ("no audience", signed(#"{"sub":"a","role":"player"}"#)),
            ("another audience", signed(#"{"sub":"a","role":"player","aud":"elsewhere"}"#)),
        ]
        for (why, token) in refused {
            let answer = try HTTP.get("\(server.httpBase)/api/state", headers: ["Authorization": "Bearer \(token)"])
            XCTAssertEqual(answer.status, 401, "\(why): \(answer.text)")
        }
        let minted = try TokenMinter.mint(server, subject: "a", role: "player")
        XCTAssertEqual(try verifier.verify(minted, nowSeconds: Int64(now)).get().audience, "happy-test",
                       "happyserver token writes the configured audience")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state", headers: ["Authorization": "Bearer \(minted)"]).status, 200)
    }
}
