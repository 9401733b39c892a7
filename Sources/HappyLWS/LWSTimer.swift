/// `LWSTimer`: a one-shot timer on an lws context's event loop (an
/// `lws_sorted_usec_list_t`), running a Swift closure on the service thread.
/// lws calls back with only the list entry's address; the entry sits first
/// in a `happy_timer` whose `owner` is the timer object.
internal import CWebSockets

/// A timer that runs `action` on the service thread when due. Schedule it
/// again from `action` for a periodic one. Cancel it (or let it fire)
/// before its context is destroyed: lws links the entry into the context's
/// lists, which go with the context.
public final class LWSTimer {
    private let entry: UnsafeMutablePointer<happy_timer>
    private let action: () -> Void
    /// Scheduled and not yet fired or cancelled.
    public private(set) var isScheduled = false

    /// `action` may capture its owner; capture it unowned or weak when the
    /// owner keeps the timer.
    public init(_ action: @escaping () -> Void) {
        self.action = action
        entry = .allocate(capacity: 1)
        entry.initialize(to: happy_timer())
        entry.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        cancel()
        entry.deallocate()
    }

    /// Runs `action` once, `microseconds` from now (replacing an earlier schedule).
    public func schedule(on context: LWSContextHandle, afterMicroseconds microseconds: Int64) {
        isScheduled = true
        lws_sul_schedule(context.pointer, 0, &entry.pointee.sul, lwsTimerFired, lws_usec_t(microseconds))
        lwsTimerDue(context.pointer, inSeconds: Double(microseconds) / Double(happy_us_per_sec))
    }

    /// Runs `action` once, `seconds` from now (replacing an earlier schedule).
    public func schedule(on context: LWSContextHandle, afterSeconds seconds: Double) {
        schedule(on: context, afterMicroseconds: Int64(seconds * Double(happy_us_per_sec)))
    }

    /// Unschedules the timer, if it is scheduled.
    public func cancel() {
        guard isScheduled else { return }
        isScheduled = false
        lws_sul_cancel(&entry.pointee.sul)
    }

    fileprivate func fire() {
        isScheduled = false
        action()
    }
}

/// The C callback of every `LWSTimer` (lws has unlinked the entry already).
private func lwsTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let owner = happy_timer_owner(sul) else { return }
    Unmanaged<LWSTimer>.fromOpaque(owner)._withUnsafeGuaranteedRef { $0.fire() }
}
