import HappyCore
import HappyLWS

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

    private let metrics: Metrics
    private let clock: ServiceClock
    private let logger: Logger
    private var presenceListing: PresenceListing

    /// Applies a configuration read again (SIGHUP) to the welcomes and lists to come.
    func reconfigure(_ presenceListing: PresenceListing) {
        self.presenceListing = presenceListing
    }
    /// One write's worth of coalesced frames.
    private let scratch = WriteScratch(capacity: writeBatchBytes)
    private let outputKey = WriteState.Key()
    private let logKey = BroadcastLog<OutboundFrame>.Key()

    init(metrics: Metrics, clock: ServiceClock, logger: Logger, presenceListing: PresenceListing) {
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
        self.presenceListing = presenceListing
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

    /// Queued messages are due for `connection`: written when the current
    /// turn ends if it can be, otherwise in a writable callback.
    @inline(__always)
    private func wake(_ connection: Connection, now: Double) {
        guard deferralDepth > 0, !connection.output.writableRequested, connection.kind == .happy,
              !connection.usesExtensions else {
            return requestWritable(connection, now: now)
        }
        guard connection.modify(outputKey, { $0.deferWrite(now: now) }) else { return }
        deferred.append(connection)
    }

    private func writeDeferred() {
        swap(&deferred, &flushing)
        let now = clock.now()
        let count = flushing.count
        for index in 0..<count {
            // A write is mostly the kernel's; what the loop itself waited for
            // was memory: the next client's object is fetched while this send runs.
            if index + 1 < count { CacheHint.prefetch(flushing[index + 1], bytes: Connection.approximateBytes) }
            let connection = flushing[index]
            connection.modify(outputKey) { $0.deferredWriteTaken() }
            guard !connection.isClosed, !connection.output.writableRequested else { continue }
            // lws also writes pongs of its own and keeps what the socket did
            // not take of them, so it is asked before every write from here.
            if connection.output.closing == .open, !connection.output.pingDue, !connection.transport.hasBufferedOutput {
                if !writeable(connection) { connection.kill() }
            } else {
                requestWritable(connection, now: now)
            }
        }
        flushing.removeAll(keepingCapacity: true)
    }

    /// Asks the transport for a writable callback unless one is already on
    /// its way. `now` starts the clock of a client that does not read.
    @inline(__always)
    private func requestWritable(_ connection: Connection, now: Double) {
        guard !connection.isClosed, connection.modify(outputKey, { $0.requestWritable(now: now) }) else { return }
        connection.transport.requestWritable()
    }

    // MARK: joining and leaving

    /// A client joins its room's audience: it writes what is broadcast from now on.
    func joined(_ connection: Connection, _ runtime: RoomRuntime) {
        connection.modify(outputKey) { $0.startReading(at: runtime.log.end) }
    }

    /// A client left: the log entries it had not written need not wait for it.
    func left(_ connection: Connection, _ runtime: RoomRuntime) {
        let cursor = connection.output.cursor
        runtime.modify(logKey) { $0.abandon(from: cursor) }
    }

    // MARK: queueing

    /// A finished tick (its summary, as tick delivery built it), encoded
    /// once and broadcast; a client that writes none of the ticks waiting
    /// for it before the next comes gets one tick for all of them.
    func broadcastTick(_ tick: TickSummary, in runtime: RoomRuntime) {
        broadcast(OutboundFrame(tick: tick), in: runtime)
    }

    /// Appends `frame` to the room's log and wakes its members.
    func broadcast(_ frame: OutboundFrame, in runtime: RoomRuntime) {
        let dropped = runtime.log.droppedDeliveries
        let readers = runtime.listenerCount
        runtime.modify(logKey) { _ = $0.append(frame, bytes: frame.queuedSize, readers: readers) }
        metrics.outboxDrops += runtime.log.droppedDeliveries - dropped
        let now = clock.now()
        runtime.forEachListener { wake($0, now: now) }
    }

    func sendError(_ error: WireError, to connection: Connection) {
        send(OutboundFrame(encoded: ServerMessageEncoder.error(error, headroom: OutboundFrame.headroom)), to: connection)
    }

    /// Queues a message for `connection` alone, after what the room has
    /// broadcast so far (or after position `after`). Replies are never
    /// dropped: while they pass `maxQueuedBytes` the client is not read.
    func send(_ frame: OutboundFrame, to connection: Connection, after: UInt64? = nil, droppable: Bool = false) {
        guard !connection.isClosed, !connection.output.closeFrameSent else { return }
        // A connection closing gracefully still gets what is recorded before it goes.
        if let close = connection.output.closeRequest, !close.afterDrain { return }
        let position = after ?? connection.room?.log.end ?? 0
        let message = PrivateMessage(after: position, frame: frame)
        switch connection.modify(outputKey, { $0.push(message, bytes: frame.queuedSize, droppable: droppable) }) {
        case .queued:
            wake(connection, now: clock.now())
        case .overflowed(let dropped):
            metrics.outboxDrops += dropped
            metrics.resyncs += 1
            wake(connection, now: clock.now())
        case .coveredByResync:
            metrics.outboxDrops += 1
        }
        if connection.output.outbox.isOverLimit { pauseReading(connection) }
    }

    /// Every local client of the room gets one resync in place of its queued events.
    func resyncMembers(of runtime: RoomRuntime) {
        let now = clock.now()
        runtime.forEachListener { listener in
            listener.modify(outputKey) { $0.requireResync() }
            requestWritable(listener, now: now)
        }
    }

    /// A keepalive ping goes out at the client's next writable callback.
    func sendPing(to connection: Connection, now: Double) {
        connection.modify(outputKey) { $0.pingRequested() }
        requestWritable(connection, now: now)
    }

    /// Closes with `code` at the next chance to write (after the upgrade has
    /// completed, so browsers see the code and reason); `afterDrain`: after
    /// what is queued and the acks of its pending intents.
    /// `stopReading`: stop reading the peer until the close frame is out. A peer
    /// flooding with pings must not be read meanwhile: lws answers each ping
    /// before any write of the server's own, so its pongs would hold the close frame back.
    func close(_ connection: Connection, code: WebSocketCloseCode, reason: String, afterDrain: Bool = false,
               stopReading: Bool = false) {
        let request = WriteState.CloseRequest(code: code, reason: reason, afterDrain: afterDrain, stopReading: stopReading)
        guard connection.modify(outputKey, { $0.requestClose(request) }) else { return }
        if stopReading && !connection.isClosed && connection.modify(outputKey, { $0.pauseReading() }) {
            connection.transport.pauseReading()
        }
        requestWritable(connection, now: connection.output.stalledSince)
    }

    /// The peer's close frame arrived. True when it answers the server's own
    /// close frame: the connection ends without echoing it.
    func peerClosing(_ connection: Connection) -> Bool {
        connection.modify(outputKey) { $0.peerClosing() }
    }

    /// Nothing left to write: no private message, no broadcast ahead of the cursor.
    func isCaughtUp(_ connection: Connection) -> Bool {
        guard connection.output.outbox.isEmpty, !connection.output.needsResync else { return false }
        guard connection.joined, let room = connection.room else { return true }
        return connection.output.cursor >= room.log.end
    }

    /// What a client has not read yet: its replies and the room's broadcasts
    /// ahead of its cursor; nil when it fell out of the log (a resync is due).
    func unreadBytes(of connection: Connection) -> Int? {
        guard !connection.output.needsResync else { return nil }
        guard let runtime = connection.room else { return connection.output.outbox.queuedBytes }
        guard let backlog = runtime.log.backlog(from: connection.output.cursor) else { return nil }
        return connection.output.outbox.queuedBytes + backlog
    }

    /// TCP backpressure for a client that sends faster than it reads its replies.
    /// Each pause is counted; only a client's first is logged.
    private func pauseReading(_ connection: Connection) {
        guard !connection.isClosed else { return }
        let firstTime = !connection.output.hasPausedReading
        guard connection.modify(outputKey, { $0.pauseReading() }) else { return }
        if firstTime {
            logger.info("reading paused until the client reads its replies",
                        ["id": connection.participant.id, "queued": "\(connection.output.outbox.queuedBytes)"])
        }
        connection.transport.pauseReading()
        metrics.readPauses += 1
    }

    private func resumeReading(_ connection: Connection) {
        guard !connection.isClosed, connection.modify(outputKey, { $0.resumeReading() }) else { return }
        connection.transport.resumeReading()
    }

    // MARK: writing

    /// The writable callback of a connection (or its write at the end of the
    /// loop turn that queued its messages); false when it failed and must close.
    func writeable(_ connection: Connection) -> Bool {
        guard !connection.output.closeFrameSent else {
            let stalledSince = connection.output.stalledSince
            connection.modify(outputKey) { $0.beginWrite(now: stalledSince) }
            return true
        }
        let now = clock.now()
        connection.modify(outputKey) { $0.beginWrite(now: now) }
        if let close = connection.output.closeRequest,
           !close.afterDrain || (isCaughtUp(connection) && connection.commits.pending == 0) {
            return sendCloseFrame(close, to: connection)
        }
        if connection.modify(outputKey, { $0.takePing() }) {
            // lws 4.1 reports no pong for an empty ping, so the ping carries a payload.
            let payload = Self.pingPayload
            scratch.start.update(from: payload, count: payload.count)
            guard connection.transport.write(scratch.start, count: payload.count, as: .ping) else {
                return false
            }
        } else if !writeQueued(connection) {
            return false
        }
        if connection.output.readingPaused
            && connection.output.outbox.queuedBytes <= connection.output.outbox.limit / 2 {
            resumeReading(connection)
        }
        if !isCaughtUp(connection) || connection.output.closeRequest != nil {
            requestWritable(connection, now: connection.output.stalledSince)
        }
        return true
    }

    /// Sends the close frame, then keeps reading (and ignoring messages)
    /// until the peer's close frame or `closeAckSeconds`: closing the socket
    /// while the peer still sends would reset it, losing the close frame.
    private func sendCloseFrame(_ close: WriteState.CloseRequest, to connection: Connection) -> Bool {
        // Written pre-framed, like every frame here: the transport keeps its
        // own close for the connections it ends itself. Control frames are
        // never compressed, so this holds with permessage-deflate too.
        let frame = CloseFrame.frame(code: close.code, reason: close.reason)
        let start = scratch.start
        start.update(from: frame, count: frame.count)
        guard connection.transport.write(start, count: frame.count, as: .preframed) else { return false }
        connection.modify(outputKey) { $0.closeFrameWritten() }
        if close.stopReading {
            // Nothing more is read from it: the connection ends once the frame is out.
            connection.transport.kill()
            return true
        }
        resumeReading(connection)
        connection.transport.awaitCloseAcknowledgement(seconds: Self.closeAckSeconds)
        return true
    }

    /// The next frame this client has to write, taken off its queue or its
    /// room's log; nil when it is caught up or the frame is longer than `space`.
    private func nextFrame(of connection: Connection, space: Int = .max) -> OutboundFrame? {
        if let message = connection.output.outbox.firstPayload, message.after <= connection.output.cursor {
            guard message.frame.frameLength <= space else { return nil }
            connection.modify(outputKey) { $0.removeFirstMessage() }
            return message.frame
        }
        if connection.output.outbox.resyncPending, case .resync? = connection.output.outbox.first {
            guard let frame = resyncFrame(connection), frame.frameLength <= space else { return nil }
            connection.modify(outputKey) { $0.removeFirstMessage() }
            skipToEnd(connection)
            return frame
        }
        guard connection.joined, let runtime = connection.room else { return nil }
        let cursor = connection.output.cursor
        let behind = cursor < runtime.log.end
        // The log holds at most maxQueuedBytes: a client it no longer holds
        // is further behind than that, and is resynchronised.
        if connection.output.needsResync || (behind && !runtime.log.holds(cursor)) {
            guard let frame = resyncFrame(connection), frame.frameLength <= space else { return nil }
            skipToEnd(connection)
            return frame
        }
        guard behind else { return nil }
        let frame = runtime.log.element(at: cursor)
        if frame.isTick, cursor + 1 < runtime.log.end, runtime.log.element(at: cursor + 1).isTick {
            return mergedTicks(of: connection, in: runtime, space: space)
        }
        guard frame.frameLength <= space else { return nil }
        runtime.modify(logKey) { $0.passed(cursor) }
        connection.modify(outputKey) { $0.advanceCursor() }
        return frame
    }

    /// A client that has written none of the ticks waiting for it gets one
    /// tick for all of them (PROTOCOL.md section 12: a pending tick is
    /// extended, not duplicated), encoded for it alone.
    private func mergedTicks(of connection: Connection, in runtime: RoomRuntime, space: Int) -> OutboundFrame? {
        let first = connection.output.cursor
        guard var summary = runtime.log.element(at: first).tick else { return nil }
        var next = first + 1
        while next < runtime.log.end, let later = runtime.log.element(at: next).tick {
            summary.append(later)
            next += 1
        }
        let frame = OutboundFrame(tick: summary)
        guard frame.frameLength <= space else { return nil }
        for position in first..<next {
            runtime.modify(logKey) { $0.passed(position) }
            connection.modify(outputKey) { $0.advanceCursor() }
        }
        metrics.ticksMerged += 1
        return frame
    }

    /// A resync from the latest recorded state, presence included.
    private func resyncFrame(_ connection: Connection) -> OutboundFrame? {
        guard let runtime = connection.room, let room = runtime.room else { return nil }
        let presence = runtime.presenceList(limit: presenceListing.limit(count: runtime.presenceCount))
        return OutboundFrame(encoded: ServerMessageEncoder.resync(
            seq: room.committed.seq, state: room.committed.scene, presence: presence,
            presenceCount: runtime.presenceCount, epoch: room.epoch, headroom: OutboundFrame.headroom))
    }

    /// The resync covers everything broadcast so far: skip it.
    private func skipToEnd(_ connection: Connection) {
        metrics.resyncs += 1
        guard let runtime = connection.room else { return connection.modify(outputKey) { $0.resynced(skippingTo: 0) } }
        let cursor = connection.output.cursor
        if cursor < runtime.log.end {
            // Entries the log already gave up for this client were counted then.
            metrics.outboxDrops += Int(runtime.log.end - max(cursor, runtime.log.start))
            runtime.modify(logKey) { $0.abandon(from: cursor) }
        }
        connection.modify(outputKey) { $0.resynced(skippingTo: runtime.log.end) }
    }

    /// Writes what is queued: one frame through the transport's framing
    /// when an extension transforms frames; otherwise as many pre-framed
    /// frames as fit in one socket write, copied together (or a lone one
    /// straight from its buffer). The transport keeps what the socket does
    /// not take.
    private func writeQueued(_ connection: Connection) -> Bool {
        guard let first = nextFrame(of: connection) else { return true }
        let transport = connection.transport
        metrics.writesOut += 1
        if connection.usesExtensions || connection.kind == .echo {
            metrics.messagesOut += 1
            metrics.bytesOut += first.frameLength
            return transport.write(first.payloadStart, count: first.payloadLength, as: first.isBinary ? .binary : .text)
        }
        let room = Self.writeBatchBytes - first.frameLength
        guard room > 0, !isCaughtUp(connection), let second = nextFrame(of: connection, space: room) else {
            metrics.messagesOut += 1
            metrics.bytesOut += first.frameLength
            return transport.write(first.frameBytes, count: first.frameLength, as: .preframed)
        }
        let base = scratch.start
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

extension WriteState {
    /// Made only here: `Broadcaster` alone changes a connection's `output`.
    struct Key { fileprivate init() {} }
}

extension BroadcastLog {
    /// Made only here: `Broadcaster` alone changes a room's `log`.
    struct Key { fileprivate init() {} }
}
