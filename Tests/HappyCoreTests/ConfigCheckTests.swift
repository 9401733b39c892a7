import XCTest
@testable import HappyCore

/// `ConfigCheck`: every problem of a file, and the settings as `check-config` prints them.
final class ConfigCheckTests: XCTestCase {
    private func keys(_ problems: [ConfigError]) -> [String?] { problems.map(\.key) }

    /// The printed lines read back as a configuration file: `key = value` nested by its path.
    private func configText(from lines: [String]) -> String {
        var root: [(String, Any)] = []
        func insert(_ path: ArraySlice<String>, _ value: String, into members: inout [(String, Any)]) {
            let name = path.first!
            if path.count == 1 { members.append((name, value)); return }
            var section = (members.first { $0.0 == name }?.1 as? [(String, Any)]) ?? []
            insert(path.dropFirst(), value, into: &section)
            members.removeAll { $0.0 == name }
            members.append((name, section))
        }
        for line in lines {
            guard let equals = line.range(of: " = ") else { continue }
            var value = String(line[equals.upperBound...])
            if let note = value.range(of: "   # default: ") { value = String(value[..<note.lowerBound]) }
            let key = line[..<equals.lowerBound].trimmingCharacters(in: .whitespaces)
            insert(key.split(separator: ".").map(String.init)[...], value, into: &root)
        }
        func render(_ members: [(String, Any)]) -> String {
            "{" + members.map { name, value in
                "\"\(name)\": " + ((value as? [(String, Any)]).map(render) ?? (value as! String))
            }.joined(separator: ", ") + "}"
        }
        return render(root)
    }

    // MARK: problems

