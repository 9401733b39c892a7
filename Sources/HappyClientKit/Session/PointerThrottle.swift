import HappyCore

/// Paces a client's own pointer: at most one `pointer` message per
/// `interval` seconds, the latest position winning, and nothing sent that
/// the server already shows. A value type driven by the session with the
/// time, so that its rules can be checked without a clock or a network.
struct PointerThrottle: Equatable {
    /// What to do after a call.
    enum Step: Equatable {
        /// Send this now (nil hides the pointer).
        case send(PointerPosition?)
        /// Call `due` at this time (monotonic seconds): something waits.
        case wake(at: Double)
        case nothing
    }

    let interval: Double
    /// What the server was last sent: what it shows (nil: no pointer).
    private(set) var shown: PointerPosition?
    /// The latest position not sent yet (`.some(nil)`: hide it).
    private(set) var pending: PointerPosition??
    private var lastSentAt = -Double.infinity
    /// A wake-up is on its way; no other is asked for until it comes.
    private var wakeScheduled = false

    init(interval: Double) {
        self.interval = interval
    }

    /// The client's latest position (nil hides it), while connected.
    mutating func offer(_ position: PointerPosition?, now: Double) -> Step {
        guard position != shown else {
            pending = nil
            return .nothing
        }
        if !wakeScheduled && now >= lastSentAt + interval {
            pending = nil
            return sent(position, now: now)
        }
        pending = .some(position)
        if wakeScheduled { return .nothing }
        wakeScheduled = true
        return .wake(at: lastSentAt + interval)
    }

    /// The wake-up asked for by `offer`: the pending position, if any.
    mutating func due(now: Double) -> Step {
        wakeScheduled = false
        guard case .some(let position) = pending else { return .nothing }
        pending = nil
        return position == shown ? .nothing : sent(position, now: now)
    }

    /// While not connected: the position is kept for the next connection.
    mutating func hold(_ position: PointerPosition?) {
        pending = position == shown ? nil : .some(position)
    }

    /// A new connection: the server shows no pointer of this client, so the
    /// latest visible position is sent again.
    mutating func connected(now: Double) -> Step {
        let wanted: PointerPosition?
        if case .some(let position) = pending { wanted = position } else { wanted = shown }
        shown = nil
        pending = nil
        lastSentAt = -Double.infinity
        return offer(wanted, now: now)
    }

    private mutating func sent(_ position: PointerPosition?, now: Double) -> Step {
        shown = position
        lastSentAt = now
        return .send(position)
    }
}
