/// How busy the service thread is: the share of the last second it spent
/// working (lws callbacks, the end of each loop turn, the writes after it)
/// rather than waiting for events. `run()` hands over, after each wait,
/// the seconds the event loop waited (`LWSServerHost.takeWaitedSeconds`);
/// everything else since the previous wait was work. One clock read per
/// turn, on the service clock (the tests' manual clock drives it).
final class ServiceLoad {
    /// The window the share is measured over, in buckets of a tenth of a second.
    static let windowSeconds = 1.0
    private static let bucketCount = 10
    private static let bucketSeconds = windowSeconds / Double(bucketCount)

    private let clock: ServiceClock
    /// Seconds waited in each tenth of a second of the window (a ring).
    private var waited = [Double](repeating: 0, count: bucketCount)
    /// The tenth of a second the newest bucket covers.
    private var newest: Int
    /// When measuring began, and when the last wait was handed over.
    private let startedAt: Double
    private var lastWaitAt: Double?

    init(clock: ServiceClock) {
        self.clock = clock
        startedAt = clock.fresh()
        newest = Self.tenth(startedAt)
    }

    /// The event loop just came back from waiting `seconds` (in total since
    /// the last call). The wait came first: it started when the previous
    /// one was handed over, and the work of that turn followed it.
    func waited(_ seconds: Double) {
        let now = clock.fresh()
        let from = lastWaitAt ?? startedAt
        lastWaitAt = now
        let length = min(max(0, seconds), max(0, now - from))
        guard length > 0 else { return advance(to: Self.tenth(now)) }
        addWait(from: from, to: from + length, now: now)
    }

    /// The share of the last second spent working, 0…1 (0 before anything was measured).
    func busyShare() -> Double {
        guard lastWaitAt != nil else { return 0 }
        let now = clock.now()
        let current = Self.tenth(now)
        advance(to: current)
        let windowStart = max(startedAt, Double(current - Self.bucketCount + 1) * Self.bucketSeconds)
        let span = now - windowStart
        guard span > 0 else { return 0 }
        let idle = waited.reduce(0, +)
        return min(1, max(0, 1 - idle / span))
    }

    private static func tenth(_ time: Double) -> Int { Int((time / bucketSeconds).rounded(.down)) }

    /// Spreads the wait over the buckets it covers (those still in the window).
    private func addWait(from start: Double, to end: Double, now: Double) {
        advance(to: Self.tenth(now))
        let first = max(Self.tenth(start), newest - Self.bucketCount + 1)
        guard first <= Self.tenth(end) else { return }
        for tenth in first...min(Self.tenth(end), newest) {
            let bucketStart = Double(tenth) * Self.bucketSeconds
            let overlap = min(end, bucketStart + Self.bucketSeconds) - max(start, bucketStart)
            if overlap > 0 { waited[tenth % Self.bucketCount] += overlap }
        }
    }

    /// Empties the buckets that left the window.
    private func advance(to tenth: Int) {
        guard tenth > newest else { return }
        let steps = min(Self.bucketCount, tenth - newest)
        for step in 1...steps { waited[(newest + step) % Self.bucketCount] = 0 }
        newest = tenth
    }
}
