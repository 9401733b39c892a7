/// The server's timers: one each, re-armed by its owner for the next time
/// it is needed.
enum ServerTimer: CaseIterable, Sendable {
    /// Keepalive, slow readers, idle rooms and streams, rate-limit state.
    case sweep
    /// The frame streams' wave.
    case streams
    /// The live pointers' batches.
    case pointers
    /// Crowd rooms' ticks and presence batches.
    case ticks
    /// The end of a round of dragon votes.
    case votes
    /// The next periodic backup.
    case backups
    /// A restart's second wave of closes: the clients that were not writing.
    case restartWave
}

/// How a component arms its timer. The timer does not call back into the
/// component: the loop collects the timers that are due (`ServerTimerSource`,
/// in Transport/) and runs each owner's work at the end of the turn, where
/// what it queues is written with everything else.
protocol TimerScheduling: AnyObject {
    /// Fires `timer` once, `seconds` from now (replacing an earlier schedule).
    func schedule(_ timer: ServerTimer, afterSeconds seconds: Double)
}
