/// Where a component reads the time, so that tests can drive it by hand.
/// The server passes `SystemTimeSource`; in-process tests a manual one.
public protocol TimeSource: AnyObject {
    /// Seconds on a clock that never goes back (timers, rate limits, timeouts).
    var monotonicSeconds: Double { get }
    /// Milliseconds since 1970 (the wire's `serverTime`, event times).
    var wallMilliseconds: Int64 { get }
}

/// The machine's clocks.
public final class SystemTimeSource: TimeSource, @unchecked Sendable {
    /// The instance the server uses.
    public static let shared = SystemTimeSource()
    /// A source reading the machine's clocks.
    public init() {}
    /// `SystemTime.monotonicSeconds()`.
    public var monotonicSeconds: Double { SystemTime.monotonicSeconds() }
    /// `SystemTime.wallMilliseconds()`.
    public var wallMilliseconds: Int64 { SystemTime.wallMilliseconds() }
}

/// A clock that moves only when told to (tests).
public final class ManualTimeSource: TimeSource, @unchecked Sendable {
    /// The monotonic reading, in seconds; set it, or move it with `advance(by:)`.
    public var monotonicSeconds: Double
    /// The wall-clock reading, in milliseconds since 1970.
    public var wallMilliseconds: Int64

    /// A clock at these readings (by default 1000 s, and 2025-11-29 23:46:40 UTC).
    public init(monotonicSeconds: Double = 1000, wallMilliseconds: Int64 = 1_764_460_000_000) {
        self.monotonicSeconds = monotonicSeconds
        self.wallMilliseconds = wallMilliseconds
    }

    /// Moves both clocks forward by `seconds`.
    public func advance(by seconds: Double) {
        monotonicSeconds += seconds
        wallMilliseconds += Int64((seconds * 1000).rounded())
    }
}
