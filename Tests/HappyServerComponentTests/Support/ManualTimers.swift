import HappyCore
import HappyLWS
@testable import HappyServer

/// The server's timers on a manual clock: armed as lws would arm them, due
/// once the test has moved the clock past their time.
final class ManualTimers: ServerTimerSource {
    private let time: ManualTimeSource
    /// When each armed timer is due (monotonic seconds).
    private(set) var dueTimes: [ServerTimer: Double] = [:]

    init(time: ManualTimeSource) {
        self.time = time
    }

    func attach(_ context: LWSContextHandle) {}

    func schedule(_ timer: ServerTimer, afterSeconds seconds: Double) {
        dueTimes[timer] = time.monotonicSeconds + seconds
    }

    /// Seconds from now until `timer` is due; nil when it is not armed.
    func delay(of timer: ServerTimer) -> Double? {
        dueTimes[timer].map { $0 - time.monotonicSeconds }
    }

    func takeDue() -> [ServerTimer] {
        let now = time.monotonicSeconds
        let due = ServerTimer.allCases.filter { dueTimes[$0].map { $0 <= now } ?? false }
        for timer in due { dueTimes[timer] = nil }
        return due
    }

    var hasDue: Bool {
        let now = time.monotonicSeconds
        return dueTimes.values.contains { $0 <= now }
    }

    func cancelAll() {
        dueTimes.removeAll()
    }
}
