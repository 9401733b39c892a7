import HappyLWS

/// The server's timers on its lws context: the once-a-second sweep, the
/// frame streams' wave, and the live pointers' batches.
final class ServerTimers {
    private let context: LWSContextHandle
    private let sweep: LWSTimer
    private let streams: LWSTimer
    private let pointers: LWSTimer

    /// `afterEach` runs after every action: lws's poll() loop runs due timers
    /// before it waits, so what an action queues is written then, not after
    /// the wait.
    init(context: LWSContextHandle, afterEach: @escaping () -> Void, sweep: @escaping () -> Void,
         streams: @escaping () -> Void, pointers: @escaping () -> Void) {
        self.context = context
        self.sweep = LWSTimer { sweep(); afterEach() }
        self.streams = LWSTimer { streams(); afterEach() }
        self.pointers = LWSTimer { pointers(); afterEach() }
    }

    func scheduleSweep(afterSeconds seconds: Double) { sweep.schedule(on: context, afterSeconds: seconds) }
    func scheduleStreams(afterSeconds seconds: Double) { streams.schedule(on: context, afterSeconds: seconds) }
    func schedulePointers(afterSeconds seconds: Double) { pointers.schedule(on: context, afterSeconds: seconds) }

    /// Before the context goes.
    func cancelAll() {
        sweep.cancel()
        streams.cancel()
        pointers.cancel()
    }
}
