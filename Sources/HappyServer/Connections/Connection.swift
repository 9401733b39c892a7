import HappyCore

/// One WebSocket client. Owned by the service thread; the transport holds a
/// retained reference until the connection closes.
final class Connection: Attachment {
    enum Kind {
        /// The Happy protocol on `/ws`.
        case happy
        /// The conformance echo endpoint on `/echo`.
        case echo
    }

    /// How the connection is going away, once decided.
    struct CloseRequest {
        var code: WebSocketCloseCode
        var reason: String
        /// Send what is queued first (graceful shutdown).
        var afterDrain = false
    }

    let transport: any ConnectionTransport
    let kind: Kind
    let serial: UInt64
    let peerAddress: String
    /// lws's own framing must be used (an extension such as permessage-deflate
    /// transforms every frame); otherwise pre-framed frames are coalesced.
    let usesExtensions: Bool

    /// Index in the server's connection list, for O(1) removal.
    var listIndex = -1
    var admitted = false
    var participant: Participant
    var role: Role = .player
    var roomName = ""
    /// The room joined or joining; cleared when the connection closes.
    var room: RoomRuntime?
    /// Index in the room's member array, for O(1) removal.
    var memberIndex = -1
    var joined = false
    var resume: (since: UInt64?, epoch: String?) = (nil, nil)
    /// Messages that arrived before the welcome (the room was still loading).
    var early: [[UInt8]] = []

    /// Messages for this client alone; the room's broadcasts come from its log.
    var outbox: Outbox<PrivateMessage>
    /// The position in the room's broadcast log of the next entry to write.
    var cursor: UInt64 = 0
    /// The client fell behind the log, or the state jumped: one resync next.
    var needsResync = false
    var writableRequested = false
    /// Waits in the broadcaster's list of writes due when the current loop turn ends.
    var writeDeferred = false
    /// The peer's close frame arrived: only lws writes from now on.
    var peerIsClosing = false
    /// Intents of this connection still being recorded (their acks are due).
    var pendingIntents = 0
    var closeRequest: CloseRequest?
    /// The close frame is out; the peer's close frame (or a timeout) ends it.
    var closeFrameSent = false
    var isClosed = false
    /// Reading is paused until the client's replies drain (TCP backpressure).
    private(set) var readingPaused = false
    /// Reading was paused at least once (logged the first time only).
    private(set) var hasPausedReading = false

    /// Fragments of a message still being received.
    var partial: [UInt8] = []
    var partialIsBinary = false

    var bucket: TokenBucket
    var flood: FloodMeter
    /// Pointer messages have their own rate (`pointersPerSecond`).
    var pointerBucket: TokenBucket
    /// Pointer batches were skipped (a long queue) since the room's pointer
    /// `goneCount` was this: the next one lists every pointer and what went.
    var pointersSkippedSince: UInt64?
    let openedAt: Double
    var keepalive: Keepalive
    /// When the outbox last made progress (or became non-empty).
    var stalledSince: Double

    /// `idSuffix` keeps ids unique across the nodes of a cluster.
    init(transport: any ConnectionTransport, kind: Kind, serial: UInt64, idSuffix: String = "", peerAddress: String, usesExtensions: Bool,
         limits: HappyConfig.LimitsSection, now: Double) {
        self.transport = transport
        self.kind = kind
        self.serial = serial
        self.peerAddress = peerAddress
        self.usesExtensions = usesExtensions
        participant = Participant(id: "c\(serial)\(idSuffix)", name: "guest-c\(serial)\(idSuffix)")
        // The echo endpoint must hold a whole echoed message (Autobahn sends up to 16 MiB).
        outbox = Outbox(limit: kind == .echo ? 64 * 1024 * 1024 : limits.maxQueuedBytes)
        bucket = TokenBucket(ratePerSecond: limits.intentsPerSecond, burst: limits.intentBurst, now: now)
        flood = FloodMeter(limit: limits.floodLimit)
        pointerBucket = TokenBucket(ratePerSecond: limits.pointersPerSecond,
                                    burst: max(1, Int(limits.pointersPerSecond.rounded(.up))), now: now)
        keepalive = Keepalive(now: now)
        openedAt = now
        stalledSince = now
        super.init(isConnection: true)
    }

    /// Asks lws for a WRITEABLE callback unless one is already on its way.
    /// `now` starts the clock of a client that does not read.
    @inline(__always)
    func requestWritable(now: Double) {
        guard !writableRequested, !isClosed else { return }
        writableRequested = true
        stalledSince = now
        transport.requestWritable()
    }

    /// Nothing left to write: no private message, no broadcast ahead of the cursor.
    var isCaughtUp: Bool {
        guard outbox.isEmpty, !needsResync else { return false }
        guard joined, let room else { return true }
        return cursor >= room.log.end
    }

    /// Closes with `code` at the next chance to write (after the upgrade has
    /// completed, so browsers see the code and reason).
    func close(code: WebSocketCloseCode, reason: String, afterDrain: Bool = false) {
        guard closeRequest == nil else { return }
        closeRequest = CloseRequest(code: code, reason: reason, afterDrain: afterDrain)
        writableRequested = false
        requestWritable(now: stalledSince)
    }

    /// Stops reading the client's messages until `resumeReading`.
    func pauseReading() {
        guard !readingPaused, !isClosed else { return }
        readingPaused = true
        hasPausedReading = true
        transport.pauseReading()
    }

    func resumeReading() {
        guard readingPaused, !isClosed else { return }
        readingPaused = false
        transport.resumeReading()
    }

    /// Drops the connection without a close handshake (dead or stuck peer).
    func kill() {
        guard !isClosed else { return }
        transport.kill()
    }
}
