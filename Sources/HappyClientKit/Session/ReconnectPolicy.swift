/// What a session does when a connection ends, as a value: the rules of
/// PROTOCOL.md sections 2 and 13 and the backoff, with no clock and no I/O.
struct ReconnectPolicy {
    /// What to do next.
    enum Decision: Equatable {
        /// Give up: the session ends with this error.
        case end(SessionError)
        /// Connect again after `delay` seconds; the next retry is number `attempt`.
        case retry(after: Double, attempt: Int)
    }

    /// A restarting server (1012) is rejoined within this many seconds, at random,
    /// so that its clients do not all return in the same instant (section 2).
    static let restartJitter = 0.25

    var reconnects: Bool
    var backoff: Backoff

    /// The decision for a connection that ended with `close` (nil: no close
    /// frame, or it could not be made) and `error`. `everWelcomed`: some
    /// connection of the session was welcomed; `attempt`: the retry this one
    /// would be; `random` is in 0..<1.
    func decide(close: CloseReason?, error: SessionError, everWelcomed: Bool, attempt: Int,
                random: Double) -> Decision {
        guard reconnects, everWelcomed else { return .end(error) }
        if let close, close.isFinal { return .end(error) }
        if close?.isServiceRestart == true {
            // At once, no backoff: the server taking over already accepts connections.
            return .retry(after: Self.restartJitter * min(max(random, 0), 0.999_999), attempt: attempt)
        }
        return .retry(after: backoff.delay(attempt: attempt, random: random), attempt: attempt + 1)
    }
}
