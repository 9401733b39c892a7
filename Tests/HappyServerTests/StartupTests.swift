import Foundation
import XCTest

/// The `happyserver` command line and configuration checks.
final class StartupTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("happy-startup-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes `text` as a config file and runs the server on it to its end.
    private func runWithConfig(_ text: String) throws -> ServerProcess.Outcome {
        let config = directory.appendingPathComponent("config.json")
        try Data(text.utf8).write(to: config)
        return try ServerProcess.run(["--config", config.path], in: directory)
    }

    private var validBase: String {
        #""port": 0, "webRoot": "\#(ServerProcess.repositoryRoot.appendingPathComponent("web").path)", "dataDir": "\#(directory.appendingPathComponent("data").path)""#
    }

    func testHelpAndVersionExitZero() throws {
        let help = try ServerProcess.run(["--help"], in: directory)
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("usage: happyserver"), help.stdout)
        XCTAssertTrue(help.stdout.contains("--port"), help.stdout)
        XCTAssertEqual(help.stderr, "")

        let version = try ServerProcess.run(["--version"], in: directory)
        XCTAssertEqual(version.status, 0)
        let line = version.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(line.hasPrefix("happyserver "), line)
        XCTAssertEqual(line.split(separator: " ").count, 2, line)
        let number = String(line.split(separator: " ").last ?? "")
        XCTAssertNotNil(number.range(of: #"^[0-9][A-Za-z0-9.+~]*$"#, options: .regularExpression),
                        "a Debian version, such as 1.2.3 or 0.0~git20250106.412.abc1234: \(line)")
    }

    func testUnknownArgumentIsAUsageError() throws {
        let outcome = try ServerProcess.run(["--prot", "80"], in: directory)
        XCTAssertNotEqual(outcome.status, 0)
        XCTAssertTrue(outcome.stderr.contains("--prot"), outcome.stderr)
        let badPort = try ServerProcess.run(["--port", "http"], in: directory)
        XCTAssertNotEqual(badPort.status, 0)
        XCTAssertTrue(badPort.stderr.contains("--port"), badPort.stderr)
    }

    func testUnknownKeysAreNamed() throws {
        let topLevel = try runWithConfig("{ \(validBase), \"prot\": 8080 }")
        XCTAssertNotEqual(topLevel.status, 0)
        XCTAssertTrue(topLevel.stderr.contains("\"prot\""), topLevel.stderr)

        let nested = try runWithConfig("{ \(validBase), \"limits\": { \"maxClients\": 5, \"maxClent\": 10 } }")
        XCTAssertNotEqual(nested.status, 0)
        XCTAssertTrue(nested.stderr.contains("limits.maxClent"), nested.stderr)
        XCTAssertFalse(nested.stderr.contains("limits.maxClients"), "only the unknown key is named: \(nested.stderr)")

        let deeper = try runWithConfig("{ \(validBase), \"scene\": { \"colour\": \"#fff\" } }")
        XCTAssertNotEqual(deeper.status, 0)
        XCTAssertTrue(deeper.stderr.contains("scene.colour"), deeper.stderr)
    }

    func testWrongTypesAreNamed() throws {
        let cases: [(String, String)] = [
            (#""limits": { "maxClients": "ten" }"#, "limits.maxClients"),
            (#""limits": { "maxRooms": 2.5 }"#, "limits.maxRooms"),
            (#""compression": "yes""#, "compression"),
            (#""scene": { "fillColor": 255 }"#, "scene.fillColor"),
            (#""auth": { "allowedOrigins": "http://x" }"#, "auth.allowedOrigins"),
            (#""limits": 7"#, "limits"),
        ]
        for (fragment, key) in cases {
            let outcome = try runWithConfig("{ \(validBase), \(fragment) }")
            XCTAssertNotEqual(outcome.status, 0, fragment)
            XCTAssertTrue(outcome.stderr.contains(key), "\(fragment): \(outcome.stderr)")
            XCTAssertFalse(outcome.stdout.contains("listening"), fragment)
        }
        let range = try runWithConfig("{ \(validBase), \"limits\": { \"maxMessageBytes\": 10 } }")
        XCTAssertNotEqual(range.status, 0)
        XCTAssertTrue(range.stderr.contains("limits.maxMessageBytes"), range.stderr)
        let notJSON = try runWithConfig("{ \"port\": ")
        XCTAssertNotEqual(notJSON.status, 0)
        XCTAssertTrue(notJSON.stderr.contains("JSON"), notJSON.stderr)
    }

    /// The descriptor limit follows `limits.maxClients` (three per client and a reserve), not
    /// the most the system allows: lws's tables, which it checks whole at every close, are sized by it.
    func testTheDescriptorLimitIsSizedForMaxClients() throws {
        var own = rlimit()
        XCTAssertEqual(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &own), 0)
        let expected = min(Int(own.rlim_max), 3 * 100 + 1024)
        let server = try ServerProcess(["limits": ["maxClients": 100]])
        let limits = try String(contentsOfFile: "/proc/\(server.pid)/limits", encoding: .utf8)
        let line = try XCTUnwrap(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let soft = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first.flatMap { Int($0) }
        XCTAssertEqual(soft, expected, String(line))
        XCTAssertTrue(server.logText.contains("fdLimit=\(expected)"), server.logText)
        let (alice, _) = try TestClient.join(server, name: "alice")
        withExtendedLifetime(alice) {}
        XCTAssertEqual(server.stop(), 0)
    }

    func testPortZeroOnTheCommandLineLogsTheRealPort() throws {
        // The config's port is taken; --port 0 overrides it with a free one.
        let blocker = try ServerProcess()
        let server = try ServerProcess(["port": blocker.port], arguments: ["--port", "0"])
        XCTAssertGreaterThan(server.port, 0)
        XCTAssertNotEqual(server.port, blocker.port)
        XCTAssertTrue(server.logText.contains("port=\(server.port)"), server.logText)
        let health = try HTTP.get("\(server.httpBase)/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.text, "ok")
        XCTAssertEqual(server.stop(), 0)
    }
}
