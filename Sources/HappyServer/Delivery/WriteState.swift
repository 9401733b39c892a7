import HappyCore

/// A WebSocket connection's write path: the messages for it alone, its
/// position in its room's broadcast log, whether it waits for a write, and
/// how its close is going. Owned by `Broadcaster`; the sweep and the intake
/// only read it.
struct WriteState {
    /// How the connection is going away, once decided.
    struct CloseRequest {
        var code: WebSocketCloseCode
        var reason: String
        /// Send what is queued first (graceful shutdown).
        var afterDrain = false
        /// The peer is not read again: its close frame is not waited for (a flooder).
        var stopReading = false
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
    /// The peer's close frame arrived: only the transport writes from now on.
    private(set) var peerIsClosing = false
    private(set) var closeRequest: CloseRequest?
    /// The close frame is out; the peer's close frame (or a timeout) ends it.
    private(set) var closeFrameSent = false
    /// Reading is paused until the client's replies drain (TCP backpressure).
    private(set) var readingPaused = false
    /// Reading was paused at least once (logged the first time only).
    private(set) var hasPausedReading = false
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
    mutating func pingWritten() { pingDue = false }

    // MARK: reading

    /// True when reading was running and is now paused.
    mutating func pauseReading() -> Bool {
        guard !readingPaused else { return false }
        readingPaused = true
        hasPausedReading = true
        return true
    }

    /// True when reading was paused and now runs again.
    mutating func resumeReading() -> Bool {
        guard readingPaused else { return false }
        readingPaused = false
        return true
    }

    // MARK: closing

    /// Records the close; false when one was already decided.
    mutating func requestClose(_ request: CloseRequest) -> Bool {
        guard closeRequest == nil else { return false }
        closeRequest = request
        writableRequested = false
        return true
    }

    mutating func closeFrameWritten() { closeFrameSent = true }
    mutating func peerClosing() { peerIsClosing = true }
}
