import HappyCore

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
    /// An intent was applied here since the room was loaded.
    private(set) var hadIntents = false
    /// Created here and not yet recorded by the store: dropping the room now
    /// would let the next visitor create it again under another epoch.
    private(set) var creationPending = false
    /// The creation of a room the store has never held, kept back while the
    /// room is only read: it is recorded when someone joins it or changes it,
    /// so that reading made-up rooms stores nothing.
    private(set) var unrecordedCreation: RoomCommit?

    /// Whether the store has never held the room (it exists in memory only).
    var isUnrecorded: Bool { unrecordedCreation != nil }

    mutating func track() {
        pendingIntents += 1
        hadIntents = true
    }

    mutating func settle() { pendingIntents -= 1 }
    mutating func creationQueued() { creationPending = true }
    mutating func recorded() { creationPending = false }

    /// The room was loaded, and the store has never held it.
    mutating func keepUnrecorded(_ creation: RoomCommit) { unrecordedCreation = creation }

    /// The creation to record now that the room is used; nil when it is recorded already.
    mutating func takeUnrecordedCreation() -> RoomCommit? {
        defer { unrecordedCreation = nil }
        return unrecordedCreation
    }

    /// The room is what the store holds after all (another node recorded it).
    mutating func dropUnrecordedCreation() { unrecordedCreation = nil }
}
