import HappyCore

/// The one check an intent passes before it is applied, on the WebSocket
/// and on `POST /api/intent` alike: not while the server shuts down, not
/// over the sender's rate, not beyond the sender's role. Refusals are
/// counted here.
final class IntentAdmission {
    static let shuttingDown = "server shutting down; nothing was applied"

    private let access: AccessControl
    private let lifecycle: ServerLifecycle
    private let metrics: Metrics
    private var rateLimit: Double

    init(access: AccessControl, lifecycle: ServerLifecycle, metrics: Metrics, limits: HappyConfig.LimitsSection) {
        self.access = access
        self.lifecycle = lifecycle
        self.metrics = metrics
        rateLimit = limits.intentsPerSecond
    }

    /// Applies a configuration read again (SIGHUP) to what comes next.
    func reconfigure(_ limits: HappyConfig.LimitsSection) {
        rateLimit = limits.intentsPerSecond
    }

    static let observers = "observers may not send intents or pointers; join without observe=1 to take part"

    /// Why `intent` from a sender with `role` may not be applied, or nil.
    /// `takeToken` takes one token from the sender's rate-limit bucket.
    func refusal(for intent: Intent, role: Role, observing: Bool = false, takeToken: () -> Bool) -> WireError? {
        if observing {
            metrics.countError(.forbidden)
            return WireError(.forbidden, Self.observers, id: intent.id)
        }
        if lifecycle.isShuttingDown {
            metrics.countError(.unavailable)
            return WireError(.unavailable, Self.shuttingDown, id: intent.id)
        }
        guard takeToken() else { return rateLimited(id: intent.id) }
        if let refusal = access.refusal(for: intent.action, role: role) {
            metrics.countError(.forbidden)
            return WireError(.forbidden, refusal, id: intent.id)
        }
        return nil
    }

    /// A message over the sender's rate (counted).
    func rateLimited(id: String?) -> WireError {
        metrics.rateLimited += 1
        metrics.countError(.rateLimited)
        return WireError(.rateLimited, "rate limit of \(rateLimit) messages/s exceeded; message dropped", id: id)
    }
}
