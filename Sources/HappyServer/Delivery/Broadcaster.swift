import HappyCore

/// The WebSocket write path. A room's broadcasts are appended once to its
/// log and every member writes them from its own cursor; private messages
/// wait in the member's outbox for their place among them. Pre-framed
/// frames are coalesced into one socket write (or sent straight from their
/// buffer when alone). A client with nothing waiting in the transport is
/// written at the end of the event-loop turn that queued its messages,
/// without asking for a writable callback: with one message in flight per
/// client that wake-up costs more than the write. Everyone else (and anyone
/// with a close or ping due) is written in its writable callback.
final class Broadcaster {
    /// Largest number of bytes coalesced into one socket write.
    static let writeBatchBytes = 32 * 1024
    /// How long a close the server started waits for the peer's close frame.
    static let closeAckSeconds: Int32 = 2
    /// The payload of keepalive pings, echoed in the peer's pong.
    static let pingPayload = Array("happy".utf8)

    let metrics: Metrics
    let clock: ServiceClock
    let logger: Logger
    private let presenceBroadcastMax: Int
    /// One write's worth of bytes, with the transport's headroom in front.
    let scratch: UnsafeMutablePointer<UInt8>

    init(metrics: Metrics, clock: ServiceClock, logger: Logger, presenceBroadcastMax: Int) {
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
        self.presenceBroadcastMax = presenceBroadcastMax
        scratch = .allocate(capacity: OutboundFrame.headroom + Self.writeBatchBytes)
    }

    deinit {
        scratch.deallocate()
    }

    // MARK: writing at the end of a loop turn

    /// Nesting depth of `writingAfter`; outside it every client is woken by lws.
    private var deferralDepth = 0
    /// Clients to write when the outermost `writingAfter` ends.
    private var deferred: [Connection] = []
    private var flushing: [Connection] = []

    /// Runs `body` (an event-loop turn), then writes what it queued for
    /// clients whose transport holds nothing back, coalesced per client.
    @inline(__always)
    func writingAfter<R>(_ body: () -> R) -> R {
        deferralDepth += 1
        let result = body()
        deferralDepth -= 1
        if deferralDepth == 0 && !deferred.isEmpty { writeDeferred() }
        return result
    }

    /// Writes what was deferred so far, inside the turn: for timers, which
    /// lws's poll() loop runs before it waits, so the turn's end may be far off.
    func writeDeferredNow() {
        if !deferred.isEmpty { writeDeferred() }
    }

    /// Queued messages are due for `connection`: written when the current
    /// turn ends if it can be, otherwise in a writable callback.
    @inline(__always)
    private func wake(_ connection: Connection, now: Double) {
        guard deferralDepth > 0, !connection.writableRequested, connection.kind == .happy,
              !connection.usesExtensions else {
            return connection.requestWritable(now: now)
        }
        guard !connection.writeDeferred else { return }
        connection.writeDeferred = true
        connection.stalledSince = now
        deferred.append(connection)
    }

    private func writeDeferred() {
        swap(&deferred, &flushing)
        let now = clock.now()
        for connection in flushing {
            connection.writeDeferred = false
            guard !connection.isClosed, !connection.writableRequested else { continue }
            if connection.closeRequest == nil, !connection.closeFrameSent, !connection.peerIsClosing,
               !connection.keepalive.pingDue, !connection.transport.hasBufferedOutput {
                if !writeable(connection) { connection.kill() }
            } else {
                connection.requestWritable(now: now)
            }
        }
        flushing.removeAll(keepingCapacity: true)
    }

    // MARK: queueing

    /// Appends `frame` to the room's log and wakes its members.
    func broadcast(_ frame: OutboundFrame, in runtime: RoomRuntime) {
        let dropped = runtime.log.droppedDeliveries
        runtime.log.append(frame, bytes: frame.queuedSize, readers: runtime.members.count)
        metrics.outboxDrops += runtime.log.droppedDeliveries - dropped
        let now = clock.now()
        for member in runtime.members { wake(member, now: now) }
    }

