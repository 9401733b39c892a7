import Foundation

/// Reconnect delays: exponential growth from `initial` up to `maximum`,
/// each delay shortened by up to `jitter` (a fraction) at random so that
/// many clients dropped at once do not return at once. The default is full
/// jitter (a delay anywhere between 0 and the exponential bound), which
/// spreads a crowd's returns the most.
public struct Backoff: Equatable, Sendable {
    /// The first retry's delay in seconds, before jitter.
    public var initial: Double
    /// The longest delay in seconds, before jitter.
    public var maximum: Double
    /// How many times longer each delay is than the one before.
    public var multiplier: Double
    /// The largest fraction of a delay cut off at random, 0...1.
    public var jitter: Double

    /// Creates a backoff; the defaults start at 0.2 s and double up to 5 s, each delay
    /// drawn at random between 0 and that bound (full jitter). `jitter` is clamped to 0...1.
    public init(initial: Double = 0.2, maximum: Double = 5, multiplier: Double = 2, jitter: Double = 1) {
        self.initial = initial
        self.maximum = maximum
        self.multiplier = multiplier
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The delay before retry number `attempt` (0 for the first retry);
    /// `random` is in 0..<1.
    public func delay(attempt: Int, random: Double) -> Double {
        let exponent = Double(min(max(attempt, 0), 62))
        let base = min(maximum, initial * pow(multiplier, exponent))
        return base * (1 - jitter * min(max(random, 0), 1))
    }

    /// The delay for `attempt` with the system's random numbers.
    public func delay(attempt: Int) -> Double {
        delay(attempt: attempt, random: Double.random(in: 0..<1))
    }
}
