import HappyCore

/// What the commit coordinator reports back: recorded intents to publish,
/// refused ones to answer, and rooms another node moved on.
protocol CommitCoordinatorDelegate: AnyObject {
    /// The room in memory named `name`, if any.
    func runtime(named name: String) -> RoomRuntime?
    /// A recorded intent, in seq order: publish its event and ack it.
    func deliver(_ intent: PendingIntent)
    /// The intents of one recorded batch, after each was delivered.
    func batchDelivered(_ intents: [PendingIntent])
    /// An intent that was not applied (the store failed).
    func answer(_ reply: ReplyTarget, error: WireError)
    /// Another node recorded first: bring the room up to what the store holds
    /// (`refusedBase`: the seq the refused commit was built on).
    func advance(_ runtime: RoomRuntime, to stored: StoredRoom?, refusedBase: UInt64?)
    /// A room read from the store (first load, or read again).
    func roomLoaded(_ name: String, result: Result<StoredRoom?, StoreError>)
}

/// Group commit and the store: intents applied during one loop turn are
/// recorded in one store call; only when it returns are their events
/// broadcast and their acks sent, in order. The only part of the server
/// that knows whether the store is called inline (memory) or on the store
/// worker thread (SQLite, Redis).
final class CommitCoordinator {
    weak var delegate: (any CommitCoordinatorDelegate)?
    private let worker: StoreWorker
    private let reducer: SceneReducer
    private let clock: ServiceClock
    private let metrics: Metrics
    private let logger: Logger
    private var pipeline = CommitPipeline()

    /// The dragon label's texts, for the label stored with each event (set once the art is loaded).
    var dragonStatus = DragonStatus()
    private(set) var storeHealthy = true
    /// Why the last store write failed, while it is unhealthy.
    private(set) var storeProblem = ""
    private var lastFailureLog = 0.0
    /// When the batch in flight was sent without a definite answer (service
    /// clock); nil when none is in doubt. Its intents stay unanswered until
    /// the store answers the same commits sent again.
    private(set) var inDoubtSince: Double?
    /// Rooms whose working state still holds intents refused while in doubt.
    private var unsettledRooms: [RoomRuntime] = []
    /// Rooms to read again once no intent of theirs waits for the store.
    private var refreshesAfterCommit: Set<String> = []
    /// Other health checks (the cluster bus): each a problem, or nil.
    var healthChecks: [() -> String?] = []
    /// Seconds between two sends of a batch in doubt.
    static let inDoubtRetrySeconds = 0.5
    /// When the batch in flight went to the store worker (service clock).
    private var inFlightSince: Double?
    /// A commit unanswered this long is named on `/healthz` before it fails:
    /// a store that went silent (a partition drops packets, no reset) only
    /// fails a call after its timeout, and a node should say so meanwhile.
    static let slowCommitSeconds = 1.0

