import Foundation
import HappyCore
import XCTest

/// Control characters in a request target (`%0A`, `%0D`, `%00`, ...) are
/// refused, never cut short. libwebsockets 4.1 ends the request line at a
/// CR or LF decoded from the target, and drops a request with a decoded NUL
/// before any callback.
final class RequestTargetTests: XCTestCase {
    func testALineBreakInTheWebSocketTargetIsAnswered400() throws {
        let server = try ServerProcess()
        for target in ["/ws?name=a%0Ab", "/ws?name=a%0Db", "/ws?room=lobby%0A", "/ws?name=%0D%0A", "/ws%0A?name=a"] {
            let socket = try RawWebSocket(port: server.port, target: target)
            XCTAssertFalse(socket.upgraded, "\(target): \(socket.handshake)")
            XCTAssertEqual(socket.status, 400, "\(target): \(socket.handshake)")
            XCTAssertTrue(socket.readToEndText().contains("line break"), "\(target): the body says why")
        }
        let (_, welcome) = try TestClient.join(server, name: "after")
        XCTAssertEqual(welcome["presenceCount"]?.intValue, 1, "no refused request joined under a cut name")
        XCTAssertEqual(welcome["presence"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["after"])
    }

    func testALineBreakInAnHTTPQueryIsA400NotACutValue() throws {
        let server = try ServerProcess()
        for target in ["/api/state?room=a%0Ab", "/api/state?room=a%0Db", "/api/state?room=a&x=%0A",
                       "/frame/face.png?room=a%0Ab"] {
            let response = try RawHTTP.get(port: server.port, target: target)
            XCTAssertEqual(response.status, 400, "\(target): \(response.head)")
            XCTAssertEqual(jsonBody(response.body)?["code"]?.stringValue, "invalid_value", "\(target): \(response.body)")
        }
        let body = #"{"action":"dragon.forward"}"#
        let post = try RawHTTP.send(port: server.port, "POST /api/intent?room=a%0Ab HTTP/1.1\r\nHost: x\r\n"
                                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        XCTAssertEqual(post.status, 400, post.head)
        let state = try RawHTTP.get(port: server.port, target: "/api/state?room=a")
        XCTAssertEqual(jsonBody(state.body)?["seq"]?.intValue, 0, "nothing was applied to the room the cut target names")
    }

    func testAnyControlCharacterInAnHTTPQueryValueIsA400() throws {
        let server = try ServerProcess()
        for (target, argument) in [("/api/state?room=lobby&note=%01", "note"), ("/api/state?room=lobby%7F", "room"),
                                   ("/api/state?room=lobby&w=%C2%85", "w"), ("/frame/face.png?w=64%09", "w")] {
            let response = try RawHTTP.get(port: server.port, target: target)
            XCTAssertEqual(response.status, 400, "\(target): \(response.head)")
            let error = jsonBody(response.body)
            XCTAssertEqual(error?["code"]?.stringValue, "invalid_value", "\(target): \(response.body)")
            XCTAssertTrue(error?["message"]?.stringValue?.contains(argument) == true, "\(target): names \(argument)")
        }
        XCTAssertEqual(try RawHTTP.get(port: server.port, target: "/api/state?room=lobby&token=a%20b").status, 200,
                       "printable characters pass")
    }

    /// lws answers nothing to a target with `%00`: its URI decoder fails the
    /// request before any callback, so the server cannot answer it.
    func testANulInTheTargetIsDroppedWithoutAnAnswerAndTheServerStaysHealthy() throws {
        let server = try ServerProcess()
        let upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            + "Sec-WebSocket-Version: 13\r\n"
        for request in ["GET /ws?name=a%00b HTTP/1.1\r\nHost: x\r\n\(upgrade)\r\n",
                        "GET /api/state?room=a%00b HTTP/1.1\r\nHost: x\r\n\r\n"] {
            let socket = try RawSocket(port: server.port, timeout: 8)
            let sent = Date()
            try socket.send(request)
            let (bytes, ending) = socket.readToEnd()
            XCTAssertEqual(bytes, [], "no answer at all")
            XCTAssertTrue(ending.peerClosed, "the server drops the connection: \(ending)")
            XCTAssertLessThan(Date().timeIntervalSince(sent), 5, "the connection is closed, not left hanging")
        }
        XCTAssertEqual(try RawHTTP.get(port: server.port, target: "/healthz").body, "ok")
        let (_, welcome) = try TestClient.join(server, name: "after")
        XCTAssertEqual(welcome["you"]?["name"]?.stringValue, "after")
    }

    func testALongQueryArgumentIsReadWholeNotSkipped() throws {
        let server = try ServerProcess()
        let longRoom = String(repeating: "r", count: 1100)
        let state = try RawHTTP.get(port: server.port, target: "/api/state?room=\(longRoom)")
        XCTAssertEqual(state.status, 400, "a room name of 1100 characters is refused, not replaced by the default room")
        let named = try RawHTTP.get(port: server.port, target: "/api/state?token=\(longRoom)&room=other")
        XCTAssertEqual(jsonBody(named.body)?["room"]?.stringValue, "other", "arguments after a long one are read")
        let client = TestClient(url: server.wsURL, query: [("name", String(repeating: "n", count: 1100))])
        XCTAssertEqual(client.waitForClose(), .some(1008), "a long name is refused, not ignored")
    }
}

private extension RawWebSocket {
    /// The rest of a refused handshake's answer (its body).
    func readToEndText() -> String { String(decoding: socket.readToEnd().bytes, as: UTF8.self) }
}
