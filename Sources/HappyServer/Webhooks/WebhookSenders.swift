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

/// What a reload changed in the webhooks, for the log.
struct WebhookListChange {
    var added: [HappyConfig.Webhook] = []
    var removed: [HappyConfig.Webhook] = []
    /// Kept (same URL) with other events or another secret.
    var changed: [HappyConfig.Webhook] = []
    var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }
}

/// One thread per webhook sends its deliveries in batches, in the order
/// they were queued, from the store's outbox: at least once (a delivery
/// leaves the outbox only once its receiver answered 2xx), retried with
/// backoff (0.5 s doubling to 60 s), signed with the webhook's secret
/// (`X-Happy-Signature: sha256=<hex>`). Past `webhookQueueMax` waiting, the
/// oldest are dropped. A slow or dead receiver holds up nobody but its own
/// thread: the rooms never wait for a webhook.
///
/// A reload (`reconfigure`) starts a thread for each new webhook and tells
/// those of removed ones to stop without waiting for them: a POST under way
/// ends on its own, then the thread leaves (its queue stays in the outbox).
/// A kept webhook's thread goes on with its queue and takes its new secret
/// with its next batch.
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

    /// One webhook's thread, as the others see it: read and written under `condition` only.
    private final class Sender: @unchecked Sendable {
        var webhook: HappyConfig.Webhook
        /// The webhook left the list: the thread leaves at its next turn.
        var removed = false

        init(_ webhook: HappyConfig.Webhook) {
            self.webhook = webhook
        }
    }

    /// What a sender does at the top of its loop.
    private enum Turn {
        case send(HappyConfig.Webhook, queueMax: Int)
        case leaveRemoved(HappyConfig.Webhook)
        case leaveStopping
    }

    private let poster: (any WebhookPoster)?
    private let logger: Logger
    let stats = WebhookStats()
    /// Names this process to an outbox several nodes share (its lease).
    let holder = Identifiers.newEpoch()
    /// Guards everything below.
    private let condition = NSCondition()
    /// Counts wake-ups: each sender waits for it to move past what it saw.
    private var generation = 0
    private var webhooks: [HappyConfig.Webhook]
    private var queueMax: Int
    /// Set by `start`: threads run from then on, once there is an outbox.
    private var started = false
    private var outbox: (any WebhookOutbox)?
    private var stopping = false
    /// The running threads by webhook key, until each leaves.
    private var senders: [Int: Sender] = [:]

    init(webhooks: [HappyConfig.Webhook], queueMax: Int, poster: (any WebhookPoster)?, logger: Logger) {
        self.webhooks = webhooks
        self.queueMax = queueMax
        self.poster = poster
        self.logger = logger
    }

    /// The keys of the webhooks with a thread running, a removed one's until it leaves.
    var runningKeys: Set<Int> {
        condition.lock()
        defer { condition.unlock() }
        return Set(senders.keys)
    }

    /// Starts one sender per webhook on `outbox` (none without one: a reload may bring it).
    func start(outbox: (any WebhookOutbox)?) {
        condition.lock()
        defer { condition.unlock() }
        started = true
        if self.outbox == nil { self.outbox = outbox }
        runListedSenders()
    }

    /// Takes a reloaded list and queue bound: threads start for webhooks
    /// without one, are told to stop for those no longer listed (not waited
    /// for) and carry on with the new events and secret for kept ones.
    /// `outbox` serves when none was given before (no webhook at start).
    @discardableResult
    func reconfigure(_ next: [HappyConfig.Webhook], queueMax: Int, outbox: (any WebhookOutbox)?) -> WebhookListChange {
        condition.lock()
        defer { condition.unlock() }
        var change = WebhookListChange()
        let before = Dictionary(webhooks.map { ($0.key, $0) }) { first, _ in first }
        let after = Set(next.map(\.key))
        for webhook in next {
            guard let old = before[webhook.key] else {
                change.added.append(webhook)
                continue
            }
            if old != webhook { change.changed.append(webhook) }
        }
        change.removed = webhooks.filter { !after.contains($0.key) }
        webhooks = next
        self.queueMax = queueMax
        if self.outbox == nil { self.outbox = outbox }
        for (key, sender) in senders where !after.contains(key) { sender.removed = true }
        runListedSenders()
        generation += 1
        condition.broadcast()
        return change
    }

    /// Gives each listed webhook a running thread with its current settings:
    /// a new one, or the one still running (a webhook removed and listed
    /// again before its thread left keeps that thread). Under `condition`.
    private func runListedSenders() {
        guard started, !stopping, let poster, let outbox else { return }
        for webhook in webhooks {
            if let running = senders[webhook.key] {
                running.webhook = webhook
                running.removed = false
                continue
            }
            let sender = Sender(webhook)
            senders[webhook.key] = sender
            let thread = Thread { [self, key = webhook.key] in run(sender, key: key, outbox: outbox, poster: poster) }
            thread.name = "happy.webhook"
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
        while !senders.isEmpty && condition.wait(until: deadline) {}
        condition.unlock()
    }

    /// Waits until woken (past `seen`), told to leave or `seconds` have passed.
    private func pause(_ sender: Sender, _ seconds: Double, seen: inout Int, wakeable: Bool = true) {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while (!wakeable || generation == seen) && !stopping && !sender.removed {
            if !condition.wait(until: deadline) { break }
        }
        seen = generation
    }

    /// The settings `sender` sends with now; when it is to leave, it stops
    /// counting as running in the same step (so a webhook listed again gets
    /// a thread of its own from then on).
    private func nextTurn(_ sender: Sender) -> Turn {
        condition.lock()
        defer { condition.unlock() }
        guard stopping || sender.removed else { return .send(sender.webhook, queueMax: queueMax) }
        senders[sender.webhook.key] = nil
        condition.broadcast()
        return stopping ? .leaveStopping : .leaveRemoved(sender.webhook)
    }

    private func run(_ sender: Sender, key: Int, outbox: any WebhookOutbox, poster: any WebhookPoster) {
        var retry = Self.firstRetrySeconds
        var failing = false
        var droppedLogged = false
        var lastTrim = Date.distantPast
        var seen = 0
        var holdsLease = false
        while true {
            let webhook: HappyConfig.Webhook, queueMax: Int
            switch nextTurn(sender) {
            case .send(let current, let bound):
                (webhook, queueMax) = (current, bound)
            case .leaveRemoved(let removed):
                let left = (try? outbox.count(webhook: key)).map(String.init) ?? "unknown"
                return logger.info("webhook removed by a reload: its sender stopped; what it had queued stays in the outbox "
                                   + "and is delivered if its URL is listed again",
                                   ["webhook": removed.redactedURL, "leftQueued": left])
            case .leaveStopping:
                return
            }
            // Another node may be sending this outbox: wait for its lease to lapse.
            let claimed: Bool
            do {
                claimed = try outbox.claim(webhook: key, holder: holder, seconds: Self.leaseSeconds)
            } catch {
                logger.error("webhook outbox unreachable", ["webhook": webhook.redactedURL, "error": error.message])
                pause(sender, retry, seen: &seen, wakeable: false)
                retry = min(Self.lastRetrySeconds, retry * 2)
                continue
            }
            if claimed != holdsLease {
                holdsLease = claimed
                logger.info(claimed ? "this node sends the webhook's deliveries" : "another node sends the webhook's deliveries",
                            ["webhook": webhook.redactedURL, "holder": holder])
            }
            guard claimed else {
                pause(sender, Self.leaseRetrySeconds, seen: &seen, wakeable: false)
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
                pause(sender, retry, seen: &seen, wakeable: false)
                continue
            }
            guard let last = entries.last else {
                pause(sender, 1, seen: &seen)
                continue
            }
            let body = WebhookEncoder.batch(entries)
            let signature = HMACSHA256.digest(key: Array(webhook.secret.utf8), message: body)
                .map { String(format: "%02x", $0) }.joined()
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
            pause(sender, retry, seen: &seen, wakeable: false)
            retry = min(Self.lastRetrySeconds, retry * 2)
        }
    }
}
