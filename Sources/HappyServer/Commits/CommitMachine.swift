import HappyCore

/// What the commit machine asks its executor (`CommitCoordinator`) to do,
/// in order.
enum CommitAction {
    /// Send the batch's commits to the store (`delay` seconds from now: a
    /// batch in doubt sent again).
    case record(CommitPipeline.Batch, delay: Double)
    /// The store answered for these rooms' commits: their creation is recorded.
    case recorded(rooms: [RoomRuntime], seconds: Double)
    /// A recorded intent, in seq order: commit its event, publish it, ack it.
    case deliver(PendingIntent)
    /// The recorded intents of one batch, after each was delivered.
    case delivered([PendingIntent])
    /// An intent that was not applied: answer it with `error`.
    case refuse(PendingIntent, WireError)
    /// Drop what refused intents left in a room's working state.
    case rollback(RoomRuntime)
    /// Another node recorded first: bring the room to what the store holds
    /// (`refusedBase`: the seq the refused commit was built on), then apply
    /// `reapply` again on top, in order, with new seqs.
    case catchUp(RoomRuntime, to: StoredRoom?, refusedBase: UInt64?, reapply: [PendingIntent])
    /// Start the next batch if one can go.
    case flush
    /// A batch's answer is handled (after the flush it led to).
    case batchFinished
    /// Something to log and count.
    case note(CommitNote)
}

/// The commit path's turns worth a log line or a metric.
enum CommitNote: Equatable {
    /// Intents were refused because the write failed; `log`: not logged in the last 10 s.
    case storeFailed(StoreError, log: Bool)
    /// A write went without a definite answer: its intents wait.
    case heldInDoubt(StoreError, intents: Int)
    case inDoubtResolved(seconds: Double)
    case storeRecovered
    /// Another node recorded first.
    case conflict
}

/// The commit path as a value: the pipeline of applied intents and the batch
/// in flight, the store's health, and what is in doubt. Its methods take
/// what happened (an intent applied, the end of a loop turn, the store's
/// answer) and return what to do; `CommitCoordinator` does it. No I/O, no
/// clock of its own. Rooms are told apart by name, as the store knows them.
struct CommitMachine {
    /// Seconds between two sends of a batch in doubt.
    static let inDoubtRetrySeconds = 0.5
    /// A commit unanswered this long is named on `/healthz` before it fails:
    /// a store that went silent (a partition drops packets, no reset) only
    /// fails a call after its timeout, and a node should say so meanwhile.
    static let slowCommitSeconds = 1.0
    /// Failed writes are logged at most once per this many seconds.
    static let failureLogSeconds = 10.0

    #if HAPPY_PLANTED_EARLY_ACK
    /// DELIBERATE DEFECT, built only with `-Xswiftc -DHAPPY_PLANTED_EARLY_ACK`
    /// for `make chaos-planted`, to prove the chaos checker catches it: intents
    /// are acked and broadcast as soon as they are applied in memory, before
    /// the store records them, so a failed commit loses acknowledged intents.
    static let plantedEarlyAck = true
    #else
    static let plantedEarlyAck = false
    #endif

    private(set) var pipeline = CommitPipeline()
    private(set) var storeHealthy = true
    /// Why the last store write failed, while it is unhealthy.
    private(set) var storeProblem = ""
    /// When the batch in flight was sent without a definite answer; nil when
    /// none is in doubt. Its intents stay unanswered until the store answers
    /// the same commits sent again.
    private(set) var inDoubtSince: Double?
    /// When the batch in flight went to the store.
    private(set) var inFlightSince: Double?
    private var lastFailureLog = -Double.infinity
    /// Rooms whose working state still holds intents refused while in doubt (one entry per name).
    private var unsettledRooms: [RoomRuntime] = []

