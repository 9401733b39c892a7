/// `LWSTimer`: a one-shot timer on an lws context's event loop, running a
/// Swift closure on the service thread. On lws's own poll() loop it is an
/// lws timer (an `lws_sorted_usec_list_t`: lws calls back with only the list
/// entry's address; the entry sits first in a `happy_timer` whose `owner` is
/// the timer object). On the epoll loop it is a libev timer of its own
/// (`happy_ev_timer`): lws runs its timers from an idle watcher, which a
/// socket that stays readable starves.
internal import CWebSockets

/// A timer that runs `action` on the service thread when due. Schedule it
/// again from `action` for a periodic one. Cancel it (or let it fire)
/// before its context is destroyed: lws links the entry into the context's
/// lists, which go with the context.
public final class LWSTimer {
    private let entry: UnsafeMutablePointer<happy_timer>
    private let loopEntry: UnsafeMutablePointer<happy_ev_timer>
    private let action: () -> Void
    /// Scheduled and not yet fired or cancelled.
    public private(set) var isScheduled = false
    /// The epoll loop it is scheduled on; nil while scheduled as an lws timer.
    private var scheduledLoop: UnsafeMutableRawPointer?

    /// `action` may capture its owner; capture it unowned or weak when the
    /// owner keeps the timer.
    public init(_ action: @escaping () -> Void) {
        self.action = action
        entry = .allocate(capacity: 1)
        entry.initialize(to: happy_timer())
        loopEntry = .allocate(capacity: 1)
        loopEntry.initialize(to: happy_ev_timer())
        let owner = Unmanaged.passUnretained(self).toOpaque()
        entry.pointee.owner = owner
        happy_ev_timer_init(loopEntry, owner, lwsLoopTimerFired)
    }

    deinit {
        cancel()
        entry.deallocate()
        loopEntry.deallocate()
    }

    /// Runs `action` once, `microseconds` from now (replacing an earlier schedule).
    public func schedule(on context: LWSContextHandle, afterMicroseconds microseconds: Int64) {
        cancel()
        isScheduled = true
        if let loop = lwsEventLoop(context.pointer) {
            scheduledLoop = loop
            happy_ev_timer_schedule(loop, loopEntry, Double(microseconds) / Double(happy_us_per_sec))
            return
        }
        lws_sul_schedule(context.pointer, 0, &entry.pointee.sul, lwsTimerFired, lws_usec_t(microseconds))
    }

    /// Runs `action` once, `seconds` from now (replacing an earlier schedule).
    public func schedule(on context: LWSContextHandle, afterSeconds seconds: Double) {
        schedule(on: context, afterMicroseconds: Int64(seconds * Double(happy_us_per_sec)))
    }

    /// Unschedules the timer, if it is scheduled.
    public func cancel() {
        guard isScheduled else { return }
        isScheduled = false
        if let loop = scheduledLoop {
            scheduledLoop = nil
            happy_ev_timer_cancel(loop, loopEntry)
        } else {
            lws_sul_cancel(&entry.pointee.sul)
        }
    }

    fileprivate func fire() {
        isScheduled = false
        scheduledLoop = nil
        action()
    }
}

/// The C callback of every `LWSTimer` (lws has unlinked the entry already).
private func lwsTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let owner = happy_timer_owner(sul) else { return }
    Unmanaged<LWSTimer>.fromOpaque(owner)._withUnsafeGuaranteedRef { $0.fire() }
}

/// The C callback of every `LWSTimer` on the epoll loop (libev has stopped it already).
private func lwsLoopTimerFired(_ owner: UnsafeMutableRawPointer?) {
    guard let owner else { return }
    Unmanaged<LWSTimer>.fromOpaque(owner)._withUnsafeGuaranteedRef { $0.fire() }
}
