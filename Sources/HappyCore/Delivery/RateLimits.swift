/// A token bucket: `burst` tokens, refilled at `ratePerSecond`.
public struct TokenBucket: Sendable {
    public let ratePerSecond: Double
    public let burst: Double
    private var tokens: Double
    private var updatedAt: Double

    public init(ratePerSecond: Double, burst: Int, now: Double) {
        self.ratePerSecond = ratePerSecond
        self.burst = Double(burst)
        tokens = Double(burst)
        updatedAt = now
    }

    /// Takes one token if there is one. `now` is in seconds (monotonic).
    public mutating func take(now: Double) -> Bool {
        if now > updatedAt {
            tokens = min(burst, tokens + (now - updatedAt) * ratePerSecond)
            updatedAt = now
        }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

/// Counts `rate_limited` answers in a sliding window; a client that collects
/// more than `limit` of them within `window` seconds is flooding.
public struct FloodMeter: Sendable {
    public let limit: Int
    public let window: Double
    private var times: [Double] = []
    private var start = 0

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
