import Foundation
import XCTest

/// Issue 26 point 10 through the real server: the client module under
/// `/js/` (lws's file mount) and the read-only API answer a request from a
/// page on another origin with `Access-Control-Allow-Origin` as
/// `auth.allowedOrigins` says; the page's own files do not.
final class CrossOriginFileTests: XCTestCase {
    private static let elsewhere = "http://127.0.0.1:9"

    /// GET `target` with an `Origin` header (or none); the status and headers by lower-case name.
    private func get(_ server: ServerProcess, _ target: String, origin: String?) throws -> (status: Int, headers: [String: String]) {
        let originLine = origin.map { "Origin: \($0)\r\n" } ?? ""
        let response = try RawHTTP.send(port: server.port, "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
                                        + originLine + "Connection: close\r\n\r\n")
        var headers: [String: String] = [:]
        for line in response.head.components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (response.status, headers)
    }

    func testAnyOriginMayImportTheModuleAndReadTheStateWhenNoOriginsAreListed() throws {
        let server = try ServerProcess()
        for target in ["/js/happy-client.js", "/js/describe.js", "/api/state?room=cors", "/api/history?room=cors"] {
            let answer = try get(server, target, origin: Self.elsewhere)
            XCTAssertEqual(answer.status, 200, target)
            XCTAssertEqual(answer.headers["access-control-allow-origin"], "*", target)
        }
        XCTAssertEqual(try get(server, "/js/happy-client.js", origin: nil).headers["access-control-allow-origin"], "*")
        for target in ["/", "/app.js", "/assets/scene-art.json", "/healthz"] {
            let answer = try get(server, target, origin: Self.elsewhere)
            XCTAssertEqual(answer.status, 200, target)
            XCTAssertNil(answer.headers["access-control-allow-origin"], "\(target) is the page's own")
        }
        let (_, welcome) = try TestClient.join(server, name: "still-joins")
        XCTAssertEqual(welcome["you"]?["name"]?.stringValue, "still-joins", "the WebSocket handshake is untouched")
    }

    func testOnlyListedOriginsAreEchoed() throws {
        let server = try ServerProcess(["auth": ["allowedOrigins": [Self.elsewhere]]])
        for target in ["/js/happy-client.js", "/api/state?room=cors"] {
            let listed = try get(server, target, origin: Self.elsewhere)
            XCTAssertEqual(listed.headers["access-control-allow-origin"], Self.elsewhere, target)
            XCTAssertEqual(listed.headers["vary"], "Origin", target)
            let other = try get(server, target, origin: "http://other.example")
            XCTAssertEqual(other.status, 200, target)
            XCTAssertNil(other.headers["access-control-allow-origin"], target)
            XCTAssertEqual(other.headers["vary"], "Origin", target)
        }
    }
}
