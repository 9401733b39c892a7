import HappyCore

/// Intents: applied to a room's working state at once, recorded by the store
/// in groups, and only then broadcast and acknowledged.
extension HappyServer {
    func submitIntent(_ intent: Intent, in runtime: RoomRuntime, sender: Participant, reply: ReplyTarget) {
        guard runtime.room != nil else {
            answer(reply, error: WireError(.unavailable, "room \(runtime.name) is not loaded", id: intent.id))
            return
        }
        runtime.pendingIntents += 1
        runtime.wasUsed = true
        if case .connection(let connection) = reply { connection.pendingIntents += 1 }
        pipeline.append(apply(intent, in: runtime, sender: sender, reply: reply))
        if storeWorker.isSynchronous { flushCommits() }
    }

    /// Runs the reducer on the room's working state and encodes the event once.
    private func apply(_ intent: Intent, in runtime: RoomRuntime, sender: Participant, reply: ReplyTarget) -> PendingIntent {
        let applied = runtime.room!.apply(intent.action, sender: sender, time: SystemTime.wallMilliseconds(), reducer: reducer)
        let frame = applied.event.map {
            OutboundFrame(encoded: ServerMessageEncoder.event($0, headroom: OutboundFrame.headroom), seq: $0.seq)
        }
        return PendingIntent(runtime: runtime, reply: reply, intent: intent, sender: sender, applied: applied, frame: frame)
    }

    /// Starts the next group commit if none is running (called after every loop turn).
    func flushCommits() {
        while let batch = pipeline.startBatch(withHistory: storeWorker.store.keepsHistory) {
            if batch.commits.isEmpty {
                finishCommit(batch: batch.id, result: .success([]), seconds: 0)
            } else if storeWorker.isSynchronous {
                let started = SystemTime.monotonicSeconds()
                let result: Result<[CommitConflict], StoreError>
                do throws(StoreError) { result = .success(try storeWorker.store.commit(batch.commits)) } catch {
                    result = .failure(error)
                }
                finishCommit(batch: batch.id, result: result, seconds: SystemTime.monotonicSeconds() - started)
            } else {
                storeWorker.commit(batch: batch.id, batch.commits)
                return
            }
        }
    }

    func commitFinished(batch: UInt64, result: Result<[CommitConflict], StoreError>, seconds: Double) {
        finishCommit(batch: batch, result: result, seconds: seconds)
        flushCommits()
    }

    private func finishCommit(batch id: UInt64, result: Result<[CommitConflict], StoreError>, seconds: Double) {
        guard let batch = pipeline.finishBatch(id: id) else { return }
        if !batch.commits.isEmpty { metrics.commitLatency.observe(seconds) }
        for commit in batch.commits { rooms[commit.room]?.creationPending = false }
        switch result {
        case .success(let conflicts):
            if !storeHealthy {
                storeHealthy = true
                lastStoreFailureLog = 0
                logger.info("store recovered", ["store": storeWorker.store.kind])
            }
            let conflicted = Set(conflicts.map(\.room))
            let recorded = batch.intents.filter { !conflicted.contains($0.runtime.name) }
            for intent in recorded { deliver(intent) }
            refreshStreams(after: recorded)
            for conflict in conflicts { retry(conflict, batch: batch) }
        case .failure(let error):
            storeFailed(error, batch: batch)
        }
    }

    /// Another node recorded first: catch up with what the store holds, then
    /// apply this room's intents again on top (same order, new seqs). Nobody
    /// saw the refused events, so replaying them is invisible to clients.
    private func retry(_ conflict: CommitConflict, batch: CommitPipeline.Batch) {
        guard let runtime = rooms[conflict.room] else { return }
        metrics.commitConflicts += 1
        let refused = batch.intents.filter { $0.runtime === runtime } + pipeline.takeOpen(of: runtime)
        advance(runtime, to: conflict.current)
        for intent in refused {
            pipeline.append(apply(intent.intent, in: runtime, sender: intent.sender, reply: intent.reply))
        }
    }

    private func storeFailed(_ error: StoreError, batch: CommitPipeline.Batch) {
        storeHealthy = false
        storeProblem = error.message
        metrics.storeFailures += 1
        // Later intents were applied on top of the failed ones: they fail too.
        let failed = batch.intents + pipeline.takeOpen()
        let now = SystemTime.monotonicSeconds()
        if now - lastStoreFailureLog > 10 {
            lastStoreFailureLog = now
            logger.error("store write failed; intents refused until it recovers",
                         ["store": storeWorker.store.kind, "error": error.message,
                          "failures": "\(metrics.storeFailures)"])
        }
        for intent in failed { intent.runtime.room?.rollback() }
        for intent in failed {
            intent.runtime.pendingIntents -= 1
            if case .connection(let connection) = intent.reply { connection.pendingIntents -= 1 }
            metrics.countError(.unavailable)
            answer(intent.reply, error: WireError(
                .unavailable, "the change could not be recorded (\(error.message)); nothing was applied",
                id: intent.intent.id))
        }
    }

    /// Publishes a recorded intent: history, broadcast, then the sender's ack.
    private func deliver(_ intent: PendingIntent) {
        let runtime = intent.runtime
        runtime.pendingIntents -= 1
        if let event = intent.applied.event, let frame = intent.frame, let room = runtime.room {
            room.commit(event, historyElement: frame)
            noteDragonStatus(event, in: runtime)
            metrics.events += 1
            broadcast(frame, in: runtime)
        }
        metrics.countIntent(action: intent.intent.action.wireName, result: intent.applied.outcome.result.rawValue)
        let ack = ServerMessageEncoder.ack(id: intent.intent.id, seq: intent.applied.ackSeq,
                                           result: intent.applied.outcome.result, headroom: OutboundFrame.headroom)
        switch intent.reply {
        case .connection(let connection):
            connection.pendingIntents -= 1
            // After its event (the last entry of the log when it was broadcast).
            send(OutboundFrame(encoded: ack), to: connection)
        case .http(let exchange):
            respond(exchange, status: 200, json: Array(ack[OutboundFrame.headroom...]))
        }
    }

    func answer(_ reply: ReplyTarget, error: WireError) {
        switch reply {
        case .connection(let connection):
            sendError(error, to: connection)
        case .http(let exchange):
            respond(exchange, status: error.code.httpStatus, json: ServerMessageEncoder.error(error))
        }
    }
}

extension ErrorCode {
    /// The HTTP status `POST /api/intent` answers with for this error.
    var httpStatus: Int {
        switch self {
        case .badJSON, .badMessage, .unknownAction, .invalidValue: return 400
        case .rateLimited: return 429
        case .forbidden: return 403
        case .unavailable: return 503
        }
    }
}
