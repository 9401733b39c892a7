import Foundation
import HappyClientKit
import HappyCore

/// Keeps intents within the server's token bucket (PROTOCOL.md section 5)
/// with a margin: `--times` runs wait for a turn, `play` drops keys that
/// find none.
struct IntentPacer {
    private var bucket: TokenBucket

    /// A `share` of the server's rate, at most `maxPerSecond`, and a burst
    /// of at most `burst` (or half the server's).
    init(limits: WelcomeLimits?, share: Double = 0.9, maxPerSecond: Double = .infinity, burst: Int? = nil) {
        let rate = max(1, min(maxPerSecond, (limits?.intentsPerSecond ?? 60) * share))
        let serverBurst = max(1, (limits?.intentBurst ?? 120) / 2)
        bucket = TokenBucket(ratePerSecond: rate, burst: min(serverBurst, burst ?? serverBurst), now: SystemTime.monotonicSeconds())
    }

    var ratePerSecond: Double { bucket.ratePerSecond }

    mutating func waitForTurn() {
        while !bucket.take(now: SystemTime.monotonicSeconds()) {
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// Takes a turn if there is one, without waiting.
    mutating func tryTurn() -> Bool {
        bucket.take(now: SystemTime.monotonicSeconds())
    }
}
