/// Whether the server still takes new work. Set once by the composition
/// root when shutdown begins; read by every component that admits work
/// (connections, intents, streams).
final class ServerLifecycle {
    private(set) var isShuttingDown = false

    func beginShutdown() {
        isShuttingDown = true
    }

    /// An upgrade failed before the store changed hands: work is taken again.
    func resume() {
        isShuttingDown = false
    }
}
