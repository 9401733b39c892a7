import XCTest
import HappyCore

final class ConfigTests: XCTestCase {
    private func message(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let config = try HappyConfig.parse(text)
            XCTFail("accepted \(text) as \(config)", file: file, line: line)
            return ""
        } catch {
            return error.message
        }
    }

    // MARK: defaults

    func testDefaultsMatchTheProtocol() {
        let c = HappyConfig()
        XCTAssertEqual(c.host, "127.0.0.1")
        XCTAssertEqual(c.port, 8080)
        XCTAssertEqual(c.webRoot, "web")
        XCTAssertEqual(c.dataDir, "data")
        XCTAssertEqual(c.defaultRoom, "lobby")
        XCTAssertEqual(c.trustedProxies, [])
        XCTAssertTrue(c.proxies.isEmpty)
        XCTAssertEqual(c.scene.happiness, 50)
        XCTAssertEqual(c.scene.scale, 0.9)
        XCTAssertEqual(c.scene.scaleMin, 0.1)
        XCTAssertEqual(c.scene.scaleMax, 2.0)
        XCTAssertEqual(c.scene.rate, 0.5)
        XCTAssertEqual(c.scene.fillColor, "#ff0000")
        XCTAssertEqual(c.scene.strokeColor, "#000000")
        XCTAssertEqual(c.scene.lineWidth, 1)
        XCTAssertEqual(c.scene.dragonX, 10)
        XCTAssertEqual(c.scene.dragonY, 10)
        XCTAssertEqual(c.scene.width, 375)
        XCTAssertEqual(c.scene.height, 180)
        XCTAssertEqual(c.scene.dragonSize, 100)
        XCTAssertEqual(c.scene.step, 10)
        XCTAssertEqual(c.limits.maxClients, 10000)
        XCTAssertEqual(c.limits.descriptorsNeeded, 31024, "three per client and 1024 more (LimitNOFILE 32768 fits)")
        XCTAssertEqual(c.limits.maxRooms, 1000)
        XCTAssertEqual(c.limits.maxMessageBytes, 4096)
        XCTAssertEqual(c.limits.intentsPerSecond, 60)
        XCTAssertEqual(c.limits.intentBurst, 120)
        XCTAssertEqual(c.limits.floodLimit, 100)
        XCTAssertEqual(c.limits.maxQueuedBytes, 1_048_576)
        XCTAssertEqual(c.limits.writeTimeoutSeconds, 30)
        XCTAssertEqual(c.limits.pingIntervalSeconds, 20)
        XCTAssertEqual(c.limits.pingTimeoutSeconds, 10)
        XCTAssertEqual(c.limits.historySize, 1000)
        XCTAssertEqual(c.limits.presenceBroadcastMax, 1000)
        XCTAssertTrue(c.persistence.enabled)
        XCTAssertTrue(c.persistence.fsync)
        XCTAssertEqual(c.auth.secret, "")
        XCTAssertEqual(c.auth.allowedOrigins, [])
        XCTAssertEqual(c.tls.cert, "")
        XCTAssertEqual(c.tls.key, "")
        XCTAssertFalse(c.tls.isEnabled)
        XCTAssertFalse(c.compression)
        XCTAssertFalse(c.conformance.echo)
        XCTAssertEqual(c.cluster.redis, "")
        XCTAssertEqual(c.log.level, "info")
        XCTAssertEqual(c.log.format, "text")
    }

    func testEmptyObjectGivesTheDefaultsAndTheyValidate() throws {
        XCTAssertEqual(try HappyConfig.parse("{}"), HappyConfig())
        XCTAssertEqual(try HappyConfig.parse(" { \"scene\": {}, \"limits\": {} } "), HappyConfig())
        XCTAssertNoThrow(try HappyConfig().validate())
    }

    func testDefaultRulesAreTheProtocolScene() {
        let rules = HappyConfig().sceneRules
        XCTAssertEqual(rules, SceneRules())
        XCTAssertEqual(HappyConfig().welcomeLimits, WelcomeLimits(intentsPerSecond: 60, intentBurst: 120, maxMessageBytes: 4096))
    }

    // MARK: every key

    func testEveryKeyIsRead() throws {
        let text = ##"""
        {
          "host": "0.0.0.0", "port": 9090, "webRoot": "/srv/web", "dataDir": "/var/happy", "defaultRoom": "main-1",
          "trustedProxies": ["10.0.0.5", "::1"],
          "scene": { "happiness": 70, "scale": 1.2, "scaleMin": 0.5, "scaleMax": 3, "rate": 0.25,
                     "fillColor": "#00FF00", "strokeColor": "#abc", "lineWidth": 0,
                     "dragonX": 20, "dragonY": 30, "width": 500, "height": 200, "dragonSize": 80, "step": 5 },
          "limits": { "maxClients": 50, "maxRooms": 7, "maxMessageBytes": 8192, "intentsPerSecond": 12.5,
                      "intentBurst": 30, "floodLimit": 9, "maxQueuedBytes": 65536, "writeTimeoutSeconds": 5.5,
                      "pingIntervalSeconds": 3, "pingTimeoutSeconds": 2, "historySize": 0, "presenceBroadcastMax": 25 },
          "persistence": { "enabled": false, "fsync": false },
          "auth": { "secret": "s3cret", "allowedOrigins": ["https://a.example", "http://b.example:8080"] },
          "tls": { "cert": "cert.pem", "key": "key.pem" },
          "compression": true,
          "conformance": { "echo": true },
          "cluster": { "redis": "redis://:pw@cache:6380/3", "minReplicaAcks": 2 },
          "log": { "level": "debug", "format": "json" }
        }
        """##
        let c = try HappyConfig.parse(text)
        XCTAssertEqual([c.host, c.webRoot, c.dataDir, c.defaultRoom], ["0.0.0.0", "/srv/web", "/var/happy", "main-1"])
        XCTAssertEqual(c.port, 9090)
        XCTAssertEqual(c.trustedProxies, ["10.0.0.5", "::1"])
        XCTAssertTrue(c.proxies.trusts("10.0.0.5") && c.proxies.trusts("0:0:0:0:0:0:0:1"))
        XCTAssertEqual(c.scene.happiness, 70)
        XCTAssertEqual([c.scene.scale, c.scene.scaleMin, c.scene.scaleMax, c.scene.rate], [1.2, 0.5, 3, 0.25])
        XCTAssertEqual([c.scene.fillColor, c.scene.strokeColor], ["#00FF00", "#abc"])
        XCTAssertEqual(c.scene.lineWidth, 0)
        XCTAssertEqual([c.scene.dragonX, c.scene.dragonY, c.scene.width, c.scene.height, c.scene.dragonSize, c.scene.step],
                       [20, 30, 500, 200, 80, 5])
        XCTAssertEqual([c.limits.maxClients, c.limits.maxRooms, c.limits.maxMessageBytes, c.limits.intentBurst,
                        c.limits.floodLimit, c.limits.maxQueuedBytes, c.limits.historySize, c.limits.presenceBroadcastMax],
                       [50, 7, 8192, 30, 9, 65536, 0, 25])
        XCTAssertEqual([c.limits.intentsPerSecond, c.limits.writeTimeoutSeconds, c.limits.pingIntervalSeconds,
                        c.limits.pingTimeoutSeconds], [12.5, 5.5, 3, 2])
        XCTAssertFalse(c.persistence.enabled)
        XCTAssertFalse(c.persistence.fsync)
        XCTAssertEqual(c.auth.secret, "s3cret")
        XCTAssertEqual(c.auth.allowedOrigins, ["https://a.example", "http://b.example:8080"])
        XCTAssertEqual(c.tls.cert, "cert.pem")
        XCTAssertEqual(c.tls.key, "key.pem")
        XCTAssertTrue(c.tls.isEnabled)
        XCTAssertTrue(c.compression)
        XCTAssertTrue(c.conformance.echo)
        XCTAssertEqual(c.cluster.redis, "redis://:pw@cache:6380/3")
        XCTAssertEqual(c.cluster.minReplicaAcks, 2)
        XCTAssertEqual(c.log.level, "debug")
        XCTAssertEqual(c.log.format, "json")
    }

    func testSceneRulesFollowTheSceneSection() throws {
        let c = try HappyConfig.parse(##"""
        { "scene": { "happiness": 70, "scale": 1.2, "scaleMin": 0.5, "scaleMax": 3, "rate": 0.25,
                     "fillColor": "#00FF00", "strokeColor": "#abc", "lineWidth": 0, "dragonX": 20, "dragonY": 30,
                     "width": 500, "height": 200, "dragonSize": 80, "step": 5 },
          "limits": { "intentsPerSecond": 12.5, "intentBurst": 30, "maxMessageBytes": 8192 } }
        """##)
        let rules = c.sceneRules
        XCTAssertEqual(rules.defaults, Scene(
            face: Scene.Face(happiness: 70, scale: 1.2),
            heart: Scene.Heart(rate: 0.25, fillColor: RGBColor(red: 0, green: 255, blue: 0),
                               strokeColor: RGBColor(red: 0xAA, green: 0xBB, blue: 0xCC), lineWidth: 1),
            dragon: Scene.Dragon(x: 20, y: 30, hidden: false)))
        XCTAssertEqual(rules.geometry, SceneGeometry(width: 500, height: 200, dragonSize: 80, step: 5))
        XCTAssertEqual(rules.scaleMin, 0.5)
        XCTAssertEqual(rules.scaleMax, 3)
        XCTAssertEqual(c.welcomeLimits, WelcomeLimits(intentsPerSecond: 12.5, intentBurst: 30, maxMessageBytes: 8192))
    }

    // MARK: trusted proxies

    func testTrustedProxiesMustBeAListOfIPAddresses() throws {
        XCTAssertEqual(try HappyConfig.parse(#"{"trustedProxies": []}"#), HappyConfig())
        XCTAssertEqual(try HappyConfig.parse(#"{"trustedProxies": ["192.0.2.1", "2001:db8::1"]}"#).trustedProxies,
                       ["192.0.2.1", "2001:db8::1"])
        XCTAssertEqual(message(#"{"trustedProxies": "127.0.0.1"}"#),
                       "config.json: trustedProxies must be a list of strings, got a string")
        XCTAssertEqual(message(#"{"trustedProxies": [1]}"#),
                       "config.json: trustedProxies must be a list of strings, got a number")
        for bad in ["proxy.internal", "10.0.0.0/8", "10.0.0.1:8080", "[::1]", "10.0.0.256", ""] {
            let text = message(#"{"trustedProxies": ["127.0.0.1", "\#(bad)"]}"#)
            XCTAssertTrue(text.hasPrefix("config.json: trustedProxies entry \"\(bad)\" is not an IP address"), text)
            XCTAssertTrue(text.contains("such as \"127.0.0.1\""), "says how to write one: \(text)")
        }
    }

    // MARK: unknown keys

    func testUnknownTopLevelKeyIsNamed() {
        let text = message(#"{"port": 1234, "prot": 1}"#)
        XCTAssertTrue(text.contains(#""prot""#), text)
        XCTAssertTrue(text.hasPrefix("config.json:"), text)
    }

    func testUnknownNestedKeysAreNamedWithTheirSection() {
        let cases = [
            "scene": "scene.colour", "limits": "limits.maxclients", "persistence": "persistence.sync",
            "auth": "auth.origins", "tls": "tls.ca", "conformance": "conformance.echoes",
            "cluster": "cluster.nodes", "log": "log.file",
        ]
        for (section, path) in cases {
            let key = String(path.dropFirst(section.count + 1))
            let text = message(#"{"\#(section)": {"\#(key)": 1}}"#)
            XCTAssertTrue(text.contains("unknown key \"\(path)\""), text)
        }
    }

    func testSectionsMustBeObjects() {
        XCTAssertTrue(message(#"{"scene": 5}"#).contains("scene must be an object, got a number"))
        XCTAssertTrue(message(#"{"log": ["debug"]}"#).contains("log must be an object, got an array"))
        XCTAssertTrue(message("[]").contains("the top level must be a JSON object"))
    }

    func testDuplicateKeysAreRejected() {
        XCTAssertTrue(message(#"{"port": 1, "port": 2}"#).contains(#"key "port" appears twice"#))
        XCTAssertTrue(message(#"{"scene": {"step": 1, "step": 2}}"#).contains(#"key "scene.step" appears twice"#))
        XCTAssertTrue(message(#"{"log": {}, "log": {}}"#).contains(#""log""#))
    }

    func testTextThatIsNotJSONIsReported() {
        XCTAssertTrue(message("{port: 1}").hasPrefix("config.json: not valid JSON"))
        XCTAssertTrue(message(#"{"port": 1,}"#).contains("not valid JSON"))
        XCTAssertTrue(message("").contains("not valid JSON"))
    }

    func testTheSourceNameAppearsInMessages() {
        do {
            _ = try HappyConfig.parse(#"{"bogus": true}"#, source: "/etc/happy.json")
            XCTFail("accepted an unknown key")
        } catch {
            XCTAssertTrue(error.message.hasPrefix("/etc/happy.json: unknown key \"bogus\""), error.message)
        }
    }
}
