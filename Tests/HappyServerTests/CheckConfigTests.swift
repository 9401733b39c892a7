import Foundation
import XCTest

/// `happyserver check-config FILE`, and the version both programs print.
final class CheckConfigTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("happy-check-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func check(_ text: String) throws -> ServerProcess.Outcome {
        let file = directory.appendingPathComponent("config.json")
        try Data(text.utf8).write(to: file)
        return try ServerProcess.run(["check-config", file.path], in: directory)
    }

    /// `key = value` of each printed line, without the `# default:` note.
    private func settings(_ stdout: String) -> [String: String] {
        var out: [String: String] = [:]
        for line in stdout.split(separator: "\n") where !line.hasPrefix("#") {
            guard let equals = line.range(of: " = ") else { continue }
            var value = String(line[equals.upperBound...])
            if let note = value.range(of: "   # default: ") { value = String(value[..<note.lowerBound]) }
            out[line[..<equals.lowerBound].trimmingCharacters(in: .whitespaces)] = value
        }
        return out
    }

    func testAValidFilePrintsItsEffectiveSettingsWithSecretsRedacted() throws {
        let outcome = try check("""
            { "port": 9000, "webRoot": "site", "auth": { "secret": "hunter2-secret" },
              "cluster": { "redis": "redis://:redis-pass@10.1.2.3:6379/0" },
              "webhooks": [ { "url": "https://bot:hook-pass@hooks.example/in?key=hook-query", "events": ["event"],
                              "secret": "hook-secret" } ] }
            """)
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        XCTAssertEqual(outcome.stderr, "")
        for secret in ["hunter2-secret", "redis-pass", "hook-pass", "hook-query", "hook-secret"] {
            XCTAssertFalse(outcome.stdout.contains(secret), "\(secret) leaked: \(outcome.stdout)")
        }
        let values = settings(outcome.stdout)
        XCTAssertEqual(values["port"], "9000")
        XCTAssertEqual(values["webRoot"], "\"\(directory.appendingPathComponent("site").path)\"",
                       "a relative path is resolved against the file's folder")
        XCTAssertEqual(values["auth.secret"], #""(redacted)""#)
        XCTAssertEqual(values["cluster.redis"], #""redis://(redacted)@10.1.2.3:6379/0""#)
        XCTAssertEqual(values["webhooks[0].url"], #""https://(redacted)@hooks.example/in?(redacted)""#)
        XCTAssertEqual(values["webhooks[0].secret"], #""(redacted)""#)
        XCTAssertEqual(values["limits.maxClients"], "10000", "defaults are printed too")
        XCTAssertTrue(outcome.stdout.contains("port") && outcome.stdout.contains("# default: 8080"), outcome.stdout)
    }

    func testEachBadKeyIsNamedWithWhatItAcceptsAndTheStatusIs78() throws {
        let outcome = try check("""
            { "prot": 8080, "limits": { "maxClients": "many", "maxClent": 3 }, "crowd": { "mode": "sometimes" },
              "port": 70000, "log": { "level": "loud" } }
            """)
        XCTAssertEqual(outcome.status, 78)
        XCTAssertEqual(outcome.stdout, "", "no settings for a bad file")
        let lines = outcome.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 7, outcome.stderr)
        let expected = [
            #"unknown key "prot" (did you mean "port"?)"#,
            "limits.maxClients must be an integer, got a string",
            #"unknown key "limits.maxClent" (did you mean "maxClients"?); limits takes maxClients, maxRooms"#,
            #"crowd.mode must be one of "auto", "tick", "each", got "sometimes""#,
            "port must be between 0 and 65535",
            "log.level must be one of debug, info, warn, error",
            "6 problems",
        ]
        for (line, text) in zip(lines, expected) {
            XCTAssertTrue(line.hasPrefix("happyserver: ") && line.contains(text), "\(line) should say \(text)")
        }
    }

    func testAWebhookURLListedTwiceIs78NamingBothEntries() throws {
        let outcome = try check("""
            { "webhooks": [ { "url": "https://hooks.example/in", "events": ["event"], "secret": "one" },
                            { "url": "https://hooks.example/in", "events": ["room.created"], "secret": "two" } ] }
            """)
        XCTAssertEqual(outcome.status, 78)
        XCTAssertTrue(outcome.stderr.contains("webhooks[1].url repeats webhooks[0].url: list both entries' events in one"),
                      outcome.stderr)
    }

    func testAFileThatIsMissingOrNotJSONIs78() throws {
        let missing = try ServerProcess.run(["check-config", directory.appendingPathComponent("none.json").path])
        XCTAssertEqual(missing.status, 78)
        XCTAssertTrue(missing.stderr.contains("cannot read the configuration file"), missing.stderr)
        let garbage = try check("{ port: 1 }")
        XCTAssertEqual(garbage.status, 78)
        XCTAssertTrue(garbage.stderr.contains("not valid JSON"), garbage.stderr)
    }

    func testHelpAndUsage() throws {
        let help = try ServerProcess.run(["check-config", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("usage: happyserver check-config [FILE]"), help.stdout)
        let two = try ServerProcess.run(["check-config", "a.json", "b.json"])
        XCTAssertEqual(two.status, 2)
        XCTAssertTrue(try ServerProcess.run(["--help"]).stdout.contains("check-config"))
    }

    /// The configuration the package installs as /etc/happy/config.json.
    func testThePackagedConfigurationIsValid() throws {
        let packaged = ServerProcess.repositoryRoot.appendingPathComponent("packaging/config.json")
        let outcome = try ServerProcess.run(["check-config", packaged.path])
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        let values = settings(outcome.stdout)
        XCTAssertEqual(values["webRoot"], #""/usr/share/happy/web""#)
        XCTAssertEqual(values["dataDir"], #""/var/lib/happy""#)
        XCTAssertEqual(values["host"], #""127.0.0.1""#, "listens on loopback until told otherwise")
    }

    func testBothProgramsPrintTheSameVersion() throws {
        let server = try ServerProcess.run(["--version"])
        let client = try ClientProcess.run(["--version"])
        XCTAssertEqual(server.status, 0)
        XCTAssertEqual(client.status, 0, client.stderr)
        let serverVersion = server.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        let clientVersion = client.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        XCTAssertEqual(serverVersion.first, "happyserver")
        XCTAssertEqual(clientVersion.first, "happyclient")
        XCTAssertEqual(serverVersion.last, clientVersion.last, "\(server.stdout) \(client.stdout)")
    }
}
