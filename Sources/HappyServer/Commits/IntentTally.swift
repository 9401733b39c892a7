/// Intents of one connection applied and not yet answered (their acks are
/// due). Owned by `CommitCoordinator`: counted up when an intent is applied,
/// down when it is delivered or refused.
struct IntentTally {
    private(set) var pending = 0
    /// When the connection's last intent was applied (service clock), for
    /// sending the writers over first in an upgrade.
    private(set) var lastAppliedAt = -Double.infinity

    mutating func track(now: Double) {
        pending += 1
        lastAppliedAt = now
    }

    mutating func settle() { pending -= 1 }
}

/// What a room has waiting for the store. Owned by `CommitCoordinator`.
struct RoomCommitState {
    /// Intents applied but not yet recorded or answered.
    private(set) var pendingIntents = 0
    /// Created here and not yet recorded by the store: dropping the room now
    /// would let the next visitor create it again under another epoch.
    private(set) var creationPending = false

    mutating func track() { pendingIntents += 1 }
    mutating func settle() { pendingIntents -= 1 }
    mutating func creationQueued() { creationPending = true }
    mutating func recorded() { creationPending = false }
}