    func testAValidFileHasNone() {
        XCTAssertEqual(ConfigCheck.problems(in: "{}"), [])
        XCTAssertEqual(ConfigCheck.problems(in: #"{"port": 9000, "limits": {"maxClients": 5}}"#), [])
    }

    func testEveryBadKeyIsNamedOnceInReadingOrder() {
        let problems = ConfigCheck.problems(in: """
            {"prot": 1, "limits": {"maxClients": "x", "maxRoms": 2}, "port": -1, "tls": {"cert": "c.pem"},
             "crowd": {"mode": "never", "tickMs": 5}, "log": {"format": "xml"}}
            """)
        XCTAssertEqual(keys(problems), ["prot", "limits.maxClients", "limits.maxRoms", "crowd.mode",
                                        "port", "tls", "crowd.tickMs", "log.format"])
        XCTAssertTrue(problems.allSatisfy { $0.message.hasPrefix("config.json: ") })
    }

    func testAProblemThatFollowsFromAnotherIsNotNamedTwice() {
        // scaleMax at its default is still below this scaleMin: named once, then the rest is read.
        let scale = ConfigCheck.problems(in: #"{"scene": {"scaleMin": 5}, "port": 70000}"#)
        XCTAssertEqual(keys(scale), ["port", "scene.scaleMax"])
        // A webhook without its bad events has none: one problem, not two.
        let hooks = ConfigCheck.problems(in: #"{"webhooks": [{"url": "http://x/y", "events": ["nope"], "secret": "s"}]}"#)
        XCTAssertEqual(keys(hooks), ["webhooks[0].events"])
        let twice = ConfigCheck.problems(in: #"{"port": 1, "port": 2, "host": ""}"#)
        XCTAssertEqual(keys(twice), ["port", "host"])
    }

    func testTextThatIsNotJSONIsOneProblemWithoutAKey() {
        let problems = ConfigCheck.problems(in: "{port: 1}", source: "/etc/happy/config.json")
        XCTAssertEqual(problems.count, 1)
        XCTAssertNil(problems[0].key)
        XCTAssertTrue(problems[0].message.hasPrefix("/etc/happy/config.json: not valid JSON"), problems[0].message)
    }

    func testAnUnknownKeyNamesTheNearestAndWhatItsSectionTakes() {
        let message = ConfigCheck.problems(in: #"{"limits": {"maxclient": 1}}"#).first?.message ?? ""
        XCTAssertTrue(message.contains(#"unknown key "limits.maxclient" (did you mean "maxClients"?)"#), message)
        XCTAssertTrue(message.contains("limits takes maxClients, maxRooms, maxMessageBytes"), message)
        let top = ConfigCheck.problems(in: #"{"weebRoot": "x"}"#).first?.message ?? ""
        XCTAssertTrue(top.contains(#"(did you mean "webRoot"?); the top level takes host, port, webRoot"#), top)
        let far = ConfigCheck.problems(in: #"{"colour": "red"}"#).first?.message ?? ""
        XCTAssertFalse(far.contains("did you mean"), "nothing near: \(far)")
    }

    // MARK: the keys, from the structure

    func testTheKeysOfEachSectionComeFromTheConfigurationsStructure() {
        XCTAssertEqual(HappyConfig.keys(under: "webhooks[0]"), ["url", "events", "secret"])
        XCTAssertEqual(HappyConfig.keys(under: "tls"), ["cert", "key"])
        XCTAssertTrue(HappyConfig.keys(under: "").starts(with: ["host", "port", "webRoot", "dataDir"]))
        XCTAssertEqual(HappyConfig.keys(under: "port"), [], "a setting is no section")
        XCTAssertEqual(HappyConfig.keys(under: "nonsense"), [])
    }

    /// What the printer walks and what the reader reads must be the same keys: each printed line,
    /// written back into a file, reads as the same configuration.
    func testThePrintedSettingsReadBackAsTheSameConfiguration() throws {
        var config = HappyConfig()
        config.port = 9000
        config.trustedProxies = ["127.0.0.1", "::1"]
        config.limits.intentsPerSecond = 2.5
        config.crowd.mode = .tick
        config.cluster.minReplicaAcks = 0
        config.webhooks = [HappyConfig.Webhook(url: "http://hooks.example/in", events: [.event, .roomCreated], secret: "")]
        let lines = config.settingLines()
        var readBack = try HappyConfig.parse(configText(from: lines.filter { !$0.hasPrefix("webhooks[") }))
        XCTAssertEqual(readBack.webhooks, [], "lists of objects are printed one key per line")
        readBack.webhooks = config.webhooks
        XCTAssertEqual(readBack, config, lines.joined(separator: "\n"))
        var defaults = HappyConfig()
        defaults.cluster.minReplicaAcks = defaults.cluster.replicaAcks
        XCTAssertEqual(try HappyConfig.parse(configText(from: HappyConfig().settingLines())), defaults,
                       "an unset key is printed with the value that applies")
        XCTAssertTrue(lines.contains("webhooks[0].events              = [\"event\", \"room.created\"]"), lines.joined(separator: "\n"))
    }

    func testEachValueThatIsNotItsDefaultSaysTheDefault() {
        var config = HappyConfig()
        config.port = 9000
        config.log.level = "warn"
        let lines = config.settingLines()
        XCTAssertEqual(lines.filter { $0.contains("# default:") }.count, 2, lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("port ") && $0.hasSuffix("= 9000   # default: 8080") })
        XCTAssertTrue(lines.contains { $0.hasPrefix("log.level ") && $0.hasSuffix(#"= "warn"   # default: "info""#) })
    }

    func testAnUnsetReplicaAckCountShowsTheValueRedisDecides() {
        var config = HappyConfig()
        config.cluster.redis = "redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/main"
        XCTAssertTrue(config.settingLines().contains { $0.hasPrefix("cluster.minReplicaAcks ") && $0.contains("= 1") })
        XCTAssertTrue(HappyConfig().settingLines().contains { $0.hasPrefix("cluster.minReplicaAcks ") && $0.hasSuffix("= 0") })
    }

    // MARK: redaction

    func testSecretsAndURLCredentialsAreRedacted() {
        var config = HappyConfig()
        config.auth.secret = "jwt-secret"
        config.cluster.redis = "redis://:redis-password@10.0.0.1:6379/2"
        config.webhooks = [HappyConfig.Webhook(url: "https://user:pass@hooks.example/in?token=t0k#frag", events: [.event],
                                               secret: "hook-secret")]
        config.auth.allowedOrigins = ["https://happy.example"]
        let text = config.settingLines().joined(separator: "\n")
        for secret in ["jwt-secret", "redis-password", "user:pass", "t0k", "frag", "hook-secret"] {
            XCTAssertFalse(text.contains(secret), "\(secret) leaked:\n\(text)")
        }
        XCTAssertTrue(text.contains(#""redis://(redacted)@10.0.0.1:6379/2""#), text)
        XCTAssertTrue(text.contains(#""https://(redacted)@hooks.example/in?(redacted)""#), text)
        XCTAssertTrue(text.contains(#"["https://happy.example"]"#), "a URL without credentials stays: \(text)")
        XCTAssertTrue(HappyConfig().settingLines().contains { $0.hasPrefix("auth.secret ") && $0.hasSuffix(#"= """#) },
                      "an unset secret shows as empty")
    }

    func testRedactionRules() {
        XCTAssertEqual(ConfigRedaction.redact("abc", key: "auth.secret"), "(redacted)")
        XCTAssertEqual(ConfigRedaction.redact("abc", key: "backup.password"), "(redacted)", "any secret word")
        XCTAssertEqual(ConfigRedaction.redact("key.pem", key: "tls.key"), "key.pem", "a file name is no secret")
        XCTAssertEqual(ConfigRedaction.redactURL("redis+sentinel://:pw@a:26379,b:26379/main/0"),
                       "redis+sentinel://(redacted)@a:26379,b:26379/main/0")
        XCTAssertEqual(ConfigRedaction.redactURL("http://hooks.example/x"), "http://hooks.example/x")
        XCTAssertEqual(ConfigRedaction.redactURL("http://h/x?a=1"), "http://h/x?(redacted)")
        XCTAssertEqual(ConfigRedaction.redactURL("no url: here"), "no url: here")
        XCTAssertEqual(ConfigRedaction.redactURL("#ff0000"), "#ff0000")
    }

    func testKeyDistanceCountsASwapAsOneEdit() {
        XCTAssertEqual(ConfigKeys.distance(Array("prot"), Array("port")), 1)
        XCTAssertEqual(ConfigKeys.distance(Array("maxclent"), Array("maxclients")), 2)
        XCTAssertEqual(ConfigKeys.nearest(to: "fsnyc", in: ["enabled", "fsync", "historyLimit"]), "fsync")
    }
}