    func sendError(_ error: WireError, to connection: Connection) {
        send(OutboundFrame(encoded: ServerMessageEncoder.error(error, headroom: OutboundFrame.headroom)), to: connection)
    }

    /// Queues a message for `connection` alone, after what the room has
    /// broadcast so far (or after position `after`). Replies are never
    /// dropped: while they pass `maxQueuedBytes` the client is not read.
    func send(_ frame: OutboundFrame, to connection: Connection, after: UInt64? = nil, droppable: Bool = false) {
        guard !connection.isClosed, !connection.closeFrameSent else { return }
        // A connection closing gracefully still gets what is recorded before it goes.
        if let close = connection.closeRequest, !close.afterDrain { return }
        let position = after ?? connection.room?.log.end ?? 0
        switch connection.outbox.push(PrivateMessage(after: position, frame: frame), bytes: frame.queuedSize,
                                      droppable: droppable) {
        case .queued:
            wake(connection, now: clock.now())
        case .overflowed(let dropped):
            metrics.outboxDrops += dropped
            metrics.resyncs += 1
            wake(connection, now: clock.now())
        case .coveredByResync:
            metrics.outboxDrops += 1
        }
        if connection.outbox.isOverLimit { pauseReading(connection) }
    }

    /// Every local client of the room gets one resync in place of its queued events.
    func resyncMembers(of runtime: RoomRuntime) {
        for member in runtime.members {
            member.needsResync = true
            member.requestWritable(now: clock.now())
        }
    }

    /// TCP backpressure for a client that sends faster than it reads its replies.
    /// Each pause is counted; only a client's first is logged.
    private func pauseReading(_ connection: Connection) {
        guard !connection.readingPaused, !connection.isClosed else { return }
        if !connection.hasPausedReading {
            logger.info("reading paused until the client reads its replies",
                        ["id": connection.participant.id, "queued": "\(connection.outbox.queuedBytes)"])
        }
        connection.pauseReading()
        metrics.readPauses += 1
    }

    // MARK: writing

    /// The writable callback of a connection (or its write at the end of the
    /// loop turn that queued its messages); false when it failed and must close.
    func writeable(_ connection: Connection) -> Bool {
        connection.writableRequested = false
        guard !connection.closeFrameSent else { return true }
        connection.stalledSince = clock.now()
        if let close = connection.closeRequest,
           !close.afterDrain || (connection.isCaughtUp && connection.pendingIntents == 0) {
            return sendCloseFrame(close, to: connection)
        }
        if connection.keepalive.pingDue {
            connection.keepalive.pingWritten()
            // lws 4.1 reports no pong for an empty ping, so the ping carries a payload.
            let payload = Self.pingPayload
            (scratch + OutboundFrame.headroom).update(from: payload, count: payload.count)
            guard connection.transport.write(scratch + OutboundFrame.headroom, count: payload.count, as: .ping) else {
                return false
            }
        } else if !writeQueued(connection) {
            return false
        }
        if connection.readingPaused && connection.outbox.queuedBytes <= connection.outbox.limit / 2 {
            connection.resumeReading()
        }
        if !connection.isCaughtUp || connection.closeRequest != nil {
            connection.requestWritable(now: connection.stalledSince)
        }
        return true
    }

    /// Sends the close frame, then keeps reading (and ignoring messages)
    /// until the peer's close frame or `closeAckSeconds`: closing the socket
    /// while the peer still sends would reset it, losing the close frame.
    private func sendCloseFrame(_ close: Connection.CloseRequest, to connection: Connection) -> Bool {
        // Written pre-framed, like every frame here: the transport keeps its
        // own close for the connections it ends itself. Control frames are
        // never compressed, so this holds with permessage-deflate too.
        let frame = CloseFrame.frame(code: close.code, reason: close.reason)
        let start = scratch + OutboundFrame.headroom
        start.update(from: frame, count: frame.count)
        guard connection.transport.write(start, count: frame.count, as: .preframed) else { return false }
        connection.closeFrameSent = true
        connection.resumeReading()
        connection.transport.awaitCloseAcknowledgement(seconds: Self.closeAckSeconds)
        return true
    }

