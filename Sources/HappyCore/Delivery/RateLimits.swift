/// A token bucket: `burst` tokens, refilled at `ratePerSecond`.
public struct TokenBucket: Sendable {
    /// Tokens added per second.
    public let ratePerSecond: Double
    /// The most tokens the bucket holds; it starts full.
    public let burst: Double
    private var tokens: Double
    private var updatedAt: Double

    /// A full bucket; `now` in seconds on the monotonic clock.
    public init(ratePerSecond: Double, burst: Int, now: Double) {
        self.ratePerSecond = ratePerSecond
        self.burst = Double(burst)
        tokens = Double(burst)
        updatedAt = now
    }

    /// Takes one token if there is one. `now` is in seconds (monotonic).
    public mutating func take(now: Double) -> Bool {
        take(1, now: now)
    }

    /// Takes `cost` tokens if the bucket holds them (a cost above `burst` takes a full bucket).
    public mutating func take(_ cost: Double, now: Double) -> Bool {
        refill(now: now)
        let needed = min(cost, burst)
        guard tokens >= needed else { return false }
        tokens -= needed
        return true
    }

    /// Seconds until `cost` tokens are there (0 when they are).
    public mutating func secondsUntil(_ cost: Double, now: Double) -> Double {
        refill(now: now)
        return max(0, (min(cost, burst) - tokens) / ratePerSecond)
    }

    private mutating func refill(now: Double) {
        if now > updatedAt {
            tokens = min(burst, tokens + (now - updatedAt) * ratePerSecond)
            updatedAt = now
        }
    }
}

/// Counts `rate_limited` answers in a sliding window; a client that collects
/// more than `limit` of them within `window` seconds is flooding.
public struct FloodMeter: Sendable {
    /// `rate_limited` answers a client may collect within `window` (`limits.floodLimit`).
    public let limit: Int
    /// The window's length in seconds.
    public let window: Double
    private var times: [Double] = []
    private var start = 0

    /// A meter with nothing recorded; `window` in seconds, 10 as PROTOCOL.md states.
    public init(limit: Int, window: Double = 10) {
        self.limit = limit
        self.window = window
    }

    /// Records one rate-limited message; true when the client is flooding.
    public mutating func record(now: Double) -> Bool {
        while start < times.count, times[start] <= now - window { start += 1 }
        if start > 64, start * 2 > times.count {
            times.removeFirst(start)
            start = 0
        }
        times.append(now)
        return times.count - start > limit
    }
}
