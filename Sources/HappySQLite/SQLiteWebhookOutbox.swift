import CSQLite
import Foundation
import HappyCore

/// The webhook outbox in the room store's database (table `webhook_outbox`,
/// column `webhook` the webhook's key, `WebhookKey`): event deliveries are
/// inserted in the commits of their events, the others on their own; the
/// senders read and remove them here, on a connection of their own. One call
/// at a time, under its lock.
final class SQLiteWebhookOutbox: WebhookOutbox, @unchecked Sendable {
    static let createTable = """
        CREATE TABLE IF NOT EXISTS webhook_outbox (number INTEGER PRIMARY KEY AUTOINCREMENT,
            webhook INTEGER NOT NULL, json BLOB NOT NULL);
        CREATE INDEX IF NOT EXISTS webhook_outbox_by_webhook ON webhook_outbox (webhook, number);
        """
    static let insertSQL = "INSERT INTO webhook_outbox (webhook, json) VALUES (?1, ?2)"

    /// Moves the rows an older build queued under a webhook's place in the
    /// list (a number below `WebhookKey.smallest`) to the key of the webhook
    /// at that place in `webhooks`, the list this build starts with; their
    /// numbers, and so their order, stay. A place past the end of the list is
    /// left as it is: nothing tells its URL. Returns how many rows moved.
    static func moveListPositionsToKeys(in database: SQLiteDatabase,
                                        webhooks: [HappyConfig.Webhook]) throws(SQLiteError) -> Int {
        guard !webhooks.isEmpty else { return 0 }
        var moved = 0
        try database.transaction(immediate: true) { () throws(SQLiteError) in
            let update = try database.prepare("UPDATE webhook_outbox SET webhook = ?2 WHERE webhook = ?1")
            defer { update.finalize() }
            for (position, webhook) in webhooks.enumerated() {
                try update.bind(1, Int64(position))
                try update.bind(2, Int64(webhook.key))
                try update.run()
                moved += Int(database.changes)
            }
        }
        return moved
    }

    private let lock = NSLock()
    private let path: String
    private let database: SQLiteDatabase
    private let selectWaiting: SQLiteStatement
    private let deleteThrough: SQLiteStatement
    private let countWaiting: SQLiteStatement
    private let deleteOldest: SQLiteStatement

    /// Closes its connection (the server hands the store to another process); calls after it fail.
    func close() {
        lock.lock()
        defer { lock.unlock() }
        for statement in [selectWaiting, deleteThrough, countWaiting, deleteOldest] { statement.finalize() }
        database.close()
    }

    init(path: String, fileSystem: String) throws(SQLiteError) {
        self.path = path
        database = try SQLiteDatabase(path: path, vfs: fileSystem)
        selectWaiting = try database.prepare(
            "SELECT number, json FROM webhook_outbox WHERE webhook = ?1 ORDER BY number LIMIT ?2")
        deleteThrough = try database.prepare("DELETE FROM webhook_outbox WHERE webhook = ?1 AND number <= ?2")
        countWaiting = try database.prepare("SELECT count(*) FROM webhook_outbox WHERE webhook = ?1")
        deleteOldest = try database.prepare("""
            DELETE FROM webhook_outbox WHERE number IN
              (SELECT number FROM webhook_outbox WHERE webhook = ?1 ORDER BY number LIMIT ?2)
            """)
    }

    func waiting(webhook: Int, limit: Int) throws(StoreError) -> [OutboxEntry] {
        try locked("reading the webhook outbox") { () throws(SQLiteError) in
            defer { selectWaiting.reset() }
            try selectWaiting.bind(1, Int64(webhook))
            try selectWaiting.bind(2, Int64(limit))
            var entries: [OutboxEntry] = []
            while try selectWaiting.step() {
                entries.append(OutboxEntry(number: UInt64(selectWaiting.int64(0)), json: selectWaiting.blob(1)))
            }
            return entries
        }
    }

    func remove(webhook: Int, through number: UInt64) throws(StoreError) {
        try locked("removing delivered webhook deliveries") { () throws(SQLiteError) in
            try deleteThrough.bind(1, Int64(webhook))
            try deleteThrough.bind(2, Int64(number))
            try deleteThrough.run()
        }
    }

    func count(webhook: Int) throws(StoreError) -> Int {
        try locked("counting the webhook outbox") { () throws(SQLiteError) -> Int in Int(try waitingCount(webhook)) }
    }

    func trim(webhook: Int, keep: Int) throws(StoreError) -> Int {
        try locked("trimming the webhook outbox") { () throws(SQLiteError) -> Int in
            let count = try waitingCount(webhook)
            guard count > keep else { return 0 }
            try deleteOldest.bind(1, Int64(webhook))
            try deleteOldest.bind(2, count - Int64(keep))
            try deleteOldest.run()
            return Int(count) - keep
        }
    }

    private func waitingCount(_ webhook: Int) throws(SQLiteError) -> Int64 {
        defer { countWaiting.reset() }
        try countWaiting.bind(1, Int64(webhook))
        _ = try countWaiting.step()
        return countWaiting.int64(0)
    }

    private func locked<T>(_ what: String, _ body: () throws(SQLiteError) -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        do {
            return try body()
        } catch {
            throw StoreError(.io, "\(what) in \(path): \(error)")
        }
    }

    deinit {
        for statement in [selectWaiting, deleteThrough, countWaiting, deleteOldest] { statement.finalize() }
        database.close()
    }
}
