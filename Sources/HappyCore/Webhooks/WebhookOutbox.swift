import Synchronization

/// One delivery for one webhook (PROTOCOL.md section 13), encoded once as
/// the JSON object a batch lists.
public struct OutboxDelivery: Equatable, Sendable {
    /// The key of the webhook it is for (`HappyConfig.Webhook.key`).
    public var webhook: Int
    /// The delivery's JSON object.
    public var json: [UInt8]

    /// A delivery from its parts.
    public init(webhook: Int, json: [UInt8]) {
        self.webhook = webhook
        self.json = json
    }
}

/// A delivery waiting in an outbox; `number` orders a webhook's deliveries.
public struct OutboxEntry: Equatable, Sendable {
    /// Grows with each delivery queued; `remove(webhook:through:)` takes the last one sent.
    public var number: UInt64
    /// The delivery's JSON object, as a batch lists it.
    public var json: [UInt8]

    /// An entry from its parts.
    public init(number: UInt64, json: [UInt8]) {
        self.number = number
        self.json = json
    }
}

/// The deliveries their webhooks have not accepted yet, kept by the store
/// (durably when the store is): event deliveries are written in the same
/// transaction as their events, so an acknowledged event's deliveries are
/// never lost. Read and emptied by the webhook senders, from threads of
/// their own. Each webhook's queue is named by its key (`WebhookKey`).
public protocol WebhookOutbox: AnyObject, Sendable {
    /// The oldest waiting deliveries of `webhook`, at most `limit`, in order.
    func waiting(webhook: Int, limit: Int) throws(StoreError) -> [OutboxEntry]
    /// Forgets the deliveries of `webhook` up to `number`: its receiver took them.
    func remove(webhook: Int, through number: UInt64) throws(StoreError)
    /// Drops the oldest deliveries of `webhook` past the newest `keep`; returns how many went.
    func trim(webhook: Int, keep: Int) throws(StoreError) -> Int
    /// How many deliveries of `webhook` wait.
    func count(webhook: Int) throws(StoreError) -> Int
    /// Whether `holder` may send `webhook`'s deliveries for the next
    /// `seconds` (taking or renewing the lease). An outbox several nodes
    /// share lets one of them at a time; one of a single node, always.
    func claim(webhook: Int, holder: String, seconds: Double) throws(StoreError) -> Bool
    /// Lets go of what it holds of the store (another process takes it over).
    func close()
}

extension WebhookOutbox {
    /// Default for an outbox only one node reads: always true.
    public func claim(webhook: Int, holder: String, seconds: Double) throws(StoreError) -> Bool { true }
    /// Default for an outbox that holds nothing open: nothing to do.
    public func close() {}
}

/// The outbox of a store that keeps nothing on disk: deliveries in memory,
/// lost with the process.
public final class MemoryWebhookOutbox: WebhookOutbox, Sendable {
    private struct Queues {
        var byWebhook: [Int: RingQueue<OutboxEntry>] = [:]
        var nextNumber: UInt64 = 1
    }

    private let state = Mutex(Queues())

    /// An empty outbox.
    public init() {}

    /// Queues each delivery behind the others of its webhook; callable from any thread.
    public func append(_ deliveries: [OutboxDelivery]) {
        state.withLock { state in
            for delivery in deliveries {
                state.byWebhook[delivery.webhook, default: RingQueue()]
                    .append(OutboxEntry(number: state.nextNumber, json: delivery.json))
                state.nextNumber += 1
            }
        }
    }

    /// The oldest waiting deliveries of `webhook`, at most `limit`, in order.
    public func waiting(webhook: Int, limit: Int) throws(StoreError) -> [OutboxEntry] {
        state.withLock { state in
            guard let queue = state.byWebhook[webhook] else { return [] }
            return (0..<min(limit, queue.count)).map { queue[$0] }
        }
    }

    /// Forgets the deliveries of `webhook` numbered up to `number`.
    public func remove(webhook: Int, through number: UInt64) throws(StoreError) {
        state.withLock { state in
            while let first = state.byWebhook[webhook]?.first, first.number <= number {
                _ = state.byWebhook[webhook]?.removeFirst()
            }
        }
    }

    /// How many deliveries of `webhook` wait.
    public func count(webhook: Int) throws(StoreError) -> Int {
        state.withLock { $0.byWebhook[webhook]?.count ?? 0 }
    }

    /// Drops the oldest deliveries of `webhook` past the newest `keep`; returns how many went.
    public func trim(webhook: Int, keep: Int) throws(StoreError) -> Int {
        state.withLock { state in
            var dropped = 0
            while let count = state.byWebhook[webhook]?.count, count > keep {
                _ = state.byWebhook[webhook]?.removeFirst()
                dropped += 1
            }
            return dropped
        }
    }
}
