import HappyCore

/// The service thread's time. `now()` reads the clock at most once per turn
/// of the event loop: the per-message paths (queueing, writing, receiving)
/// need it only for timeouts measured in seconds, not a clock call per
/// message. `fresh()` reads it anew. Tests pass a manual `TimeSource`.
final class ServiceClock {
    let source: any TimeSource
    private var stamp = 0.0
    private var isFresh = false

    init(source: any TimeSource = SystemTimeSource.shared) {
        self.source = source
    }

    /// Monotonic seconds, read once per loop turn.
    @inline(__always)
    func now() -> Double {
        if !isFresh {
            stamp = source.monotonicSeconds
            isFresh = true
        }
        return stamp
    }

    /// Monotonic seconds, read now.
    func fresh() -> Double { source.monotonicSeconds }

    /// Milliseconds since 1970, for the wire.
    func wallMilliseconds() -> Int64 { source.wallMilliseconds }

    /// Called after each loop turn: the next reading is a new one.
    func nextTurn() {
        isFresh = false
    }
}
