#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Time as the server uses it: wall-clock milliseconds for the wire, and a
/// monotonic clock in seconds for timers and rate limits.
public enum SystemTime {
    /// Milliseconds since 1970 (`CLOCK_REALTIME`); jumps when the system clock is set.
    public static func wallMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Seconds on `CLOCK_MONOTONIC`: never goes back; its zero is arbitrary.
    public static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Random identifiers.
public enum Identifiers {
    /// A new epoch: 12 random hex digits.
    public static func newEpoch() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() & 0xFFFF_FFFF_FFFF
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 12 - hex.count) + hex
    }

    /// A webhook delivery's id: 24 random hex digits, unique in practice.
    public static func newDeliveryID() -> String {
        var generator = SystemRandomNumberGenerator()
        return [generator.next() as UInt64, generator.next() as UInt64].map { value in
            let hex = String(value & 0xFFFF_FFFF_FFFF, radix: 16)
            return String(repeating: "0", count: 12 - hex.count) + hex
        }.joined()
    }
}

/// The shared heart-wave clock of PROTOCOL.md section 8.
public enum WaveClock {
    /// The wave step (0...99) at a server time in milliseconds.
    public static func step(atMilliseconds ms: Int64) -> Int {
        Int((ms / 20) % 100)
    }

    /// The phase `t` in radians for a step.
    public static func phase(step: Int) -> Double {
        Double(step) * Double.pi / 50
    }
}
