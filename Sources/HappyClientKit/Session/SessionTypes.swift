import Foundation
import HappyCore

/// The state of a session's connection, as its delegate is told.
public enum ConnectionState: Equatable, Sendable {
    /// Opening a connection; `attempt` is 0 for the first one.
    case connecting(attempt: Int)
    /// Welcomed in the room.
    case connected
    /// The connection dropped; the next attempt starts in `retryIn` seconds.
    case waiting(retryIn: Double, reason: String)
    /// Disconnected on purpose (`suspend()`: the app went to the background);
    /// `resume()` connects again and resumes where the room was left.
    case suspended
    /// The session is over: stopped, refused, or dropped without reconnecting.
    case ended(SessionError)
}

extension ConnectionState: CustomStringConvertible {
    /// `connecting`, `connected`, `reconnecting in 1.5 s (connection lost)`, `suspended`, `ended: …`.
    public var description: String {
        switch self {
        case .connecting(let attempt): return attempt == 0 ? "connecting" : "connecting (attempt \(attempt + 1))"
        case .connected: return "connected"
        case .waiting(let seconds, let reason):
            return "reconnecting in \(HappySession.seconds((seconds * 10).rounded() / 10)) (\(reason))"
        case .suspended: return "suspended"
        case .ended(let error): return "ended: \(error)"
        }
    }
}

/// How a welcome relates to what the session saw before.
public enum ResumeOutcome: Equatable, Sendable {
    /// The session's first welcome.
    case fresh
    /// Resumed: the `missed` events after the last one seen follow, in order.
    case resumed(missed: UInt64)
    /// Not resumed (history too short): events after `lastSeen` up to `seq` are lost.
    case gap(lastSeen: UInt64, seq: UInt64)
    /// The room's history was lost (a new epoch): numbering starts afresh.
    case newEpoch
}

/// A join or leave, as read from a `presence` message.
public enum PresenceChange: Equatable, Sendable {
    /// Someone joined the room.
    case joined(Participant)
    /// Someone left the room.
    case left(Participant)
    /// A crowd room's joins and leaves of one tick (section 12).
    case batch(PresenceBatch)
}

/// What an intent came to: the ack's result and seq, and the scene as it
/// stood after it (the state of the event it caused, or the current one).
public struct IntentOutcome: Equatable, Sendable {
    /// `applied`, `clamped` (applied within range), `unchanged` (nothing to
    /// change), `blocked` (the dragon at the edge) or `counted` (a dragon vote).
    public var result: AckResult
    /// The event it caused (for `unchanged` and `blocked`, the room's seq then; 0 for a tied vote).
    public var seq: UInt64
    /// The scene after the event (or, when there was none, the current one).
    public var state: Scene

    /// Creates an outcome of `result` at `seq`, with the scene `state`.
    public init(result: AckResult, seq: UInt64, state: Scene) {
        self.result = result
        self.seq = seq
        self.state = state
    }
}

/// One application-level ping: local send and receive times and the
/// server's clock, in wall-clock milliseconds.
public struct PingSample: Equatable, Sendable {
    /// When the ping was sent, in milliseconds since 1970 (local clock).
    public var sentAt: Double
    /// When the pong arrived, in milliseconds since 1970 (local clock).
    public var receivedAt: Double
    /// The server's clock in the pong, in milliseconds since 1970.
    public var serverTime: Int64

    /// The time from ping to pong, in milliseconds, on the monotonic clock
    /// (a change of the wall clock meanwhile does not skew it).
    public var roundTripMilliseconds: Double

    /// Creates a sample from its three times, in milliseconds since 1970, and the round
    /// trip as a monotonic clock measured it (by default `receivedAt - sentAt`).
    public init(sentAt: Double, receivedAt: Double, serverTime: Int64, roundTripMilliseconds: Double? = nil) {
        self.sentAt = sentAt
        self.receivedAt = receivedAt
        self.serverTime = serverTime
        self.roundTripMilliseconds = roundTripMilliseconds ?? receivedAt - sentAt
    }

    /// The wall clock in milliseconds, with sub-millisecond precision.
    public static func now() -> Double {
        Date().timeIntervalSince1970 * 1000
    }

    /// Server clock minus local clock, assuming the pong took half the trip.
    public var clockOffsetMilliseconds: Double { Double(serverTime) - (sentAt + receivedAt) / 2 }
}

/// The scene geometry from a welcome's `scene` object.
extension SceneGeometry {
    /// Reads the geometry from a welcome's `scene` object; nil when it is missing or incomplete.
    public init?(welcome json: JSONValue) {
        guard let scene = json["scene"], let width = scene["width"]?.doubleValue,
              let height = scene["height"]?.doubleValue, let size = scene["dragonSize"]?.doubleValue,
              let step = scene["step"]?.doubleValue else { return nil }
        self.init(width: width, height: height, dragonSize: size, step: step)
    }
}

/// The limits from a welcome's `limits` object.
extension WelcomeLimits {
    /// Reads the limits from a welcome's `limits` object; nil when it is missing, incomplete,
    /// not finite or out of range.
    public init?(welcome json: JSONValue) {
        guard let limits = json["limits"], let rate = limits["intentsPerSecond"]?.doubleValue,
              let burst = limits["intentBurst"]?.doubleValue, let bytes = limits["maxMessageBytes"]?.doubleValue,
              rate.isFinite, let burst = Int(exactly: burst.rounded(.towardZero)),
              let bytes = Int(exactly: bytes.rounded(.towardZero)) else { return nil }
        self.init(intentsPerSecond: rate, intentBurst: burst, maxMessageBytes: bytes)
    }
}
