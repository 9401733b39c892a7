import Foundation
import HappyCore
import HappySQLite
import XCTest

/// The webhook outbox in the database: each webhook's queue under its key
/// (`WebhookKey`), whatever its place in the list.
final class SQLiteWebhookOutboxTests: XCTestCase {
    private var directory = ""
    private let first = HappyConfig.Webhook(url: "https://first.example/in", events: [.event], secret: "s")
    private let second = HappyConfig.Webhook(url: "https://second.example/in", events: [.event], secret: "s")

    override func setUp() {
        directory = HistoryFixture.temporaryDirectory("happy-outbox")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func ids(_ outbox: any WebhookOutbox, _ webhook: Int) throws -> [String] {
        try outbox.waiting(webhook: webhook, limit: 100).compactMap { try JSONParser.parse($0.json)["id"]?.stringValue }
    }

    /// Deliveries for every webhook of `webhooks` that wants events, as the server makes them.
    private func deliveries(_ id: String, for webhooks: [HappyConfig.Webhook]) -> [OutboxDelivery] {
        WebhookRouting(webhooks).deliveries(.event) { Array(#"{"id":"\#(id)"}"#.utf8) }
    }

    func testEachQueueStaysWithItsWebhookWhenTheListIsReordered() throws {
        var store = try SQLiteRoomStore(directory: directory, historySize: 5, fsync: false, webhooks: [first, second])
        var commit = HistoryFixture.commit(from: 1, to: 1)
        commit.deliveries = deliveries("e1", for: [first, second])
        try store.commit([commit])
        try store.enqueue(deliveries("e2", for: [first]))
        store.close()
        XCTAssertEqual(try HistoryFixture.sqlite(directory, "SELECT DISTINCT webhook FROM webhook_outbox ORDER BY webhook"),
                       [first.key, second.key].sorted().map(String.init).joined(separator: "\n"),
                       "the 63-bit keys, as the INTEGER column holds them")

        store = try SQLiteRoomStore(directory: directory, historySize: 5, fsync: false, webhooks: [second, first])
        defer { store.close() }
        XCTAssertEqual(store.deliveriesMovedToKeys, 0)
        let outbox = try store.webhookOutbox()
        defer { outbox.close() }
        XCTAssertEqual(try ids(outbox, first.key), ["e1", "e2"])
        XCTAssertEqual(try ids(outbox, second.key), ["e1"])
        let entries = try outbox.waiting(webhook: first.key, limit: 1)
        try outbox.remove(webhook: first.key, through: entries[0].number)
        XCTAssertEqual(try ids(outbox, first.key), ["e2"])
        XCTAssertEqual(try ids(outbox, second.key), ["e1"], "another webhook's queue is its own")
    }

    /// Rows as an older build queued them: under the webhook's place in the list.
    func testDeliveriesQueuedByListPositionMoveToTheirWebhooksKeyInOrder() throws {
        try SQLiteRoomStore(directory: directory, historySize: 5, fsync: false).close()
        var rows: [String] = []
        for (number, (position, id)) in [(0, "a1"), (1, "b1"), (0, "a2"), (2, "gone1"), (1, "b2"), (0, "a3")].enumerated() {
            rows.append("(\(number + 1), \(position), CAST('{\"id\":\"\(id)\"}' AS BLOB))")
        }
        try HistoryFixture.sqlite(directory, "INSERT INTO webhook_outbox (number, webhook, json) VALUES "
                                  + rows.joined(separator: ", ") + ";")

        var store = try SQLiteRoomStore(directory: directory, historySize: 5, fsync: false, webhooks: [first, second])
        XCTAssertEqual(store.deliveriesMovedToKeys, 5)
        try store.enqueue(deliveries("new", for: [first, second]))
        var outbox = try store.webhookOutbox()
        XCTAssertEqual(try ids(outbox, first.key), ["a1", "a2", "a3", "new"], "the old ones first, in their order")
        XCTAssertEqual(try ids(outbox, second.key), ["b1", "b2", "new"])
        XCTAssertEqual(try ids(outbox, 2), ["gone1"], "a place past the list's end stays: its URL is unknown")
        XCTAssertEqual(try ids(outbox, 0) + ids(outbox, 1), [])
        outbox.close()
        store.close()

        // Moved once: a later start with another order moves nothing.
        store = try SQLiteRoomStore(directory: directory, historySize: 5, fsync: false, webhooks: [second, first])
        defer { store.close() }
        XCTAssertEqual(store.deliveriesMovedToKeys, 0)
        outbox = try store.webhookOutbox()
        defer { outbox.close() }
        XCTAssertEqual(try ids(outbox, first.key), ["a1", "a2", "a3", "new"])
        XCTAssertEqual(try ids(outbox, second.key), ["b1", "b2", "new"])
    }
}
