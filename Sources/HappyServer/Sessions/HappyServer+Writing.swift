import CWebSockets
import HappyCore

/// The WebSocket write path: queueing under the outbox policy, and writing in
/// `SERVER_WRITEABLE` only, coalescing pre-framed frames into one socket write.
extension HappyServer {
    // MARK: send

    func sendError(_ error: WireError, to connection: Connection) {
        queue(OutboundFrame(encoded: ServerMessageEncoder.error(error, headroom: OutboundFrame.headroom)),
              to: connection, droppable: false)
    }

    /// Queues `frame` for `connection` under the outbox policy.
    func queue(_ frame: OutboundFrame, to connection: Connection, droppable: Bool) {
        guard !connection.isClosed else { return }
        // A connection closing gracefully still gets what is recorded before it goes.
        if let close = connection.closeRequest, !close.afterDrain { return }
        let wasEmpty = connection.outbox.isEmpty
        switch connection.outbox.push(frame, bytes: frame.queuedSize, droppable: droppable) {
        case .queued:
            if wasEmpty { connection.stalledSince = Clock.monotonicSeconds() }
            connection.requestWritable()
        case .overflowed(let dropped):
            metrics.outboxDrops += dropped
            metrics.resyncs += 1
            connection.requestWritable()
        case .coveredByResync:
            metrics.outboxDrops += 1
        case .overLimit:
            metrics.slowReaderCloses += 1
            logger.info("dropping client that reads nothing", ["id": connection.participant.id,
                                                               "queued": "\(connection.outbox.queuedBytes)"])
            connection.kill()
        }
    }

    // MARK: write

    func writeable(_ connection: Connection) -> Int32 {
        connection.writableRequested = false
        let now = Clock.monotonicSeconds()
        connection.stalledSince = now
        if let close = connection.closeRequest,
           !close.afterDrain || (connection.outbox.isEmpty && connection.pendingIntents == 0) {
            var bytes = Array(close.reason.utf8.prefix(123))
            lws_close_reason(connection.wsi, lws_close_status(rawValue: UInt32(close.code)), &bytes, bytes.count)
            return -1
        }
        if connection.pingDue {
            connection.pingDue = false
            // lws 4.1 reports no RECEIVE_PONG for an empty pong, so the ping carries a payload.
            let payload = Self.pingPayload
            (scratch + OutboundFrame.headroom).update(from: payload, count: payload.count)
            if lws_write(connection.wsi, scratch + OutboundFrame.headroom, payload.count,
                         lws_write_protocol(UInt32(happy_write_ping))) < 0 {
                return -1
            }
        } else if !connection.outbox.isEmpty {
            let written = connection.usesExtensions || connection.kind == .echo
                ? writeOne(connection) : writeCoalesced(connection)
            if written < 0 { return -1 }
        }
        if !connection.outbox.isEmpty || connection.closeRequest != nil { connection.requestWritable() }
        return 0
    }

    /// The frame the outbox's first entry stands for (a resync is built now,
    /// from the latest recorded state).
    private func firstFrame(of connection: Connection) -> OutboundFrame? {
        switch connection.outbox.first {
        case .message(let frame, _, _)?:
            return frame
        case .resync?:
            guard let runtime = connection.room, let room = runtime.room else { return nil }
            let presence = runtime.presenceList(limit: config.limits.presenceBroadcastMax)
            return OutboundFrame(encoded: ServerMessageEncoder.resync(
                seq: room.committed.seq, state: room.committed.scene, presence: presence,
                presenceCount: runtime.presenceCount, epoch: room.epoch, headroom: OutboundFrame.headroom))
        case nil:
            return nil
        }
    }

    /// One message through lws's own framing (needed with extensions).
    private func writeOne(_ connection: Connection) -> Int {
        guard let frame = firstFrame(of: connection) else { connection.outbox.removeFirst(); return 0 }
        connection.outbox.removeFirst()
        let mode = lws_write_protocol(UInt32(frame.isBinary ? happy_write_binary : happy_write_text))
        let written = frame.withBytes { bytes in
            Int(lws_write(connection.wsi, bytes.baseAddress! + OutboundFrame.headroom, frame.payloadLength, mode))
        }
        metrics.messagesOut += 1
        metrics.bytesOut += frame.frameLength
        return written
    }

    /// As many queued frames as fit in one socket write, already framed; lws
    /// keeps whatever the socket does not take and sends it first next time.
    private func writeCoalesced(_ connection: Connection) -> Int {
        let base = scratch + OutboundFrame.headroom
        var used = 0
        var count = 0
        while let frame = firstFrame(of: connection) {
            let length = frame.frameLength
            if used + length > Self.writeBatchBytes {
                if used > 0 { break }
                // Too big to batch: write it alone, straight from its own buffer.
                connection.outbox.removeFirst()
                metrics.messagesOut += 1
                metrics.bytesOut += length
                return frame.withBytes { bytes in
                    Int(lws_write(connection.wsi, bytes.baseAddress! + frame.frameStart, length,
                                  lws_write_protocol(UInt32(happy_write_http))))
                }
            }
            frame.withBytes { bytes in
                (base + used).update(from: bytes.baseAddress! + frame.frameStart, count: length)
            }
            used += length
            count += 1
            connection.outbox.removeFirst()
        }
        guard used > 0 else { return 0 }
        metrics.messagesOut += count
        metrics.bytesOut += used
        return Int(lws_write(connection.wsi, base, used, lws_write_protocol(UInt32(happy_write_http))))
    }
}
