import HappyCore

/// A connection's pointer traffic: its own rate (`pointersPerSecond`), and
/// whether it missed batches while its queue was long. Owned by `PointerService`.
struct PointerPace {
    private(set) var bucket: TokenBucket
    /// Pointer batches were skipped (a long queue) since the room's pointer
    /// `goneCount` was this: the next one lists every pointer and what went.
    private(set) var skippedSince: UInt64?

    init(limits: HappyConfig.LimitsSection, now: Double) {
        bucket = TokenBucket(ratePerSecond: limits.pointersPerSecond,
                             burst: max(1, Int(limits.pointersPerSecond.rounded(.up))), now: now)
    }

    mutating func take(now: Double) -> Bool {
        bucket.take(now: now)
    }

    /// A batch was skipped; `goneFrom` is where that batch's `gone` started.
    mutating func skipped(goneFrom: UInt64) {
        if skippedSince == nil { skippedSince = goneFrom }
    }

    /// The next batch goes out: when batches were skipped, since when.
    mutating func catchUp() -> UInt64? {
        defer { skippedSince = nil }
        return skippedSince
    }
}
