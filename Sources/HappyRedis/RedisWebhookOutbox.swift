import Foundation
import HappyCore

/// The webhook outboxes of a cluster, in Redis: one stream per webhook URL
/// (`happy:webhook:<url>`), entries with field `d` (the delivery), added by
/// the commit script with their events or by the enqueue script. Every node
/// writes to them; one node at a time sends each, the holder of its lease
/// (`happy:webhook-sender:<url>`, renewed while it sends): a delivery goes
/// out once, and again only when a node fails mid-batch.
///
/// An entry's number is its stream id (`<ms>-<n>`) as `ms << 20 | n`, so
/// numbers grow with ids and a removal "through" a number is an `XTRIM
/// MINID` just past it. Called from the sender threads, one call at a time.
final class RedisWebhookOutbox: WebhookOutbox, @unchecked Sendable {
    static func key(url: String) -> String { "happy:webhook:\(url)" }
    static func leaseKey(url: String) -> String { "happy:webhook-sender:\(url)" }

    /// KEYS: the lease; ARGV: holder, milliseconds. 1 when the holder has it.
    static let claimScript = """
        local current = redis.call('GET', KEYS[1])
        if current == ARGV[1] then
          redis.call('PEXPIRE', KEYS[1], ARGV[2])
          return 1
        end
        if not current then
          redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
          return 1
        end
        return 0
        """

    private let endpoint: RedisEndpoint
    /// Each webhook's URL, by its key.
    private let webhooks: RedisWebhookList
    private let lock = NSLock()
    private var connection: RedisConnection?

    init(endpoint: RedisEndpoint, webhooks: RedisWebhookList) {
        self.endpoint = endpoint
        self.webhooks = webhooks
    }

    func waiting(webhook: Int, limit: Int) throws(StoreError) -> [OutboxEntry] {
        let reply = try command(["XRANGE", key(webhook), "-", "+", "COUNT", String(limit)], "reading")
        return try reply.elements.map { entry throws(StoreError) in
            let parts = entry.elements
            guard parts.count == 2, let id = parts[0].text, let number = Self.number(id: id) else {
                throw StoreError(.damaged, "an entry of \(key(webhook)) in Redis is unreadable")
            }
            let fields = parts[1].elements
            guard fields.count >= 2, case .bulk(let json) = fields[1] else {
                throw StoreError(.damaged, "entry \(id) of \(key(webhook)) in Redis has no delivery")
            }
            return OutboxEntry(number: number, json: json)
        }
    }

    func remove(webhook: Int, through number: UInt64) throws(StoreError) {
        try command(["XTRIM", key(webhook), "MINID", Self.id(after: number)], "removing delivered entries of")
    }

    func trim(webhook: Int, keep: Int) throws(StoreError) -> Int {
        Int(try command(["XTRIM", key(webhook), "MAXLEN", String(keep)], "trimming").integer ?? 0)
    }

    func count(webhook: Int) throws(StoreError) -> Int {
        Int(try command(["XLEN", key(webhook)], "counting").integer ?? 0)
    }

    func claim(webhook: Int, holder: String, seconds: Double) throws(StoreError) -> Bool {
        let reply = try command(["EVAL", Self.claimScript, "1", Self.leaseKey(url: url(webhook)), holder, String(Int(seconds * 1000))],
                                "taking the sender's lease of")
        return reply.integer == 1
    }

    // MARK: ids and numbers

    static func number(id: String) -> UInt64? {
        let parts = id.split(separator: "-")
        guard parts.count == 2, let milliseconds = UInt64(parts[0]), let sequence = UInt64(parts[1]) else { return nil }
        return milliseconds << 20 | min(sequence, (1 << 20) - 1)
    }

    /// The smallest id after the entry numbered `number`.
    static func id(after number: UInt64) -> String {
        "\(number >> 20)-\((number & ((1 << 20) - 1)) + 1)"
    }

    // MARK: the connection

    private func url(_ webhook: Int) -> String {
        webhooks.url(webhook) ?? "#\(webhook)"
    }

    private func key(_ webhook: Int) -> String { Self.key(url: url(webhook)) }

    @discardableResult
    private func command(_ arguments: [String], _ doing: String) throws(StoreError) -> RedisValue {
        lock.lock()
        defer { lock.unlock() }
        let open: RedisConnection
        if let connection {
            open = connection
        } else {
            open = try RedisConnection(endpoint: endpoint)
            connection = open
        }
        let reply = try open.command(arguments)
        if case .error(let message) = reply {
            if ["READONLY", "MASTERDOWN"].contains(where: message.hasPrefix) {
                endpoint.primaryLooksWrong("\(open.url.address) refused a webhook outbox command: \(message)")
            }
            throw StoreError(.io, "Redis at \(open.url.address) refused \(doing) a webhook outbox: \(message)")
        }
        return reply
    }
}
