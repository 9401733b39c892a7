/// `LWSContextHandle`: an lws context pointer that may cross threads, and
/// `LWSProcess`: process-wide settings every lws program wants.
public import CWebSockets

/// An lws context that other threads may wake. Only `cancelService` is safe
/// off the service thread: it makes the service thread's current (or next)
/// wait return with `LWS_CALLBACK_EVENT_WAIT_CANCELLED`, where it drains what
/// those threads queued for it.
public struct LWSContextHandle: Hashable, @unchecked Sendable {
    /// The lws context (`struct lws_context *`).
    public let pointer: OpaquePointer

    @inlinable
    public init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Wakes the service thread; callable from any thread.
    @inlinable
    public func cancelService() {
        lws_cancel_service(pointer)
    }
}

/// Process-wide settings for a program serving sockets through lws.
public enum LWSProcess {
    /// A peer that hangs up must fail a write, not kill the process.
    public static func ignoreBrokenPipeSignal() {
        happy_ignore_sigpipe()
    }

    /// Sets the soft descriptor limit to `wanted`, or to the hard limit when
    /// that is lower; returns the limit in force (negative when it cannot be
    /// read). lws sizes its descriptor tables by this limit when a context is
    /// created, and the Debian build checks the whole table each time a
    /// connection closes: a server asks for what it needs, not for the most
    /// the system allows (a million in many containers).
    @discardableResult
    public static func setDescriptorLimit(_ wanted: Int) -> Int {
        Int(happy_set_fd_limit(wanted))
    }

    /// Raises the soft descriptor limit to the hard limit; returns the new
    /// soft limit (negative when it cannot be read).
    @discardableResult
    public static func raiseDescriptorLimit() -> Int {
        setDescriptorLimit(Int.max)
    }

    /// Hands freed heap memory back to the kernel (after a burst of connections).
    public static func releaseFreeMemory() {
        happy_release_free_memory()
    }

    /// Large buffers (a frame's drawing surface: 16 MB at 2048²) get memory
    /// of their own that goes back to the system when freed, instead of
    /// staying in the heap after a burst of renders.
    public static func mapLargeAllocations(from bytes: Int = 1 << 20) {
        happy_map_allocations_from(Int32(bytes))
    }
}

/// Which lws log lines reach standard error.
public struct LWSLogLevel: OptionSet, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let errors = LWSLogLevel(rawValue: Int32(LLL_ERR))
    public static let warnings = LWSLogLevel(rawValue: Int32(LLL_WARN))
    public static let notices = LWSLogLevel(rawValue: Int32(LLL_NOTICE))

    /// Applies to every lws context of the process.
    public func apply() {
        lws_set_log_level(rawValue, nil)
    }
}
