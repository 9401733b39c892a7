import CWebSockets
import HappyCore

/// Once a second: keepalive pings, dead and stuck peers, idle rooms.
/// One pass over all connections replaces lws's per-connection validity
/// timers, which would re-sort a shared list on every received frame.
extension HappyServer {
    func sweep() {
        let now = SystemTime.monotonicSeconds()
        let limits = config.limits
        // A connection whose close frame is out ends on lws's close timeout.
        for connection in connections where !connection.isClosed && !connection.closeFrameSent {
            if connection.readingPaused {
                // Its pongs wait unread behind its messages; the write timeout
                // below still drops it if it stops reading its replies.
                connection.pingSentAt = nil
            } else if let sentAt = connection.pingSentAt {
                if now - sentAt > limits.pingTimeoutSeconds {
                    metrics.pingTimeouts += 1
                    logger.info("dropping unresponsive client", ["id": connection.participant.id,
                                                                 "peer": connection.peerAddress])
                    connection.kill()
                    continue
                }
            } else if now - connection.lastReceiveAt >= limits.pingIntervalSeconds {
                connection.pingSentAt = now
                connection.pingDue = true
                connection.requestWritable(now: now)
            }
            if !connection.isCaughtUp && now - connection.stalledSince > limits.writeTimeoutSeconds {
                metrics.slowReaderCloses += 1
                logger.info("dropping client that stopped reading", ["id": connection.participant.id,
                                                                     "queued": queuedDescription(connection)])
                connection.kill()
            }
        }
        sweepStreams(now: now)
        evictIdleRooms(now: now)
        releaseMemoryAfterChurn()
        httpRateLimits = httpRateLimits.filter { now - $0.value.lastUsed < 60 }
        scheduleSweep()
    }

    /// What a client has not read: bytes queued, or that it fell out of the log.
    private func queuedDescription(_ connection: Connection) -> String {
        let replies = connection.outbox.queuedBytes
        guard let room = connection.room else { return "\(replies)" }
        guard let events = room.log.backlog(from: connection.cursor) else { return "\(replies) and a resync" }
        return "\(replies + events)"
    }

    /// Welcomes and presence messages of a crowd joining or leaving are big,
    /// short-lived allocations; once the churn has passed, hand the freed
    /// heap back to the system instead of keeping it as resident memory.
    /// Called by the sweep (after any churn of 64 or more) and while a crowd
    /// is still arriving (every `threshold` connections).
    func releaseMemoryAfterChurn(threshold: Int = 64) {
        let churn = metrics.connectionsOpened + metrics.connectionsClosed
        guard churn - churnAtLastTrim >= threshold else { return }
        churnAtLastTrim = churn
        happy_release_free_memory()
    }
}
