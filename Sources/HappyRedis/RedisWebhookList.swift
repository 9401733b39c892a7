import HappyCore
import Synchronization

/// The webhooks a Redis store knows, shared by the store (which writes
/// deliveries) and its outbox (which the senders read): which ones are told
/// of new rooms, and the URL of each key, since a webhook's outbox in Redis
/// is named by its URL (every node, whatever its list's order, writes one
/// receiver's deliveries to one stream). A reload changes the list; the URLs
/// of the webhooks it removed are kept, for deliveries made before it.
final class RedisWebhookList: Sendable {
    private struct Known {
        var routing = WebhookRouting([])
        var urls: [Int: String] = [:]
    }

    private let known = Mutex(Known())

    init(_ webhooks: [HappyConfig.Webhook]) {
        update(webhooks)
    }

    /// The list in force from now on.
    func update(_ webhooks: [HappyConfig.Webhook]) {
        known.withLock { known in
            known.routing = WebhookRouting(webhooks)
            for webhook in webhooks { known.urls[webhook.key] = webhook.url }
        }
    }

    /// The outbox keys of the webhooks told of a room's creation.
    var createdOutboxKeys: [String] {
        known.withLock { known in
            known.routing.webhooks(for: .roomCreated).compactMap { known.urls[$0].map(RedisWebhookOutbox.key(url:)) }
        }
    }

    /// The URL of the webhook with this key, nil when none was listed.
    func url(_ webhook: Int) -> String? {
        known.withLock { $0.urls[webhook] }
    }

    /// The Redis stream of the webhook with this key.
    func outboxKey(_ webhook: Int) throws(StoreError) -> String {
        guard let url = url(webhook) else {
            throw StoreError(.io, "no webhook with key \(webhook) is configured on this node")
        }
        return RedisWebhookOutbox.key(url: url)
    }
}
