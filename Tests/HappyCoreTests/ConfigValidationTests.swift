import XCTest
import HappyCore

final class ConfigValidationTests: XCTestCase {
    private func message(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let config = try HappyConfig.parse(text)
            XCTFail("accepted \(text) as \(config)", file: file, line: line)
            return ""
        } catch {
            return error.message
        }
    }

    private func assertRejected(_ text: String, naming key: String, file: StaticString = #filePath, line: UInt = #line) {
        let error = message(text, file: file, line: line)
        XCTAssertTrue(error.hasPrefix("config.json: \(key) "), "\(text) → \(error)", file: file, line: line)
    }

    // MARK: wrong types

    func testWrongTypesNameTheKeyAndTheExpectedKind() {
        XCTAssertEqual(message(#"{"port": "8080"}"#), "config.json: port must be an integer, got a string")
        XCTAssertEqual(message(#"{"host": 1}"#), "config.json: host must be a string, got a number")
        XCTAssertEqual(message(#"{"compression": "yes"}"#), "config.json: compression must be true or false, got a string")
        XCTAssertEqual(message(#"{"scene": {"scale": "big"}}"#), "config.json: scene.scale must be a number, got a string")
        XCTAssertEqual(message(#"{"persistence": {"enabled": 1}}"#),
                       "config.json: persistence.enabled must be true or false, got a number")
        XCTAssertEqual(message(#"{"auth": {"allowedOrigins": "*"}}"#),
                       "config.json: auth.allowedOrigins must be a list of strings, got a string")
        XCTAssertEqual(message(#"{"log": {"level": null}}"#), "config.json: log.level must be a string, got null")
    }

    func testEveryTypedKeyChecksItsType() {
        let integers = ["port", "scene.happiness", "limits.maxClients", "limits.maxRooms", "limits.maxMessageBytes",
                        "limits.intentBurst", "limits.floodLimit", "limits.maxQueuedBytes", "limits.historySize",
                        "limits.presenceBroadcastMax"]
        let numbers = ["scene.scale", "scene.scaleMin", "scene.scaleMax", "scene.rate", "scene.lineWidth",
                       "scene.dragonX", "scene.dragonY", "scene.width", "scene.height", "scene.dragonSize", "scene.step",
                       "limits.intentsPerSecond", "limits.writeTimeoutSeconds", "limits.pingIntervalSeconds",
                       "limits.pingTimeoutSeconds"]
        let strings = ["host", "webRoot", "dataDir", "defaultRoom", "scene.fillColor", "scene.strokeColor",
                       "auth.secret", "tls.cert", "tls.key", "cluster.redis", "log.level", "log.format"]
        let bools = ["compression", "persistence.enabled", "persistence.fsync", "conformance.echo"]
        func document(_ path: String, _ value: String) -> String {
            let parts = path.split(separator: ".")
            return parts.count == 1 ? #"{"\#(path)": \#(value)}"# : #"{"\#(parts[0])": {"\#(parts[1])": \#(value)}}"#
        }
        for key in integers { assertRejected(document(key, "1.5"), naming: key) }
        for key in integers + numbers { assertRejected(document(key, #""1""#), naming: key) }
        for key in strings { assertRejected(document(key, "true"), naming: key) }
        for key in bools { assertRejected(document(key, "0"), naming: key) }
    }

    func testIntegersAcceptIntegralNumberForms() throws {
        XCTAssertEqual(try HappyConfig.parse(#"{"port": 8081.0}"#).port, 8081)
        XCTAssertEqual(try HappyConfig.parse(#"{"limits": {"maxClients": 1e3}}"#).limits.maxClients, 1000)
    }

    func testHugeNumbersAreRejected() {
        assertRejected(#"{"scene": {"width": 1e400}}"#, naming: "scene.width")
        assertRejected(#"{"limits": {"maxClients": 1e300}}"#, naming: "limits.maxClients")
    }

    func testAllowedOriginsMustAllBeStrings() {
        XCTAssertEqual(message(#"{"auth": {"allowedOrigins": ["https://a.example", 5]}}"#),
                       "config.json: auth.allowedOrigins must be a list of strings, got a number")
    }

    // MARK: validation

    func testScaleRangeRelations() {
        assertRejected(#"{"scene": {"scaleMin": 1.5, "scaleMax": 1.0, "scale": 1.2}}"#, naming: "scene.scaleMax")
        assertRejected(#"{"scene": {"scaleMin": 0}}"#, naming: "scene.scaleMin")
        assertRejected(#"{"scene": {"scale": 2.5}}"#, naming: "scene.scale")
        assertRejected(#"{"scene": {"scale": 0.05}}"#, naming: "scene.scale")
        XCTAssertNoThrow(try HappyConfig.parse(#"{"scene": {"scaleMin": 1, "scaleMax": 1, "scale": 1}}"#))
    }

    func testSceneRanges() {
        assertRejected(#"{"scene": {"happiness": 101}}"#, naming: "scene.happiness")
        assertRejected(#"{"scene": {"happiness": -1}}"#, naming: "scene.happiness")
        assertRejected(#"{"scene": {"rate": 1.01}}"#, naming: "scene.rate")
        assertRejected(#"{"scene": {"lineWidth": 21}}"#, naming: "scene.lineWidth")
        assertRejected(#"{"scene": {"fillColor": "red"}}"#, naming: "scene.fillColor")
        assertRejected(##"{"scene": {"strokeColor": "#12"}}"##, naming: "scene.strokeColor")
        assertRejected(#"{"scene": {"width": 0}}"#, naming: "scene.width")
        assertRejected(#"{"scene": {"height": -5}}"#, naming: "scene.height")
        assertRejected(#"{"scene": {"dragonSize": 400}}"#, naming: "scene.dragonSize")
        assertRejected(#"{"scene": {"step": 0}}"#, naming: "scene.step")
    }

    func testTopLevelValues() {
        assertRejected(#"{"defaultRoom": "bad room!"}"#, naming: "defaultRoom")
        assertRejected(#"{"defaultRoom": ""}"#, naming: "defaultRoom")
        assertRejected(#"{"defaultRoom": "\#(String(repeating: "r", count: 65))"}"#, naming: "defaultRoom")
        assertRejected(#"{"port": 70000}"#, naming: "port")
        assertRejected(#"{"port": -1}"#, naming: "port")
        assertRejected(#"{"host": ""}"#, naming: "host")
        assertRejected(#"{"webRoot": ""}"#, naming: "webRoot")
        assertRejected(#"{"dataDir": ""}"#, naming: "dataDir")
        XCTAssertEqual(try HappyConfig.parse(#"{"port": 0}"#).port, 0)
    }

    func testLimits() {
        assertRejected(#"{"limits": {"maxMessageBytes": 63}}"#, naming: "limits.maxMessageBytes")
        assertRejected(#"{"limits": {"maxClients": 0}}"#, naming: "limits.maxClients")
        assertRejected(#"{"limits": {"intentsPerSecond": 0}}"#, naming: "limits.intentsPerSecond")
        assertRejected(#"{"limits": {"intentBurst": 0}}"#, naming: "limits.intentBurst")
        assertRejected(#"{"limits": {"maxQueuedBytes": 1023}}"#, naming: "limits.maxQueuedBytes")
        assertRejected(#"{"limits": {"historySize": -1}}"#, naming: "limits.historySize")
        assertRejected(#"{"limits": {"pingTimeoutSeconds": 0}}"#, naming: "limits.pingTimeoutSeconds")
    }

    func testLogLevelAndFormat() throws {
        assertRejected(#"{"log": {"level": "verbose"}}"#, naming: "log.level")
        assertRejected(#"{"log": {"level": "INFO"}}"#, naming: "log.level")
        assertRejected(#"{"log": {"format": "xml"}}"#, naming: "log.format")
        for level in ["debug", "info", "warn", "error"] {
            XCTAssertEqual(try HappyConfig.parse(#"{"log": {"level": "\#(level)"}}"#).log.level, level)
        }
    }

    func testAWebhookURLListedTwiceIsRefusedNamingBothEntries() throws {
        func webhooks(third url: String) -> String {
            """
            {"webhooks": [{"url": "https://a.example/in", "events": ["event"], "secret": "s"},
                          {"url": "https://b.example/in", "events": ["event"], "secret": "s"},
                          {"url": "\(url)", "events": ["presence.joined"], "secret": "t"}]}
            """
        }
        XCTAssertEqual(message(webhooks(third: "https://a.example/in")),
                       "config.json: webhooks[2].url repeats webhooks[0].url: list both entries' events in one")
        XCTAssertEqual(ConfigCheck.problems(in: webhooks(third: "https://a.example/in")).map(\.key), ["webhooks[2].url"],
                       "one problem")
        XCTAssertEqual(try HappyConfig.parse(webhooks(third: "https://c.example/in")).webhooks.count, 3)
    }

    func testTLSNeedsBothCertAndKey() {
        assertRejected(#"{"tls": {"cert": "cert.pem"}}"#, naming: "tls")
        assertRejected(#"{"tls": {"key": "key.pem"}}"#, naming: "tls")
    }

    func testClusterRedisMustBeARedisURL() {
        assertRejected(#"{"cluster": {"redis": "http://cache:6379"}}"#, naming: "cluster.redis")
        assertRejected(#"{"cluster": {"redis": "redis://cache:notaport"}}"#, naming: "cluster.redis")
        XCTAssertNoThrow(try HappyConfig.parse(#"{"cluster": {"redis": "redis://cache"}}"#))
    }

    // MARK: RedisURL

    private func parts(_ text: String) -> [String]? {
        RedisURL(text).map { [$0.host, String($0.port), String($0.database), $0.password ?? "<none>"] }
    }

    func testRedisURLWithPasswordPortAndDatabase() {
        XCTAssertEqual(parts("redis://:s3cret@cache.example:6380/2"), ["cache.example", "6380", "2", "s3cret"])
        XCTAssertEqual(parts("redis://:p@ss@h:1/0"), ["h", "1", "0", "p@ss"])
    }

    func testRedisURLDefaults() {
        XCTAssertEqual(parts("redis://localhost"), ["localhost", "6379", "0", "<none>"])
        XCTAssertEqual(parts("redis://localhost/"), ["localhost", "6379", "0", "<none>"])
        XCTAssertEqual(parts("redis://10.0.0.5:7000/15"), ["10.0.0.5", "7000", "15", "<none>"])
    }

    func testClusterRedisTakesASentinelAddress() throws {
        let config = try HappyConfig.parse(#"{"cluster": {"redis": "redis+sentinel://h1:26379,h2:26380,h3/mymaster"}}"#)
        XCTAssertEqual(config.cluster.replicaAcks, 1, "Sentinel: one replica confirms each commit unless told otherwise")
        assertRejected(#"{"cluster": {"redis": "redis+sentinel://h1:26379"}}"#, naming: "cluster.redis")
        assertRejected(#"{"cluster": {"redis": "redis+sentinel://h1:x/mymaster"}}"#, naming: "cluster.redis")
    }

    func testMinReplicaAcks() throws {
        XCTAssertEqual(try HappyConfig.parse(#"{"cluster": {"redis": "redis://cache"}}"#).cluster.replicaAcks, 0)
        XCTAssertEqual(try HappyConfig.parse(#"{"cluster": {"redis": "redis://cache", "minReplicaAcks": 2}}"#)
            .cluster.replicaAcks, 2)
        XCTAssertEqual(try HappyConfig.parse(#"{"cluster": {"redis": "redis+sentinel://s/m", "minReplicaAcks": 0}}"#)
            .cluster.replicaAcks, 0)
        assertRejected(#"{"cluster": {"redis": "redis://cache", "minReplicaAcks": -1}}"#, naming: "cluster.minReplicaAcks")
        assertRejected(#"{"cluster": {"redis": "redis://cache", "minReplicaAcks": 17}}"#, naming: "cluster.minReplicaAcks")
        assertRejected(#"{"cluster": {"minReplicaAcks": 1}}"#, naming: "cluster.minReplicaAcks")
        assertRejected(#"{"cluster": {"redis": "redis://cache", "minReplicaAcks": 1.5}}"#, naming: "cluster.minReplicaAcks")
    }

    // MARK: RedisSentinelURL

    func testSentinelURLs() throws {
        let url = try XCTUnwrap(RedisSentinelURL("redis+sentinel://:pw@10.0.0.5:26379,10.0.0.6:26380,s3/my-master/2"))
        XCTAssertEqual(url.sentinels.map { "\($0.host):\($0.port)" }, ["10.0.0.5:26379", "10.0.0.6:26380", "s3:26379"])
        XCTAssertEqual(url.master, "my-master")
        XCTAssertEqual(url.database, 2)
        XCTAssertEqual(url.password, "pw")
        XCTAssertEqual(url.primary(host: "10.0.0.9", port: 6379), RedisURL(host: "10.0.0.9", port: 6379, database: 2, password: "pw"))
        XCTAssertEqual(RedisSentinelURL("redis+sentinel://s/m")?.database, 0)
        for text in ["redis+sentinel://", "redis+sentinel://s", "redis+sentinel://s/", "redis+sentinel:///m",
                     "redis+sentinel://s,/m", "redis+sentinel://s:0/m", "redis+sentinel://s/m/x", "redis+sentinel://s/m/1/2",
                     "redis+sentinel://s/m a", "redis://s/m"] {
            XCTAssertNil(RedisSentinelURL(text), text)
        }
        XCTAssertEqual(RedisTarget("redis+sentinel://s/m")?.usesSentinel, true)
        XCTAssertEqual(RedisTarget("redis://s")?.usesSentinel, false)
        XCTAssertNil(RedisTarget("http://s"))
    }

    func testMalformedRedisURLs() {
        for text in ["", "http://cache", "redis:/cache", "redis://", "redis://:pw@", "redis://cache:0", "redis://cache:65536",
                     "redis://cache:", "redis://cache:x", "redis://cache/db", "redis://cache/-1", "redis://:6379"] {
            XCTAssertNil(RedisURL(text), text)
        }
    }
}
