import Glibc

/// Every server object belongs to the lws service thread, and release
/// builds run without dynamic exclusivity checks: debug builds check that
/// the entry points (lws callbacks, timers, inbox) run on that thread.
enum ServiceThread {
    nonisolated(unsafe) private static var owner: pthread_t?

    /// Called by `run()` on the thread that will serve.
    static func claim() {
        owner = pthread_self()
    }

    /// Traps in debug builds when called off the service thread (once it is claimed).
    @inline(__always)
    static func assertCurrent(_ entry: StaticString = #function) {
        assert(owner.map { pthread_equal($0, pthread_self()) != 0 } ?? true,
               "\(entry) ran off the service thread")
    }
}
