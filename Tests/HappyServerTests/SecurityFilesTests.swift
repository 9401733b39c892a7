import Foundation
import HappyCore
import XCTest

/// What the server's answers tell browsers, which files it serves, how it
/// keeps its data and what its log shows (finding 10 of the security review).
final class SecurityFilesTests: XCTestCase {
    private func headers(_ server: ServerProcess, _ path: String) throws -> [String: String] {
        try HTTP.get("\(server.httpBase)\(path)").headers
    }

    func testThePagesRunOnlyTheServersOwnCodeAndTheInspectorIsNeverFramed() throws {
        let server = try ServerProcess()
        for path in ["/", "/index.html", "/admin"] {
            let page = try headers(server, path)
            let policy = try XCTUnwrap(page["content-security-policy"], path)
            XCTAssertTrue(policy.contains("script-src 'self'"), policy)
            XCTAssertTrue(policy.contains("default-src 'self'"), policy)
            XCTAssertFalse(policy.contains("unsafe-inline") || policy.contains("unsafe-eval"), policy)
            XCTAssertEqual(page["x-content-type-options"], "nosniff", path)
            XCTAssertEqual(page["referrer-policy"], "no-referrer", path)
        }
        for path in ["/admin", "/admin.html"] {
            XCTAssertTrue(try headers(server, path)["content-security-policy"]?.contains("frame-ancestors 'none'") == true, path)
            XCTAssertEqual(try headers(server, path)["x-frame-options"], "DENY", path)
        }
        XCTAssertEqual(try headers(server, "/")["x-frame-options"], "SAMEORIGIN")
        for path in ["/app.js", "/js/happy-client.js", "/style.css", "/api/state", "/healthz", "/frame/face.png?w=32&h=32"] {
            XCTAssertEqual(try headers(server, path)["x-content-type-options"], "nosniff", path)
        }
        XCTAssertNil(try headers(server, "/")["strict-transport-security"], "HSTS only under TLS (TLSTests)")
    }

    func testALinkInWebRootLeadsNowhereOutsideIt() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("happy-web-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let web = root.appendingPathComponent("web")
        try FileManager.default.copyItem(at: ServerProcess.repositoryRoot.appendingPathComponent("web"), to: web)
        let secret = root.appendingPathComponent("secret.txt")
        try Data("outside webRoot".utf8).write(to: secret)
        try FileManager.default.createSymbolicLink(atPath: web.appendingPathComponent("escape.txt").path,
                                                   withDestinationPath: secret.path)
        try FileManager.default.createSymbolicLink(atPath: web.appendingPathComponent("shared").path, withDestinationPath: root.path)
        try FileManager.default.createSymbolicLink(atPath: web.appendingPathComponent("alias.css").path,
                                                   withDestinationPath: "style.css")
        let server = try ServerProcess(["webRoot": web.path])
        for path in ["/escape.txt", "/shared/secret.txt"] {
            let answer = try HTTP.get("\(server.httpBase)\(path)")
            XCTAssertEqual(answer.status, 404, path)
            XCTAssertFalse(answer.text.contains("outside webRoot"), path)
        }
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/alias.css").status, 200, "a link that stays inside is served")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/").status, 200)
    }

    func testTheDataDirectoryIsTheServersAloneWhateverTheUmask() throws {
        let server = try ServerProcess(start: false)
        try FileManager.default.createDirectory(at: server.dataDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        let previous = umask(0)
        defer { umask(previous) }
        try server.start()
        umask(previous)
        let (client, _) = try TestClient.join(server, name: "writer")
        client.intent("dragon.forward", id: "w")
        XCTAssertNotNil(client.next(type: "ack"))
        XCTAssertEqual(try permissions(server.dataDirectory.path), 0o700, "an open data directory is narrowed")
        let files = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory.path)
        XCTAssertTrue(Set(["happy.sqlite3", "happy.sqlite3-wal", "operator.key", "happy.lock"]).isSubset(of: files), "\(files)")
        for file in files {
            XCTAssertEqual(try permissions(server.dataDirectory.appendingPathComponent(file).path), 0o600, file)
        }
        XCTAssertTrue(server.logText.contains("data directory narrowed to its owner"), server.logText)
    }

    func testAWebhooksCredentialsNeverReachTheLog() throws {
        let server = try ServerProcess(["webhooks": [["url": "http://hook-user:hook-pass@127.0.0.1:9/hook?apikey=KEY123#frag",
                                                      "events": ["room.created"], "secret": "s"]]])
        let (client, _) = try TestClient.join(server, room: "hooked", name: "h")
        let log = try logOnceItHas(server, ["webhook delivery failed"])
        XCTAssertTrue(log.contains("webhook=http://…@127.0.0.1:9/hook?…"), log)
        for secret in ["hook-user", "hook-pass", "KEY123", "frag"] { XCTAssertFalse(log.contains(secret), secret) }
        withExtendedLifetime(client) {}
    }

    func testAFloodOfRefusalsIsCountedNotLoggedLineByLine() throws {
        let server = try ServerProcess(["limits": ["httpPerSecond": 1_000_000, "httpBurst": 1_000_000]])
        for _ in 0..<300 {
            XCTAssertEqual(try RawHTTP.get(port: server.port, target: "/api/state?room=no%20good").status, 400)
        }
        let log = try eventually(seconds: 20) { () -> String? in
            let text = server.logText
            return text.contains("refused more than the log shows") ? text : nil
        }
        let lines = log.split(separator: "\n").filter { $0.contains("http refused") && $0.contains("status=400") }
        XCTAssertLessThanOrEqual(lines.count, 12, "a few lines per window, not 300:\n\(log)")
        XCTAssertTrue(log.contains("reasons=\"http 400 "), log)
    }

    private func permissions(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
