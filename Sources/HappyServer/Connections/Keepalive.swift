/// Keepalive and slow-reader decisions for one connection, as a value
/// owned by `ConnectionRegistry`: the sweep feeds it the time and what the
/// write path knows, and acts on the action it returns (a ping is written
/// by the write path). No I/O, no clock of its own.
struct Keepalive {
    struct Policy: Equatable {
        /// Silence after which the server pings.
        var pingInterval: Double
        /// Time a ping has to be answered.
        var pingTimeout: Double
        /// Time a client may leave queued messages unread.
        var writeTimeout: Double
    }

    enum Action: Equatable {
        case none
        /// Write a ping now.
        case sendPing
        /// The ping went unanswered: drop the connection.
        case dropUnresponsive
        /// The client stopped reading what is queued for it: drop it.
        case dropSlowReader
    }

    private(set) var lastReceiveAt: Double
    /// When the unanswered ping was sent, if one is out.
    private(set) var pingSentAt: Double?

    init(now: Double) {
        lastReceiveAt = now
    }

    /// Anything from the peer (a message or a pong) shows it is alive.
    mutating func received(at now: Double) {
        lastReceiveAt = now
        pingSentAt = nil
    }

    /// One sweep. `readingPaused`: the server is not reading the client (its
    /// pongs wait unread behind its messages, so no ping timeout applies;
    /// the write timeout still does). `caughtUp`: nothing is queued for it.
    /// `stalledSince`: when writing to it last made progress.
    mutating func sweep(now: Double, policy: Policy, readingPaused: Bool, caughtUp: Bool,
                        stalledSince: Double) -> Action {
        var action = Action.none
        if readingPaused {
            pingSentAt = nil
        } else if let sentAt = pingSentAt {
            if now - sentAt > policy.pingTimeout { return .dropUnresponsive }
        } else if now - lastReceiveAt >= policy.pingInterval {
            pingSentAt = now
            action = .sendPing
        }
        if !caughtUp && now - stalledSince > policy.writeTimeout { return .dropSlowReader }
        return action
    }
}
