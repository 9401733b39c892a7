import HappyCore

/// New rooms each client address may make (`limits.roomsPerAddress` a
/// minute), so that no one address fills the store or takes every room slot.
struct NewRoomLimit {
    private let perMinute: Int
    private var buckets: [String: (bucket: TokenBucket, lastUsed: Double)] = [:]

    init(perMinute: Int) {
        self.perMinute = perMinute
    }

    /// Takes one new room from `address`'s allowance, if there is one left.
    mutating func allows(_ address: String, now: Double) -> Bool {
        var entry = buckets[address] ?? (bucket(now), now)
        entry.lastUsed = now
        defer { buckets[address] = entry }
        return entry.bucket.take(now: now)
    }

    /// Seconds until `address` may make one more (at least 1).
    mutating func secondsUntilNext(_ address: String, now: Double) -> Int {
        guard var entry = buckets[address] else { return 1 }
        defer { buckets[address] = entry }
        return max(1, Int(entry.bucket.secondsUntil(1, now: now).rounded(.up)))
    }

    /// Forgets addresses whose allowance is full again.
    mutating func sweep(now: Double) {
        buckets = buckets.filter { now - $0.value.lastUsed < 60 }
    }

    private func bucket(_ now: Double) -> TokenBucket {
        TokenBucket(ratePerSecond: Double(perMinute) / 60, burst: perMinute, now: now)
    }
}
