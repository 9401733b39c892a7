/// Latencies in 10 µs buckets up to a limit (2 s unless told), and one overflow bucket, for percentiles.
struct LatencyHistogram {
    private static let bucketMicros = 10
    private var buckets: [UInt32]
    private(set) var count = 0
    private(set) var maxMicros = 0

    init(limitMillis: Int = 2000) {
        buckets = [UInt32](repeating: 0, count: limitMillis * 1000 / Self.bucketMicros + 1)
    }

    /// The largest latency told apart from longer ones (ms).
    var limitMillis: Double { Double((buckets.count - 1) * Self.bucketMicros) / 1000 }

    mutating func add(nanoseconds: UInt64) {
        let micros = Int(nanoseconds / 1000)
        buckets[min(micros / Self.bucketMicros, buckets.count - 1)] += 1
        count += 1
        maxMicros = max(maxMicros, micros)
    }

    /// Adds the samples of `other` (of the same limit).
    mutating func merge(_ other: LatencyHistogram) {
        for index in 0..<min(buckets.count, other.buckets.count) { buckets[index] += other.buckets[index] }
        count += other.count
        maxMicros = max(maxMicros, other.maxMicros)
    }

    /// The latency in milliseconds below which `fraction` of the samples fall.
    func percentile(_ fraction: Double) -> Double {
        guard count > 0 else { return 0 }
        let target = UInt64((Double(count) * fraction).rounded(.up))
        var seen: UInt64 = 0
        for (index, value) in buckets.enumerated() {
            seen += UInt64(value)
            if seen >= target { return Double((index + 1) * Self.bucketMicros) / 1000 }
        }
        return Double(maxMicros) / 1000
    }
}