    init(worker: StoreWorker, reducer: SceneReducer, clock: ServiceClock, metrics: Metrics, logger: Logger) {
        self.worker = worker
        self.reducer = reducer
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    var storeKind: String { worker.store.kind }
    /// Nothing applied is waiting for the store.
    var isIdle: Bool { pipeline.isIdle }

    // MARK: loading

    /// Reads a room; the result reaches `delegate.roomLoaded` (at once for a synchronous store).
    func load(_ name: String) {
        guard worker.isSynchronous else { return worker.load(name) }
        let result: Result<StoredRoom?, StoreError>
        do throws(StoreError) { result = .success(try worker.store.loadRoom(named: name)) } catch { result = .failure(error) }
        delegate?.roomLoaded(name, result: result)
    }

    /// Reads a room again (a shared store may have moved on); the result arrives through the inbox.
    func refresh(_ name: String) {
        worker.refresh(name)
    }

    /// Reads a room again later: at once after the batch in flight when the
    /// room has intents waiting for the store (reading it now could show
    /// their own events as another node's), else after `delay` seconds.
    func refreshLater(_ name: String, delay: Double = 1) {
        if pipeline.inFlight != nil, let runtime = delegate?.runtime(named: name), runtime.pendingIntents > 0 {
            refreshesAfterCommit.insert(name)
        } else {
            worker.refresh(name, after: delay)
        }
    }

    /// The store answered a read: a store that failed a write is healthy
    /// again, unless a write is still in doubt (only its answer settles that).
    func storeAnswered() {
        guard !storeHealthy, inDoubtSince == nil, pipeline.inFlight == nil else { return }
        storeHealthy = true
        lastFailureLog = 0
        logger.info("store recovered", ["store": storeKind])
    }

    /// What is wrong with the store and the cluster link, for `/healthz`; empty when healthy.
    func healthProblems() -> [String] {
        var problems: [String] = []
        let now = clock.fresh()
        if let since = inDoubtSince, let batch = pipeline.inFlight {
            problems.append("commits in doubt for \(Self.seconds(now - since)): \(batch.intents.count) intent\(batch.intents.count == 1 ? "" : "s") sent to "
                + "the \(storeKind) store without an answer, resent until it answers (\(storeProblem))")
        } else if !storeHealthy {
            problems.append("store \(storeKind): \(storeProblem)")
        } else if let since = inFlightSince, pipeline.inFlight != nil, now - since >= Self.slowCommitSeconds {
            problems.append("store \(storeKind): a commit has waited \(Self.seconds(now - since)) for an answer")
        }
        problems += healthChecks.compactMap { $0() }
        return problems
    }

    static func seconds(_ value: Double) -> String {
        let tenths = Int((max(0, value) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) s"
    }

    /// Reads the store's past (history, past states): off the service thread
    /// for a store that is not synchronous; `completion` runs on the service thread.
    func readPast<Value>(_ read: @escaping @Sendable (any RoomStore) -> Result<Value, StoreError>,
                         completion: @escaping (Result<Value, StoreError>) -> Void) {
        guard worker.isSynchronous else { return worker.read(read, completion: completion) }
        completion(read(worker.store))
    }

    /// Records a room that was just created, so its epoch is kept.
    func recordCreation(_ commit: RoomCommit) {
        pipeline.appendCreation(commit)
    }

    // MARK: intents

    /// Applies `intent` to the room's working state at once; it is recorded
    /// with the next group commit, then delivered (or refused).
    func submit(_ intent: Intent, in runtime: RoomRuntime, sender: Participant, reply: ReplyTarget) {
        guard runtime.room != nil else {
            delegate?.answer(reply, error: WireError(.unavailable, "room \(runtime.name) is not loaded", id: intent.id))
            return
        }
        // While the store cannot be reached, one batch at a time finds out
        // whether it is back; the rest are refused at once, not queued.
        if !storeHealthy && pipeline.inFlight != nil {
            metrics.countError(.unavailable)
            let why = inDoubtSince != nil ? "earlier changes are not confirmed by the store yet" : storeProblem
            delegate?.answer(reply, error: WireError(
                .unavailable, "the change could not be recorded (\(why)); nothing was applied", id: intent.id))
            return
        }
        runtime.pendingIntents += 1
        runtime.wasUsed = true
        if case .connection(let connection) = reply { connection.pendingIntents += 1 }
        let pending = apply(intent, in: runtime, sender: sender, reply: reply)
        pipeline.append(pending)
        if Self.plantedEarlyAck { delegate?.deliver(pending) }
        if worker.isSynchronous { flush() }
    }

    #if HAPPY_PLANTED_EARLY_ACK
    /// DELIBERATE DEFECT, built only with `-Xswiftc -DHAPPY_PLANTED_EARLY_ACK`
    /// for `make chaos-planted`, to prove the chaos checker catches it: intents
    /// are acked and broadcast as soon as they are applied in memory, before
    /// the store records them, so a failed commit loses acknowledged intents.
    static let plantedEarlyAck = true
    #else
    static let plantedEarlyAck = false
    #endif

    /// Runs the reducer on the room's working state and encodes the event once.
    private func apply(_ intent: Intent, in runtime: RoomRuntime, sender: Participant, reply: ReplyTarget) -> PendingIntent {
        let applied = runtime.room!.apply(intent.action, sender: sender, time: clock.wallMilliseconds(), reducer: reducer)
        let frame = applied.event.map {
            OutboundFrame(encoded: ServerMessageEncoder.event($0, headroom: OutboundFrame.headroom), seq: $0.seq)
        }
        return PendingIntent(runtime: runtime, reply: reply, intent: intent, sender: sender, applied: applied, frame: frame)
    }

    /// Starts the next group commit if none is running (after every loop turn).
    func flush() {
        while let batch = pipeline.startBatch(withHistory: worker.store.keepsHistory, labels: dragonStatus) {
            if batch.commits.isEmpty {
                finish(batch: batch.id, result: .success([]), seconds: 0)
            } else if worker.isSynchronous {
                let started = clock.fresh()
                let result: Result<[CommitConflict], StoreError>
                do throws(StoreError) { result = .success(try worker.store.commit(batch.commits)) } catch {
                    result = .failure(error)
                }
                finish(batch: batch.id, result: result, seconds: clock.fresh() - started)
            } else {
                inFlightSince = clock.fresh()
                worker.commit(batch: batch.id, batch.commits)
                return
            }
        }
    }

    /// The store worker's answer for a batch.
    func commitFinished(batch: UInt64, result: Result<[CommitConflict], StoreError>, seconds: Double) {
        if case .failure(let error) = result, let inFlight = pipeline.inFlight, inFlight.id == batch,
           error.kind == .inDoubt || inDoubtSince != nil {
            // Sent, but not known to be recorded: neither ack nor refuse; send
            // the same commits again (their tokens make that safe) until the
            // store answers.
            holdInDoubt(inFlight, error)
            return
        }
        if let since = inDoubtSince {
            inDoubtSince = nil
            logger.info("commits in doubt resolved", ["store": storeKind, "seconds": Self.seconds(clock.fresh() - since)])
        }
        finish(batch: batch, result: result, seconds: seconds)
        flush()
        for name in refreshesAfterCommit {
            guard let runtime = delegate?.runtime(named: name) else { refreshesAfterCommit.remove(name); continue }
            if runtime.pendingIntents == 0 || pipeline.inFlight == nil {
                refreshesAfterCommit.remove(name)
                worker.refresh(name)
            }
        }
    }

    private func holdInDoubt(_ batch: CommitPipeline.Batch, _ error: StoreError) {
        let now = clock.fresh()
        if inDoubtSince == nil {
            inDoubtSince = now
            metrics.storeFailures += 1
            logger.error("store write sent without an answer; its intents wait, resent until the store answers",
                         ["store": storeKind, "intents": "\(batch.intents.count)", "error": error.message])
        }
        storeHealthy = false
        storeProblem = error.message
        // Intents applied on top were never sent: refuse them now. Their
        // rooms' working state is put right once the batch is settled.
        for intent in pipeline.takeOpen() {
            if !unsettledRooms.contains(where: { $0 === intent.runtime }) { unsettledRooms.append(intent.runtime) }
            intent.runtime.pendingIntents -= 1
            if case .connection(let connection) = intent.reply { connection.pendingIntents -= 1 }
            metrics.countError(.unavailable)
            delegate?.answer(intent.reply, error: WireError(
                .unavailable, "the change could not be recorded (earlier changes are not confirmed by the store yet); "
                    + "nothing was applied", id: intent.intent.id))
        }
        worker.commit(batch: batch.id, batch.commits, after: Self.inDoubtRetrySeconds)
    }

    private func finish(batch id: UInt64, result: Result<[CommitConflict], StoreError>, seconds: Double) {
        guard let batch = pipeline.finishBatch(id: id), let delegate else { return }
        if !batch.commits.isEmpty { metrics.commitLatency.observe(seconds) }
        for commit in batch.commits { delegate.runtime(named: commit.room)?.creationPending = false }
        let unsettled = unsettledRooms
        unsettledRooms.removeAll()
        switch result {
        case .success(let conflicts):
            if !storeHealthy {
                storeHealthy = true
                lastFailureLog = 0
                logger.info("store recovered", ["store": storeKind])
            }
            let conflicted = Set(conflicts.map(\.room))
            let recorded = batch.intents.filter { !conflicted.contains($0.runtime.name) }
            if !Self.plantedEarlyAck { for intent in recorded { delegate.deliver(intent) } }
            delegate.batchDelivered(recorded)
            // Drop what refused intents left in the working state.
            for runtime in unsettled where !conflicted.contains(runtime.name) { runtime.room?.rollback() }
            for conflict in conflicts { retry(conflict, batch: batch) }
        case .failure(let error):
            storeFailed(error, batch: batch)
        }
    }

    /// Another node recorded first: catch up with what the store holds, then
    /// apply this room's intents again on top (same order, new seqs). Nobody
    /// saw the refused events, so replaying them is invisible to clients.
    private func retry(_ conflict: CommitConflict, batch: CommitPipeline.Batch) {
        guard let delegate, let runtime = delegate.runtime(named: conflict.room) else { return }
        metrics.commitConflicts += 1
        let refused = batch.intents.filter { $0.runtime === runtime } + pipeline.takeOpen(of: runtime)
        delegate.advance(runtime, to: conflict.current,
                         refusedBase: batch.commits.first { $0.room == conflict.room }?.baseSeq)
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
        let now = clock.fresh()
        if now - lastFailureLog > 10 {
            lastFailureLog = now
            logger.error("store write failed; intents refused until it recovers",
                         ["store": storeKind, "kind": error.kind.rawValue, "error": error.message,
                          "failures": "\(metrics.storeFailures)"])
        }
        for intent in failed { intent.runtime.room?.rollback() }
        for intent in failed where !Self.plantedEarlyAck {
            intent.runtime.pendingIntents -= 1
            if case .connection(let connection) = intent.reply { connection.pendingIntents -= 1 }
            metrics.countError(.unavailable)
            delegate?.answer(intent.reply, error: WireError(
                .unavailable, "the change could not be recorded (\(error.message)); nothing was applied",
                id: intent.intent.id))
        }
    }

    /// Waits for queued store work, then closes the store.
    func close() {
        worker.close()
    }
}
