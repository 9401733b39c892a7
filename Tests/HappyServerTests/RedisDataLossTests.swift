import Foundation
import XCTest

/// A Redis that lost recorded events (it ran without an append-only file
/// synced on every write) is behind the node's own seq: the node follows
/// Redis, the record, instead of refusing every commit from then on.
final class RedisDataLossTests: XCTestCase {
    func testANodeAheadOfRedisFollowsItAndTakesIntentsAgain() throws {
        let redis = try RedisProcess()
        let server = try ServerProcess(["cluster": ["redis": redis.url]])
        let intent = "\(server.httpBase)/api/intent?room=lost"
        for _ in 1...3 {
            XCTAssertEqual(try HTTP.post(intent, body: #"{"action":"dragon.forward"}"#).status, 200)
        }
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=lost").json?["seq"]?.intValue, 3)

        // Redis forgets seq 2 and 3, as a restart from an older snapshot would.
        _ = try redis.cli(["HSET", "happy:room:lost", "seq", "1"])
        _ = try redis.cli(["XDEL", "happy:events:lost", "2-1", "3-1"])

        let started = Date()
        let answer = try HTTP.post(intent, body: #"{"action":"dragon.back"}"#)
        XCTAssertEqual(answer.status, 200, answer.text)
        XCTAssertEqual(answer.json?["seq"]?.intValue, 2, "the intent is recorded after what Redis holds: \(answer.text)")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the node did not settle the conflict")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/api/state?room=lost").json?["seq"]?.intValue, 2)
        XCTAssertEqual(try redis.cli(["HGET", "happy:room:lost", "seq"]).trimmingCharacters(in: .whitespacesAndNewlines), "2")
        XCTAssertEqual(try HTTP.get("\(server.httpBase)/healthz").status, 200)
    }
}
