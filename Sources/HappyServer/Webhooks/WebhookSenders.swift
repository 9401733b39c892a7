import Foundation
import HappyCore
import Synchronization

/// How a webhook batch is POSTed (libcurl in `happyserver`; a fake in tests):
/// the status the receiver answered, or why there was none.
public protocol WebhookPoster: Sendable {
    func post(url: String, body: [UInt8], headers: [(name: String, value: String)], timeoutSeconds: Double)
        -> Result<Int, WebhookPostError>
}

/// A POST that got no HTTP answer (refused, timed out, TLS failed...).
public struct WebhookPostError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The webhook deliveries' counters, kept by the sender threads and read by `/metrics`.
final class WebhookStats: Sendable {
    let delivered = Atomic<Int>(0)
    let batches = Atomic<Int>(0)
    let failedAttempts = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
}

/// One thread per webhook sends its deliveries in batches, in the order
/// they were queued, from the store's outbox: at least once (a delivery
/// leaves the outbox only once its receiver answered 2xx), retried with
/// backoff (0.5 s doubling to 60 s), signed with the webhook's secret
/// (`X-Happy-Signature: sha256=<hex>`). Past `webhookQueueMax` waiting, the
/// oldest are dropped. A slow or dead receiver holds up nobody but its own
/// thread: the rooms never wait for a webhook.
final class WebhookSenders: @unchecked Sendable {
    static let batchLimit = 100
    static let firstRetrySeconds = 0.5
    static let lastRetrySeconds = 60.0
    static let postTimeoutSeconds = 10.0
    static let stopWaitSeconds = 2.0
    /// How long this process may send a shared outbox's deliveries without
    /// renewing its lease: longer than a POST may take.
    static let leaseSeconds = 15.0
    /// How often a process without the lease asks for it again.
    static let leaseRetrySeconds = 2.0

    private let webhooks: [HappyConfig.Webhook]
    private let queueMax: Int
    private let poster: (any WebhookPoster)?
    private let logger: Logger
    let stats = WebhookStats()
    /// Names this process to an outbox several nodes share (its lease).
    let holder = Identifiers.newEpoch()
    private let condition = NSCondition()
    /// Counts wake-ups: each sender waits for it to move past what it saw.
    private var generation = 0
    private var stopping = false
    private var threads: [Thread] = []
    private var running = 0

    init(webhooks: [HappyConfig.Webhook], queueMax: Int, poster: (any WebhookPoster)?, logger: Logger) {
        self.webhooks = webhooks
        self.queueMax = queueMax
        self.poster = poster
        self.logger = logger
    }

    /// Starts one sender per webhook on `outbox`.
    func start(outbox: any WebhookOutbox) {
        guard let poster, !webhooks.isEmpty else { return }
        for (index, webhook) in webhooks.enumerated() {
            let thread = Thread { [self] in run(webhook, outbox: outbox, poster: poster) }
            thread.name = "happy.webhook.\(index)"
            condition.lock()
            running += 1
            condition.unlock()
            threads.append(thread)
            thread.start()
        }
    }

    /// New deliveries are in the outbox; safe from any thread.
    func wake() {
        condition.lock()
        generation += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the senders (what is not delivered stays in the outbox) and
    /// waits a moment for them: a POST to a slow receiver is not waited
    /// for, its batch is sent again by the next start.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: Self.stopWaitSeconds)
        while running > 0 && condition.wait(until: deadline) {}
        condition.unlock()
    }

    /// Waits until woken (past `seen`), stopped or `seconds` have passed; false once stopping.
    private func pause(_ seconds: Double, seen: inout Int, wakeable: Bool = true) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while (!wakeable || generation == seen) && !stopping {
            if !condition.wait(until: deadline) { break }
        }
        seen = generation
        return !stopping
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }

    private func run(_ webhook: HappyConfig.Webhook, outbox: any WebhookOutbox, poster: any WebhookPoster) {
        defer {
            condition.lock()
            running -= 1
            condition.broadcast()
            condition.unlock()
        }
        var retry = Self.firstRetrySeconds
        var failing = false
        var droppedLogged = false
        var lastTrim = Date.distantPast
        var seen = 0
        var holdsLease = false
        let key = webhook.key
        let secret = Array(webhook.secret.utf8)
        while !isStopping {
            // Another node may be sending this outbox: wait for its lease to lapse.
            let claimed: Bool
            do {
                claimed = try outbox.claim(webhook: key, holder: holder, seconds: Self.leaseSeconds)
            } catch {
                logger.error("webhook outbox unreachable", ["webhook": webhook.redactedURL, "error": error.message])
                guard pause(retry, seen: &seen, wakeable: false) else { return }
                retry = min(Self.lastRetrySeconds, retry * 2)
                continue
            }
            if claimed != holdsLease {
                holdsLease = claimed
                logger.info(claimed ? "this node sends the webhook's deliveries" : "another node sends the webhook's deliveries",
                            ["webhook": webhook.redactedURL, "holder": holder])
            }
            guard claimed else {
                guard pause(Self.leaseRetrySeconds, seen: &seen, wakeable: false) else { return }
                continue
            }
            if failing || Date().timeIntervalSince(lastTrim) > 5 {
                lastTrim = Date()
                let dropped = (try? outbox.trim(webhook: key, keep: queueMax)) ?? 0
                if dropped > 0 {
                    stats.dropped.add(dropped, ordering: .relaxed)
                    if !droppedLogged {
                        droppedLogged = true
                        logger.error("webhook queue full: oldest deliveries dropped",
                                     ["webhook": webhook.redactedURL, "dropped": "\(dropped)", "webhookQueueMax": "\(queueMax)"])
                    }
                }
            }
            let entries: [OutboxEntry]
            do {
                entries = try outbox.waiting(webhook: key, limit: Self.batchLimit)
            } catch {
                logger.error("webhook outbox unreadable", ["webhook": webhook.redactedURL, "error": error.message])
                guard pause(retry, seen: &seen, wakeable: false) else { return }
                continue
            }
            guard let last = entries.last else {
                guard pause(1, seen: &seen) else { return }
                continue
            }
            let body = WebhookEncoder.batch(entries)
            let signature = HMACSHA256.digest(key: secret, message: body).map { String(format: "%02x", $0) }.joined()
            let outcome = poster.post(url: webhook.url, body: body,
                                      headers: [("Content-Type", "application/json"),
                                                ("X-Happy-Signature", "sha256=\(signature)")],
                                      timeoutSeconds: Self.postTimeoutSeconds)
            if case .success(let status) = outcome, (200..<300).contains(status) {
                try? outbox.remove(webhook: key, through: last.number)
                stats.delivered.add(entries.count, ordering: .relaxed)
                stats.batches.add(1, ordering: .relaxed)
                if failing { logger.info("webhook receiving again", ["webhook": webhook.redactedURL]) }
                failing = false
                retry = Self.firstRetrySeconds
                continue
            }
            stats.failedAttempts.add(1, ordering: .relaxed)
            let why: String
            switch outcome {
            case .success(let status): why = "answered \(status)"
            case .failure(let error): why = error.message
            }
            if !failing {
                logger.warn("webhook delivery failed; retrying with backoff",
                            ["webhook": webhook.redactedURL, "deliveries": "\(entries.count)", "why": why])
            }
            failing = true
            // A failing receiver is retried on its backoff, not on every new delivery.
            guard pause(retry, seen: &seen, wakeable: false) else { return }
            retry = min(Self.lastRetrySeconds, retry * 2)
        }
    }
}
