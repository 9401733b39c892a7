import Foundation
import HappyClientKit
import HappyCore
import XCTest

/// `auth.allowedOrigins` (PROTOCOL.md sections 2 and 7): a browser page from
/// a foreign origin is refused with HTTP 403 before the upgrade.
final class OriginTests: XCTestCase {
    static let allowed = ["https://happy.example", "http://localhost:8080"]

    func testAForeignOriginIsRefusedWith403BeforeTheUpgrade() throws {
        let server = try ServerProcess(["auth": ["allowedOrigins": Self.allowed]])
        let foreign = ["https://evil.example", "http://happy.example", "https://happy.example:8443",
                       "https://happy.example.evil.example", "null", "HTTPS://HAPPY.EXAMPLE"]
        for origin in foreign {
            let raw = try RawWebSocket(port: server.port, headers: ["Origin: \(origin)"])
            XCTAssertEqual(raw.status, 403, "\(origin): \(raw.handshake)")
            XCTAssertFalse(raw.handshake.lowercased().contains("sec-websocket-accept"), origin)

            let client = TestClient(url: server.wsURL, options: WebSocketOptions(origin: origin))
            XCTAssertTrue(client.waitForClose() != nil, origin)
            XCTAssertFalse(client.didOpen, "\(origin) must not be upgraded")
        }
        let metrics = try server.metricsText()
        XCTAssertEqual(metricValue(metrics, #"happy_connections_refused_total{reason="origin"}"#), Double(2 * foreign.count), metrics)
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state").json?["presenceCount"]?.intValue, 0)
        XCTAssertTrue(server.logText.contains("origin=https://evil.example"), "the refusal is logged with the origin")
    }

    func testAnAllowedOriginConnects() throws {
        let server = try ServerProcess(["auth": ["allowedOrigins": Self.allowed]])
        for origin in Self.allowed {
            let raw = try RawWebSocket(port: server.port, headers: ["Origin: \(origin)"])
            XCTAssertTrue(raw.upgraded, "\(origin): \(raw.handshake)")
            let (client, welcome) = try TestClient.join(server, name: "from-page", options: WebSocketOptions(origin: origin))
            XCTAssertEqual(welcome["you"]?["name"]?.stringValue, "from-page")
            client.intent("dragon.forward", id: "o")
            XCTAssertEqual(client.next(type: "ack")?["id"]?.stringValue, "o")
        }
    }

    func testAClientThatSendsNoOriginIsNotABrowserAndConnects() throws {
        let server = try ServerProcess(["auth": ["allowedOrigins": Self.allowed]])
        let raw = try RawWebSocket(port: server.port)
        XCTAssertTrue(raw.upgraded, raw.handshake)
        let (_, welcome) = try TestClient.join(server)
        XCTAssertEqual(welcome["type"]?.stringValue, "welcome")
    }

    func testAnEmptyListAllowsAnyOrigin() throws {
        let server = try ServerProcess(["auth": ["allowedOrigins": [String]()]])
        for origin in ["https://evil.example", "null", "file://"] {
            let raw = try RawWebSocket(port: server.port, headers: ["Origin: \(origin)"])
            XCTAssertTrue(raw.upgraded, "\(origin): \(raw.handshake)")
            _ = try TestClient.join(server, options: WebSocketOptions(origin: origin))
        }
    }
}
