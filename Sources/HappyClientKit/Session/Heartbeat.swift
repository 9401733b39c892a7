/// How a session makes sure its connection is alive: after `interval` quiet
/// seconds it sends a WebSocket ping, and when nothing at all arrives within
/// `timeout` seconds of it the connection counts as dead. The session then
/// drops it and reconnects, so `status` never shows `.connected` for a
/// connection that silently died (a phone that changed networks, a NAT that
/// forgot the flow).
public struct Heartbeat: Equatable, Sendable {
    /// Quiet seconds before a ping.
    public var interval: Double
    /// Seconds to wait for anything after the ping before giving up on the connection.
    public var timeout: Double

    /// A heartbeat pinging after `interval` quiet seconds and waiting `timeout`
    /// seconds for an answer (by default 15 and 10: a dead connection shows
    /// within 25 s).
    public init(interval: Double = 15, timeout: Double = 10) {
        self.interval = max(interval, 0.01)
        self.timeout = max(timeout, 0.01)
    }
}

/// The heartbeat of one connection as a value: told when something arrives
/// and asked at each check what to do. It reads no clock; times are passed in.
struct HeartbeatMonitor: Equatable {
    /// What a check asks for.
    enum Step: Equatable {
        /// Send a ping now and check again at `checkAt`.
        case ping(checkAt: Double)
        /// Nothing to do before `until`.
        case wait(until: Double)
        /// The ping went unanswered: the connection is dead.
        case timedOut
    }

    let heartbeat: Heartbeat
    private(set) var lastHeard: Double
    private(set) var pingSentAt: Double?

    /// A connection that opened at `now`.
    init(_ heartbeat: Heartbeat, openedAt now: Double) {
        self.heartbeat = heartbeat
        lastHeard = now
    }

    /// Something arrived (a message or a pong): the connection is alive.
    mutating func heard(at now: Double) {
        lastHeard = max(lastHeard, now)
        pingSentAt = nil
    }

    /// What to do at `now`.
    mutating func check(at now: Double) -> Step {
        if let sent = pingSentAt {
            return now >= sent + heartbeat.timeout ? .timedOut : .wait(until: sent + heartbeat.timeout)
        }
        let due = lastHeard + heartbeat.interval
        guard now >= due else { return .wait(until: due) }
        pingSentAt = now
        return .ping(checkAt: now + heartbeat.timeout)
    }
}
