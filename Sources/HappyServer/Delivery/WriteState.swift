import HappyCore

/// A WebSocket connection's write path: the messages for it alone, its
/// position in its room's broadcast log, whether it waits for a write, and
/// how its close is going. Owned by `Broadcaster`, the one holder of its
/// `Key`; the sweep and the intake only read it.
struct WriteState {
    /// How the connection is going away, once decided.
    struct CloseRequest: Equatable {
        var code: WebSocketCloseCode
        var reason: String
        /// Send what is queued first (graceful shutdown).
        var afterDrain = false
        /// The peer is not read again: its close frame is not waited for (a flooder).
        var stopReading = false
    }

    /// How far the close handshake went. Once the server decides to close,
    /// the peer's close frame changes nothing until the server's own is out
    /// (then it is the answer that ends the connection).
    enum Closing: Equatable {
        /// Nobody closes yet.
        case open
        /// The peer's close frame came first: lws answers it, and only the
        /// transport writes from now on.
        case peerClosing
        /// The server decided to close: its close frame waits for the next
        /// write (after the queue and the pending intents when `afterDrain`).
        case requested(CloseRequest)
        /// The close frame is out; the peer's close frame (or a timeout) ends it.
        case closeFrameWritten(CloseRequest)
    }

    /// Whether the server reads the client, as TCP backpressure on its replies decides.
    enum Reading: Equatable {
        /// Read as messages come; never paused.
        case flowing
        /// Paused until the client's replies drain.
        case paused
        /// Read again after a pause (only the first pause is logged).
        case resumed
    }

    /// Messages for this client alone; the room's broadcasts come from its log.
    private(set) var outbox: Outbox<PrivateMessage>
    /// The position in the room's broadcast log of the next entry to write.
    private(set) var cursor: UInt64 = 0
    /// The client fell behind the log, or the state jumped: one resync next.
    private(set) var needsResync = false
    private(set) var writableRequested = false
    /// Waits in the broadcaster's list of writes due when the current loop turn ends.
    private(set) var writeDeferred = false
    /// A keepalive ping is to be written at the next writable callback.
    private(set) var pingDue = false
    private(set) var closing = Closing.open
    private(set) var reading = Reading.flowing
    /// Resyncs written to this client (the operator API shows them).
    private(set) var resyncs = 0
    /// When writing last made progress (or messages started waiting).
    private(set) var stalledSince: Double

    init(outboxLimit: Int, now: Double) {
        outbox = Outbox(limit: outboxLimit)
        stalledSince = now
    }

    // MARK: waking

    /// True when a writable callback must be asked for (none is on its way).
    mutating func requestWritable(now: Double) -> Bool {
        guard !writableRequested else { return false }
        writableRequested = true
        stalledSince = now
        return true
    }

    /// True when the connection joins the writes due at the end of the turn.
    mutating func deferWrite(now: Double) -> Bool {
        guard !writeDeferred else { return false }
        writeDeferred = true
        stalledSince = now
        return true
    }

    mutating func deferredWriteTaken() {
        writeDeferred = false
    }

    /// A writable callback (or the turn-end write) runs.
    mutating func beginWrite(now: Double) {
        writableRequested = false
        stalledSince = now
    }

    // MARK: queue and log

    mutating func push(_ message: PrivateMessage, bytes: Int, droppable: Bool) -> Outbox<PrivateMessage>.Admission {
        outbox.push(message, bytes: bytes, droppable: droppable)
    }

    mutating func removeFirstMessage() {
        outbox.removeFirst()
    }

    /// Starts reading the room's log at `position` (its end, when joining).
    mutating func startReading(at position: UInt64) {
        cursor = position
    }

    mutating func advanceCursor() {
        cursor += 1
    }

    mutating func requireResync() {
        needsResync = true
    }

    /// A resync went out: everything before `end` is covered.
    mutating func resynced(skippingTo end: UInt64) {
        needsResync = false
        resyncs += 1
        cursor = max(cursor, end)
    }

    // MARK: keepalive

    mutating func pingRequested() { pingDue = true }

    /// A write takes the due ping: true when one is to be written now.
    mutating func takePing() -> Bool {
        defer { pingDue = false }
        return pingDue
    }

    // MARK: reading

    var readingPaused: Bool { reading == .paused }
    /// Reading was paused at least once.
    var hasPausedReading: Bool { reading != .flowing }

    /// True when reading was running and is now paused.
    mutating func pauseReading() -> Bool {
        guard reading != .paused else { return false }
        reading = .paused
        return true
    }

    /// True when reading was paused and now runs again.
    mutating func resumeReading() -> Bool {
        guard reading == .paused else { return false }
        reading = .resumed
        return true
    }

    // MARK: closing

    /// The server's close, once decided (its frame written or not).
    var closeRequest: CloseRequest? {
        switch closing {
        case .requested(let request), .closeFrameWritten(let request): request
        case .open, .peerClosing: nil
        }
    }

    var closeFrameSent: Bool {
        if case .closeFrameWritten = closing { true } else { false }
    }

    /// Records the close; false when one was already decided.
    mutating func requestClose(_ request: CloseRequest) -> Bool {
        switch closing {
        case .open, .peerClosing:
            closing = .requested(request)
            writableRequested = false
            return true
        case .requested, .closeFrameWritten:
            return false
        }
    }

    /// The close frame of the request is out.
    mutating func closeFrameWritten() {
        guard case .requested(let request) = closing else {
            return assertionFailure("a close frame written with no close requested")
        }
        closing = .closeFrameWritten(request)
    }

    /// The peer's close frame arrived. True when it answers the server's own
    /// close frame: the connection ends without echoing it.
    mutating func peerClosing() -> Bool {
        switch closing {
        case .open:
            closing = .peerClosing
            return false
        case .peerClosing, .requested:
            return false
        case .closeFrameWritten:
            return true
        }
    }
}
