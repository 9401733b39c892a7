import HappyCore

extension HappyServer {
    /// One sender thread per webhook, reading the store's outbox.
    func startWebhooks() {
        senders.start(outbox: webhookOutbox)
    }

    /// A reload's `webhooks` and `webhookQueueMax`, for what happens next.
    /// The store learns the list first (Redis finds a webhook's outbox by its
    /// URL), then deliveries made from now on follow the new routing, then the
    /// senders follow the list (see `WebhookSenders.reconfigure`). The
    /// outbox opens here when the first webhook is listed. Nothing waits for
    /// a sender thread.
    func reconfigureWebhooks(_ next: HappyConfig) {
        roomStore.configureWebhooks(next.webhooks)
        webhooks.reconfigure(WebhookRouting(next.webhooks))
        if webhookOutbox == nil && !next.webhooks.isEmpty {
            do {
                webhookOutbox = try roomStore.webhookOutbox()
            } catch {
                logger.error("the webhook outbox cannot be opened: deliveries are queued but not sent until a reload opens it",
                             ["error": error.message])
            }
        }
        let change = senders.reconfigure(next.webhooks, queueMax: next.webhookQueueMax, outbox: webhookOutbox)
        guard !change.isEmpty else { return }
        func urls(_ list: [HappyConfig.Webhook]) -> String {
            list.isEmpty ? "none" : list.map(\.redactedURL).joined(separator: ",")
        }
        logger.info("webhooks changed", ["added": urls(change.added), "removed": urls(change.removed),
                                         "changed": urls(change.changed)])
    }
}