    /// The next frame this client has to write, taken off its queue or its
    /// room's log; nil when it is caught up or the frame is longer than `space`.
    private func nextFrame(of connection: Connection, space: Int = .max) -> OutboundFrame? {
        if let message = connection.outbox.firstPayload, message.after <= connection.cursor {
            guard message.frame.frameLength <= space else { return nil }
            connection.outbox.removeFirst()
            return message.frame
        }
        if connection.outbox.resyncPending, case .resync? = connection.outbox.first {
            guard let frame = resyncFrame(connection), frame.frameLength <= space else { return nil }
            connection.outbox.removeFirst()
            skipToEnd(connection)
            return frame
        }
        guard connection.joined, let runtime = connection.room else { return nil }
        let behind = connection.cursor < runtime.log.end
        // The log holds at most maxQueuedBytes: a client it no longer holds
        // is further behind than that, and is resynchronised.
        if connection.needsResync || (behind && !runtime.log.holds(connection.cursor)) {
            guard let frame = resyncFrame(connection), frame.frameLength <= space else { return nil }
            skipToEnd(connection)
            return frame
        }
        guard behind else { return nil }
        let frame = runtime.log.element(at: connection.cursor)
        guard frame.frameLength <= space else { return nil }
        runtime.log.passed(connection.cursor)
        connection.cursor += 1
        return frame
    }

    /// A resync from the latest recorded state, presence included.
    private func resyncFrame(_ connection: Connection) -> OutboundFrame? {
        guard let runtime = connection.room, let room = runtime.room else { return nil }
        let presence = runtime.presenceList(limit: presenceBroadcastMax)
        return OutboundFrame(encoded: ServerMessageEncoder.resync(
            seq: room.committed.seq, state: room.committed.scene, presence: presence,
            presenceCount: runtime.presenceCount, epoch: room.epoch, headroom: OutboundFrame.headroom))
    }

    /// The resync covers everything broadcast so far: skip it.
    private func skipToEnd(_ connection: Connection) {
        connection.needsResync = false
        metrics.resyncs += 1
        guard let runtime = connection.room, connection.cursor < runtime.log.end else { return }
        // Entries the log already gave up for this client were counted then.
        metrics.outboxDrops += Int(runtime.log.end - max(connection.cursor, runtime.log.start))
        runtime.log.abandon(from: connection.cursor)
        connection.cursor = runtime.log.end
    }

    /// Writes what is queued: one frame through the transport's framing
    /// when an extension transforms frames; otherwise as many pre-framed
    /// frames as fit in one socket write, copied together (or a lone one
    /// straight from its buffer). The transport keeps what the socket does
    /// not take.
    private func writeQueued(_ connection: Connection) -> Bool {
        guard let first = nextFrame(of: connection) else { return true }
        let transport = connection.transport
        if connection.usesExtensions || connection.kind == .echo {
            metrics.messagesOut += 1
            metrics.bytesOut += first.frameLength
            return transport.write(first.payloadStart, count: first.payloadLength, as: first.isBinary ? .binary : .text)
        }
        let room = Self.writeBatchBytes - first.frameLength
        guard room > 0, !connection.isCaughtUp, let second = nextFrame(of: connection, space: room) else {
            metrics.messagesOut += 1
            metrics.bytesOut += first.frameLength
            return transport.write(first.frameBytes, count: first.frameLength, as: .preframed)
        }
        let base = scratch + OutboundFrame.headroom
        base.update(from: first.frameBytes, count: first.frameLength)
        var used = first.frameLength
        var count = 1
        var next: OutboundFrame? = second
        while let frame = next {
            (base + used).update(from: frame.frameBytes, count: frame.frameLength)
            used += frame.frameLength
            count += 1
            next = nextFrame(of: connection, space: Self.writeBatchBytes - used)
        }
        metrics.messagesOut += count
        metrics.bytesOut += used
        return transport.write(base, count: used, as: .preframed)
    }
}
