import Foundation
import XCTest

/// Static files come from `webRoot` only: no request path, however encoded,
/// reaches a file outside it.
final class StaticFileTests: XCTestCase {
    private var site: URL!
    private var server: ServerProcess!
    private let secretText = "outside-web-\(UUID().uuidString)"
    private let indexText = "<!doctype html><title>inside web</title>"

    /// site/web/{index.html, app.js, sub/page.html}, with site/secret.txt and
    /// site/../secret.txt beside and above it, and a config file next to them.
    override func setUpWithError() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("happy-static-\(UUID().uuidString.prefix(8))")
        site = root.appendingPathComponent("site")
        let web = site.appendingPathComponent("web")
        try FileManager.default.createDirectory(at: web.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try indexText.write(to: web.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        try "console.log('app')".write(to: web.appendingPathComponent("app.js"), atomically: true, encoding: .utf8)
        try "<p>sub page</p>".write(to: web.appendingPathComponent("sub/page.html"), atomically: true, encoding: .utf8)
        // The server needs the frame renderer's art from its webRoot.
        let assets = web.appendingPathComponent("assets")
        try FileManager.default.createDirectory(at: assets, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: ServerProcess.repositoryRoot.appendingPathComponent("web/assets/scene-art.json"),
                                         to: assets.appendingPathComponent("scene-art.json"))
        try secretText.write(to: site.appendingPathComponent("secret.txt"), atomically: true, encoding: .utf8)
        try secretText.write(to: root.appendingPathComponent("secret.txt"), atomically: true, encoding: .utf8)
        server = try ServerProcess(["webRoot": web.path, "auth": ["secret": secretText]], directory: root)
    }

    override func tearDown() {
        server = nil
        if let site { try? FileManager.default.removeItem(at: site.deletingLastPathComponent()) }
    }

    func testFilesInsideWebAreServed() throws {
        let index = try RawHTTP.get(port: server.port, target: "/")
        XCTAssertEqual(index.status, 200)
        XCTAssertEqual(index.body, indexText)
        XCTAssertEqual(try RawHTTP.get(port: server.port, target: "/app.js").body, "console.log('app')")
        XCTAssertEqual(try RawHTTP.get(port: server.port, target: "/sub/page.html").body, "<p>sub page</p>")
        let inside = try RawHTTP.get(port: server.port, target: "/sub/../index.html")
        XCTAssertEqual(inside.status, 200, "dot segments that stay inside web/ are fine")
        XCTAssertEqual(inside.body, indexText)
        XCTAssertEqual(try RawHTTP.get(port: server.port, target: "/missing.html").status, 404)
    }

    func testPathTraversalNeverLeavesWeb() throws {
        let configPath = server.configURL.path
        let targets = [
            "/../secret.txt", "/../../secret.txt", "/../../../../../../../../etc/passwd",
            "/..%2fsecret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/%2e%2e%2fsecret.txt",
            "/.%2e/secret.txt", "/%2e./secret.txt", "/%2e%2e%2f%2e%2e%2fsecret.txt", "/%252e%252e/secret.txt",
            "/..%5csecret.txt", "/..\\secret.txt", "/sub/../../secret.txt", "/sub/..%2f..%2fsecret.txt",
            "/index.html/../../secret.txt", "/./../secret.txt", "/....//secret.txt", "/..;/secret.txt",
            "/%c0%ae%c0%ae/secret.txt", "/..%00/secret.txt", "/%00/../secret.txt",
            "//etc/passwd", "///etc/passwd", "/etc/passwd", "/%2fetc%2fpasswd", "\(configPath)", "/\(configPath)",
            "//\(configPath)", "/..\(configPath)", "/api/../../secret.txt", "/healthz/../../secret.txt",
            "../secret.txt", "secret.txt", "http://127.0.0.1/../secret.txt", "*",
        ]
        for target in targets {
            let response: RawHTTP.Response
            do {
                response = try RawHTTP.get(port: server.port, target: target)
            } catch {
                continue  // the server dropped the request without an answer: nothing leaked
            }
            XCTAssertFalse(response.body.contains(secretText), "\(target) leaked the file outside web/")
            XCTAssertFalse(response.body.contains("root:x:0:0"), "\(target) leaked /etc/passwd")
            XCTAssertFalse(response.body.contains("\"auth\""), "\(target) leaked the config file")
            if response.status == 200 {
                XCTAssertEqual(response.body, indexText, "\(target): a 200 may only be a file inside web/")
            } else {
                XCTAssertTrue((400..<500).contains(response.status), "\(target): \(response.status)")
            }
        }
        XCTAssertTrue(server.isRunning)
        XCTAssertEqual(try RawHTTP.get(port: server.port, target: "/healthz").body, "ok")
    }
}