    /// Nothing applied is waiting for the store.
    var isIdle: Bool { pipeline.isIdle }
    var hasBatchInFlight: Bool { pipeline.inFlight != nil }
    /// A flush would start a batch.
    var hasBatchToStart: Bool { pipeline.inFlight == nil && pipeline.hasWork }

    // MARK: intents

    /// Why an intent must be refused before it is applied, or nil. While the
    /// store cannot be reached, one batch at a time finds out whether it is
    /// back; the rest are refused at once, not queued.
    func refusal(intentID: String?) -> WireError? {
        guard !storeHealthy, pipeline.inFlight != nil else { return nil }
        let why = inDoubtSince != nil ? "earlier changes are not confirmed by the store yet" : storeProblem
        return WireError(.unavailable, "the change could not be recorded (\(why)); nothing was applied", id: intentID)
    }

    /// An intent was applied to its room's working state: it joins the next batch.
    mutating func applied(_ intent: PendingIntent) -> [CommitAction] {
        pipeline.append(intent)
        return Self.plantedEarlyAck ? [.deliver(intent)] : []
    }

    /// A room was just created: its epoch is recorded with the next batch.
    mutating func created(_ commit: RoomCommit, of runtime: RoomRuntime) {
        pipeline.appendCreation(commit, of: runtime)
    }

    // MARK: batches

    /// The end of a loop turn (or a batch's answer): the next batch goes to
    /// the store if none is in flight. A batch with nothing to write finishes at once.
    /// `webhooks`: which webhooks get each event, written with it.
    mutating func flush(withHistory: Bool, webhooks: WebhookRouting = WebhookRouting([]), now: Double) -> [CommitAction] {
        var actions: [CommitAction] = []
        while let batch = pipeline.startBatch(withHistory: withHistory, webhooks: webhooks) {
            if batch.commits.isEmpty {
                actions += finish(batch.id, .success([]), seconds: 0, now: now)
                continue
            }
            inFlightSince = now
            actions.append(.record(batch, delay: 0))
            break
        }
        return actions
    }

    /// The store's answer for batch `id`.
    mutating func commitFinished(batch id: UInt64, result: Result<[CommitConflict], StoreError>, seconds: Double,
                                 now: Double) -> [CommitAction] {
        if case .failure(let error) = result, let inFlight = pipeline.inFlight, inFlight.id == id,
           error.kind == .inDoubt || inDoubtSince != nil {
            // Sent, but not known to be recorded: neither ack nor refuse; send
            // the same commits again (their tokens make that safe) until the
            // store answers.
            return holdInDoubt(inFlight, error, now: now)
        }
        var actions: [CommitAction] = []
        if let since = inDoubtSince {
            inDoubtSince = nil
            actions.append(.note(.inDoubtResolved(seconds: now - since)))
        }
        actions += finish(id, result, seconds: seconds, now: now)
        return actions + [.flush, .batchFinished]
    }

    /// The store answered a read: a store that failed a write is healthy
    /// again, unless a write is still in doubt (only its answer settles that).
    mutating func storeAnswered() -> [CommitAction] {
        guard !storeHealthy, inDoubtSince == nil, pipeline.inFlight == nil else { return [] }
        return recovered()
    }

    private mutating func recovered() -> [CommitAction] {
        storeHealthy = true
        lastFailureLog = -.infinity
        return [.note(.storeRecovered)]
    }

    private mutating func holdInDoubt(_ batch: CommitPipeline.Batch, _ error: StoreError, now: Double) -> [CommitAction] {
        var actions: [CommitAction] = []
        if inDoubtSince == nil {
            inDoubtSince = now
            actions.append(.note(.heldInDoubt(error, intents: batch.intents.count)))
        }
        storeHealthy = false
        storeProblem = error.message
        // Intents applied on top were never sent: refuse them now. Their
        // rooms' working state is put right once the batch is settled.
        for intent in pipeline.takeOpen() {
            if !unsettledRooms.contains(where: { $0.name == intent.runtime.name }) { unsettledRooms.append(intent.runtime) }
            actions.append(.refuse(intent, WireError(
                .unavailable, "the change could not be recorded (earlier changes are not confirmed by the store yet); "
                    + "nothing was applied", id: intent.intent.id)))
        }
        actions.append(.record(batch, delay: Self.inDoubtRetrySeconds))
        return actions
    }

