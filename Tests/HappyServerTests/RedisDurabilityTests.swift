import Foundation
import XCTest

/// A node acks an intent once Redis has it, so it refuses a Redis that
/// could lose acknowledged writes (no append-only file synced on every
/// write), unless the config accepts that risk.
final class RedisDurabilityTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("happy-durability-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func config(redis: RedisProcess, allow: Bool? = nil) throws -> URL {
        var cluster = #""redis": "\#(redis.url)""#
        if let allow { cluster += #", "allowNonDurableRedis": \#(allow)"# }
        let text = #"{ "port": 0, "webRoot": "\#(ServerProcess.repositoryRoot.appendingPathComponent("web").path)", "cluster": { \#(cluster) } }"#
        let url = directory.appendingPathComponent("config.json")
        try Data(text.utf8).write(to: url)
        return url
    }

    func testANodeRefusesARedisThatSyncsOnlyEverySecond() throws {
        let redis = try RedisProcess(appendFsync: "everysec")
        let outcome = try ServerProcess.run(["--config", try config(redis: redis).path], in: directory)
        XCTAssertNotEqual(outcome.status, 0)
        XCTAssertTrue(outcome.stderr.contains("could lose acknowledged writes (appendonly yes, appendfsync everysec)"),
                      outcome.stderr)
        XCTAssertTrue(outcome.stderr.contains("cluster.allowNonDurableRedis"), "the error says how to proceed")
    }

    func testTheConfigMayAcceptTheRisk() throws {
        let redis = try RedisProcess(appendFsync: "everysec")
        let server = try ServerProcess(["cluster": ["redis": redis.url, "allowNonDurableRedis": true]])
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").status, 200)
    }

    func testADurableRedisIsAccepted() throws {
        let redis = try RedisProcess()
        let server = try ServerProcess(["cluster": ["redis": redis.url]])
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").status, 200)
    }
}
