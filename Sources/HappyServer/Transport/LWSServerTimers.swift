import HappyLWS

/// The timers as the loop sees them: armed by the components, collected when
/// due. Tests use a manual clock's timers instead of lws's.
protocol ServerTimerSource: TimerScheduling {
    /// The loop the timers run on, once it exists; what was armed before is armed then.
    func attach(_ context: LWSContextHandle)
    /// The timers that fired since the last call, each once.
    func takeDue() -> [ServerTimer]
    /// A timer fired and waits for the end of the turn.
    var hasDue: Bool { get }
    /// Before the loop goes.
    func cancelAll()
}

/// The server's timers on its lws context. A timer that fires only marks
/// itself due and wakes the loop; the loop runs its work when the turn ends.
/// Timers armed before the context exists are armed when it is attached.
final class LWSServerTimers: ServerTimerSource {
    private var context: LWSContextHandle?
    private var timers: [ServerTimer: LWSTimer] = [:]
    /// Delays asked for before the context was attached.
    private var early: [ServerTimer: Double] = [:]
    private var due: [ServerTimer] = []

    init() {
        for timer in ServerTimer.allCases {
            timers[timer] = LWSTimer { [weak self] in self?.fired(timer) }
        }
    }

    func attach(_ context: LWSContextHandle) {
        self.context = context
        for (timer, seconds) in early { schedule(timer, afterSeconds: seconds) }
        early.removeAll()
    }

    func schedule(_ timer: ServerTimer, afterSeconds seconds: Double) {
        guard let context else {
            early[timer] = seconds
            return
        }
        timers[timer]?.schedule(on: context, afterSeconds: seconds)
    }

    private func fired(_ timer: ServerTimer) {
        if !due.contains(timer) { due.append(timer) }
        // lws's poll() loop runs due timers before it waits: wake it, so the
        // turn ends now and the timer's work runs without waiting for traffic.
        context?.cancelService()
    }

    func takeDue() -> [ServerTimer] {
        defer { due.removeAll(keepingCapacity: true) }
        return due
    }

    var hasDue: Bool { !due.isEmpty }

    func cancelAll() {
        for timer in timers.values { timer.cancel() }
        context = nil
    }
}