    private mutating func finish(_ id: UInt64, _ result: Result<[CommitConflict], StoreError>, seconds: Double,
                                 now: Double) -> [CommitAction] {
        guard let batch = pipeline.finishBatch(id: id) else { return [] }
        var actions: [CommitAction] = [.recorded(rooms: batch.rooms, seconds: seconds)]
        let unsettled = unsettledRooms
        unsettledRooms.removeAll()
        switch result {
        case .success(let conflicts):
            if !storeHealthy { actions += recovered() }
            let conflicted = Set(conflicts.map(\.room))
            let recorded = batch.intents.filter { !conflicted.contains($0.runtime.name) }
            if !Self.plantedEarlyAck { actions += recorded.map { .deliver($0) } }
            actions.append(.delivered(recorded))
            for runtime in unsettled where !conflicted.contains(runtime.name) { actions.append(.rollback(runtime)) }
            for conflict in conflicts { actions += retry(conflict, batch: batch) }
        case .failure(let error):
            actions += storeFailed(error, batch: batch, now: now)
        }
        return actions
    }

    /// Another node recorded first: catch up with what the store holds, then
    /// apply this room's intents again on top (same order, new seqs). Nobody
    /// saw the refused events, so replaying them is invisible to clients.
    private mutating func retry(_ conflict: CommitConflict, batch: CommitPipeline.Batch) -> [CommitAction] {
        guard let (runtime, commit) = batch.commit(of: conflict.room) else { return [] }
        let refused = batch.intents.filter { $0.runtime.name == conflict.room }
            + pipeline.takeOpen(ofRoom: conflict.room)
        return [.note(.conflict), .catchUp(runtime, to: conflict.current, refusedBase: commit.baseSeq, reapply: refused)]
    }

    private mutating func storeFailed(_ error: StoreError, batch: CommitPipeline.Batch, now: Double) -> [CommitAction] {
        storeHealthy = false
        storeProblem = error.message
        let log = now - lastFailureLog > Self.failureLogSeconds
        if log { lastFailureLog = now }
        var actions: [CommitAction] = [.note(.storeFailed(error, log: log))]
        // Later intents were applied on top of the failed ones: they fail too.
        let failed = batch.intents + pipeline.takeOpen()
        var rolledBack: Set<String> = []
        for intent in failed where rolledBack.insert(intent.runtime.name).inserted {
            actions.append(.rollback(intent.runtime))
        }
        guard !Self.plantedEarlyAck else { return actions }
        for intent in failed {
            actions.append(.refuse(intent, WireError(
                .unavailable, "the change could not be recorded (\(error.message)); nothing was applied",
                id: intent.intent.id)))
        }
        return actions
    }

    // MARK: health

    /// What is wrong with the store, for `/healthz`; empty when healthy.
    func healthProblems(now: Double, storeKind: String) -> [String] {
        if let since = inDoubtSince, let batch = pipeline.inFlight {
            let count = batch.intents.count
            return ["commits in doubt for \(Self.seconds(now - since)): \(count) intent\(count == 1 ? "" : "s") sent to "
                + "the \(storeKind) store without an answer, resent until it answers (\(storeProblem))"]
        }
        if !storeHealthy { return ["store \(storeKind): \(storeProblem)"] }
        if let since = inFlightSince, pipeline.inFlight != nil, now - since >= Self.slowCommitSeconds {
            return ["store \(storeKind): a commit has waited \(Self.seconds(now - since)) for an answer"]
        }
        return []
    }

    static func seconds(_ value: Double) -> String {
        let tenths = Int((max(0, value) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) s"
    }
}
