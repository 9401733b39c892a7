import HappyCore

/// Each client address's token bucket over every HTTP request, static files
/// included (`limits.httpPerSecond`, `limits.httpBurst`). A request costs
/// what it makes the server do: a file or a read little, a frame by its
/// pixels (a 2048² PNG is 64 small ones), a stream as much as ten reads.
struct HTTPRateLimiter {
    /// An address quiet this long is forgotten (its bucket is full again by then).
    static let forgetAfterSeconds = 60.0

    private let rate: Double
    private let burst: Int
    private var buckets: [String: HTTPRateLimit] = [:]

    init(limits: HappyConfig.LimitsSection) {
        rate = limits.httpPerSecond
        burst = limits.httpBurst
    }

    /// Nil when `address` may make a request of `cost` now, else the whole
    /// seconds it must wait (its `Retry-After`, at least 1).
    mutating func take(_ cost: Double, for address: String, now: Double) -> Int? {
        var entry = buckets[address]
            ?? HTTPRateLimit(bucket: TokenBucket(ratePerSecond: rate, burst: burst, now: now), lastUsed: now)
        entry.lastUsed = now
        defer { buckets[address] = entry }
        if entry.bucket.take(cost, now: now) { return nil }
        return max(1, Int(entry.bucket.secondsUntil(cost, now: now).rounded(.up)))
    }

    /// Forgets quiet addresses (from the sweep).
    mutating func sweep(now: Double) {
        buckets = buckets.filter { now - $0.value.lastUsed < Self.forgetAfterSeconds }
    }

    /// What a request costs, in tokens.
    static func cost(method: String, path: String, query: [String: String], isRoute: Bool) -> Double {
        guard isRoute else { return 0.2 }
        if path.hasPrefix("/frame/") { return 1 + pixels(query) / 65_536 }
        if path.hasPrefix("/stream/") { return 10 + pixels(query) / 65_536 }
        return 1
    }

    /// The pixels a frame asks for (a view's default is at most 375×300).
    private static func pixels(_ query: [String: String]) -> Double {
        let width = query["w"].flatMap(Double.init) ?? 375, height = query["h"].flatMap(Double.init) ?? 300
        return min(max(width, 1), 2048) * min(max(height, 1), 2048)
    }
}

/// The rate-limit state of one client address.
struct HTTPRateLimit {
    var bucket: TokenBucket
    var lastUsed: Double
}
