import HappyCore

/// Monotonic time read at most once per turn of the event loop: the
/// per-message paths (queueing, writing, receiving) need it only for
/// timeouts measured in seconds, not a clock call per message.
struct TurnClock {
    private var stamp = 0.0
    private var fresh = false

    mutating func now() -> Double {
        if !fresh {
            stamp = SystemTime.monotonicSeconds()
            fresh = true
        }
        return stamp
    }

    /// Called after each loop turn: the next reading is a new one.
    mutating func nextTurn() {
        fresh = false
    }
}
