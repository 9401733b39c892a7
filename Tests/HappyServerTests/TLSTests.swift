import Foundation
import HappyClientKit
import HappyCore
import XCTest

/// `tls.cert` / `tls.key`: the same port serves `wss://` and `https://`.
final class TLSTests: XCTestCase {
    private var server: ServerProcess!
    private var directory: URL!

    /// A self-signed certificate for 127.0.0.1 made by `openssl`, and a server using it.
    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("happy-tls-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let made = try Self.runTool("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", directory.appendingPathComponent("key.pem").path,
            "-out", directory.appendingPathComponent("cert.pem").path,
        ])
        XCTAssertEqual(made.status, 0, made.output)
        server = try ServerProcess(["tls": ["cert": "cert.pem", "key": "key.pem"]], directory: directory)
    }

    override func tearDown() {
        server = nil
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    private var port: Int { server.port }

    func testTheLogAnnouncesAnHTTPSURL() {
        XCTAssertTrue(server.logText.contains("url=https://127.0.0.1:\(port)/"), server.logText)
    }

    func testWSSCarriesTheProtocol() throws {
        let options = WebSocketOptions(allowInsecureTLS: true)
        let alice = TestClient(url: "wss://127.0.0.1:\(port)/ws", query: [("name", "alice")], options: options)
        let welcome = try XCTUnwrap(alice.next(type: "welcome", timeout: 10), "no welcome over wss: \(alice.closeReason)")
        XCTAssertEqual(alice.subprotocol, "happy.v1")
        XCTAssertEqual(welcome["you"]?["name"]?.stringValue, "alice")
        let bob = TestClient(url: "wss://127.0.0.1:\(port)/ws", query: [("name", "bob")], options: options)
        XCTAssertNotNil(bob.next(type: "welcome", timeout: 10))
        alice.intent("face.setHappiness", id: "tls", ["value": 77])
        XCTAssertEqual(alice.next(type: "ack")?["result"]?.stringValue, "applied")
        XCTAssertEqual(bob.next(type: "event")?["state"]?["face"]?["happiness"]?.intValue, 77)
    }

    func testAClientThatChecksCertificatesRefusesTheSelfSignedOne() {
        let client = TestClient(url: "wss://127.0.0.1:\(port)/ws")
        XCTAssertTrue(client.waitForClose(timeout: 10) != nil)
        XCTAssertFalse(client.didOpen, "a self-signed certificate must not pass verification")
    }

    func testPlainWebSocketOnTheTLSPortIsNotServed() {
        let client = TestClient(url: "ws://127.0.0.1:\(port)/ws")
        XCTAssertNil(client.next(type: "welcome", timeout: 5))
        XCTAssertFalse(client.didOpen)
    }

    func testHTTPSServesHealthAndTheAPI() throws {
        let health = try curl("/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.body, "ok")
        let state = try curl("/api/state?room=secure")
        XCTAssertEqual(state.status, 200)
        XCTAssertEqual(JSONValue.parse(state.body)["room"]?.stringValue, "secure")
        let page = try curl("/")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains("<html") || page.body.contains("<!doctype"), page.body)
    }

    /// Browsers that reached the server over TLS stay on it (HSTS), for the page, files and the API alike.
    func testEveryAnswerOverTLSKeepsBrowsersOnHTTPS() throws {
        for path in ["/", "/app.js", "/api/state", "/admin"] {
            let head = try Self.runTool("/usr/bin/curl", ["-k", "-s", "-D", "-", "-o", "/dev/null", "--max-time", "10",
                                                          "https://127.0.0.1:\(port)\(path)"])
            XCTAssertTrue(head.output.lowercased().contains("strict-transport-security: max-age=31536000"), "\(path): \(head.output)")
        }
    }

    func testHappyClientReadsThePastOverHTTPSWhenItTrustsTheCertificate() throws {
        let posted = try Self.runTool("/usr/bin/curl", ["-k", "-s", "--max-time", "10", "-X", "POST", "-H", "X-Happy-Name: actor",
                                                        "-d", #"{"action":"dragon.forward","id":"f"}"#,
                                                        "https://127.0.0.1:\(port)/api/intent?room=secure"])
        XCTAssertTrue(posted.output.contains("applied"), posted.output)
        let url = "wss://127.0.0.1:\(port)"
        let trusted = ["SSL_CERT_FILE": directory.appendingPathComponent("cert.pem").path]

        let history = try ClientProcess.run(["--url", url, "--room", "secure", "history"], environment: trusted)
        XCTAssertEqual(history.status, 0, history.stderr)
        XCTAssertEqual(history.lines.count, 1, history.stdout)
        XCTAssertTrue(history.lines.first?.contains(" #1 actor ") == true, history.stdout)
        let frame = directory.appendingPathComponent("scene.png")
        let wrote = try ClientProcess.run(["--url", url, "--room", "secure", "frame", "--out", frame.path], environment: trusted)
        XCTAssertEqual(wrote.status, 0, wrote.stderr)
        XCTAssertEqual(try Data(contentsOf: frame).prefix(8), Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))

        let untrusted = try ClientProcess.run(["--url", url, "--room", "secure", "history"])
        XCTAssertEqual(untrusted.status, 69, untrusted.stderr)
        XCTAssertEqual(untrusted.stderr, "happyclient: cannot connect to https://127.0.0.1:\(port)/api/history?room=secure&limit=100: "
                       + "TLS: the server's certificate is not trusted: self-signed certificate\n")
    }

    // MARK: helpers

    /// GET over https with curl (`-k`: the certificate is self-signed).
    private func curl(_ path: String) throws -> (status: Int, body: String) {
        let marker = "\n--status:"
        let result = try Self.runTool("/usr/bin/curl", ["-k", "-s", "--max-time", "10", "-w", "\(marker)%{http_code}",
                                                        "https://127.0.0.1:\(port)\(path)"])
        XCTAssertEqual(result.status, 0, "curl failed: \(result.output)")
        guard let range = result.output.range(of: marker, options: .backwards) else { return (0, result.output) }
        return (Int(result.output[range.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0,
                String(result.output[..<range.lowerBound]))
    }

    /// Runs a tool to its end; stdout and stderr together.
    static func runTool(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
