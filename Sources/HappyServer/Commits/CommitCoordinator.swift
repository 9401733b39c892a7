import HappyCore

/// Group commit and the store: intents applied during one loop turn are
/// recorded in one store call; only when it returns are their events
/// broadcast and their acks sent, in order. The decisions are the
/// `CommitMachine`'s; this is its executor: it applies intents to the
/// rooms' working state, counts what each room and connection has pending,
/// calls the store and performs the actions the machine returns.
final class CommitCoordinator {
    private var machine = CommitMachine()
    private let webhooks: WebhookFeed
    private let store: any StoreAccess
    private let reducer: SceneReducer
    private let publisher: IntentDelivery
    private let catchUp: RoomCatchUp
    private let roomKey = Room<OutboundFrame>.Key()
    private let commitsKey = RoomCommitState.Key()
    private let clock: ServiceClock
    private let metrics: Metrics
    private let logger: Logger
    /// Actions still to perform; a synchronous store answers while earlier
    /// ones run, and its answer's actions wait their turn here.
    private var queued: [CommitAction] = []
    private var performing = false
    /// Run once the batch in flight has been answered and handled.
    private var batchWaiters: [() -> Void] = []
    private let intentTallyKey = IntentTally.Key()

    init(store: any StoreAccess, reducer: SceneReducer, publisher: IntentDelivery, catchUp: RoomCatchUp,
         webhooks: WebhookFeed, clock: ServiceClock, metrics: Metrics, logger: Logger) {
        self.webhooks = webhooks
        self.store = store
        self.reducer = reducer
        self.publisher = publisher
        self.catchUp = catchUp
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    var storeKind: String { store.kind }
    /// Nothing applied is waiting for the store.
    var isIdle: Bool { machine.isIdle }
    var hasBatchInFlight: Bool { machine.hasBatchInFlight }
    var storeHealthy: Bool { machine.storeHealthy }

    /// What is wrong with the store, for `/healthz`; empty when healthy.
    func healthProblems() -> [String] {
        machine.healthProblems(now: clock.fresh(), storeKind: store.kind)
    }

    /// Runs `body` once the batch in flight has been answered (at once when none is).
    func whenBatchFinishes(_ body: @escaping () -> Void) {
        guard machine.hasBatchInFlight else { return body() }
        batchWaiters.append(body)
    }

    // MARK: intents

    /// Applies `intent` to the room's working state at once; it is recorded
    /// with the next group commit, then delivered (or refused).
    /// `votes`: a voted dragon event's tally (the intent is the round's majority).
    func submit(_ intent: Intent, in runtime: RoomRuntime, sender: Participant, reply: ReplyTarget,
                votes: VoteTally? = nil) {
        if let refusal = machine.refusal(intentID: intent.id) {
            metrics.countError(.unavailable)
            return publisher.refuse(reply, error: refusal)
        }
        guard let pending = apply(intent, in: runtime, sender: sender, reply: reply, votes: votes) else {
            return publisher.refuse(reply, error: Self.notLoaded(runtime, id: intent.id))
        }
        track(runtime, reply)
        // A room only read so far is recorded with its first change, ahead of it in the batch.
        if pending.applied.event != nil { recordUnrecordedCreation(of: runtime) }
        perform(machine.applied(pending))
        if store.isSynchronous { flush() }
    }

    /// A room just created: its epoch is recorded with the next batch, and
    /// the room stays in memory until then.
    func recordCreation(_ commit: RoomCommit, of runtime: RoomRuntime) {
        runtime.modify(commitsKey) { $0.creationQueued() }
        var creation = commit
        creation.deliveries = webhooks.created(commit.room, epoch: commit.epoch)
        machine.created(creation, of: runtime)
    }

    /// A room the store has never held was loaded: its creation waits until
    /// someone joins or changes it, so that reading made-up rooms stores nothing.
    func keepUnrecorded(_ creation: RoomCommit, of runtime: RoomRuntime) {
        runtime.modify(commitsKey) { $0.keepUnrecorded(creation) }
    }

    /// Records the creation of a room the store has never held, now that
    /// it is used; nil when there is none to record.
    @discardableResult
    func recordUnrecordedCreation(of runtime: RoomRuntime) -> RoomCommit? {
        guard let creation = runtime.modify(commitsKey, { $0.takeUnrecordedCreation() }) else { return nil }
        recordCreation(creation, of: runtime)
        return creation
    }

    /// The store answered a read (a room read again): it may be healthy again.
    func storeAnswered() {
        perform(machine.storeAnswered())
    }

    /// Starts the next group commit if none is running (after every loop turn).
    func flush() {
        guard machine.hasBatchToStart else { return }
        perform([.flush])
    }

    /// Brings a room to what the shared store holds (another node's events,
    /// or the room read again). A room only read here so far follows
    /// nothing until someone records it, then follows that.
    func follow(_ runtime: RoomRuntime, to stored: StoredRoom?) {
        if runtime.isUnrecorded {
            guard stored != nil else { return }
            runtime.modify(commitsKey) { $0.dropUnrecordedCreation() }
        }
        advance(runtime, to: stored, refusedBase: nil)
    }

    /// `RoomCatchUp` moves the room to `stored`, then its clients hear of it;
    /// a room the store lost is created again.
    private func advance(_ runtime: RoomRuntime, to stored: StoredRoom?, refusedBase: UInt64?) {
        guard let outcome = runtime.modify(roomKey, { catchUp.advance(&$0, to: stored, refusedBase: refusedBase) })
        else { return }
        if let creation = catchUp.announce(outcome, in: runtime) {
            recordCreation(creation, of: runtime)
        }
    }

    private static func notLoaded(_ runtime: RoomRuntime, id: String?) -> WireError {
        WireError(.unavailable, "room \(runtime.name) is not loaded", id: id)
    }

    /// Runs the reducer on the room's working state and encodes the event
    /// once; nil when the room is not loaded.
    private func apply(_ intent: Intent, in runtime: RoomRuntime, sender: Participant, reply: ReplyTarget,
                       votes: VoteTally?) -> PendingIntent? {
        let time = clock.wallMilliseconds()
        guard let applied = runtime.modify(roomKey, {
            $0.apply(intent.action, sender: sender, time: time, reducer: reducer, votes: votes)
        }) else { return nil }
        let frame = applied.event.map {
            OutboundFrame(encoded: ServerMessageEncoder.event($0, headroom: OutboundFrame.headroom), seq: $0.seq)
        }
        return PendingIntent(runtime: runtime, reply: reply, intent: intent, sender: sender, applied: applied, frame: frame,
                             votes: votes)
    }

    // MARK: pending counts (the one place they change)

    private func track(_ runtime: RoomRuntime, _ reply: ReplyTarget) {
        runtime.modify(commitsKey) { $0.track() }
        reply.connection?.modify(intentTallyKey) { $0.track(now: clock.now()) }
    }

    private func settle(_ intent: PendingIntent) {
        intent.runtime.modify(commitsKey) { $0.settle() }
        intent.reply.connection?.modify(intentTallyKey) { $0.settle() }
    }

    // MARK: performing

    private func perform(_ actions: [CommitAction]) {
        queued += actions
        guard !performing else { return }
        performing = true
        var next = 0
        while next < queued.count {
            let action = queued[next]
            next += 1
            execute(action)
        }
        queued.removeAll(keepingCapacity: true)
        performing = false
    }

    private func execute(_ action: CommitAction) {
        switch action {
        case .record(let batch, let delay):
            // Joins and leaves gathered so far go to the store first, so a
            // webhook hears them in order with the events.
            webhooks.flush()
            store.commit(batch.commits, after: delay) { [self] result in
                perform(machine.commitFinished(batch: batch.id, result: result.outcome, seconds: result.seconds,
                                               now: clock.fresh()))
            }
        case .recorded(let rooms, let seconds):
            if !rooms.isEmpty { metrics.commitLatency.observe(seconds) }
            for runtime in rooms { runtime.modify(commitsKey) { $0.recorded() } }
            webhooks.recorded()
        case .deliver(let intent):
            settle(intent)
            if let event = intent.applied.event, let frame = intent.frame {
                intent.runtime.modify(roomKey) { $0.commit(event, historyElement: frame) }
                publisher.publish(event, frame: frame, in: intent.runtime)
            }
            publisher.acknowledge(intent.reply, of: intent.intent, seq: intent.applied.ackSeq,
                                  result: intent.applied.outcome.result, in: intent.runtime)
        case .delivered(let intents):
            publisher.batchDelivered(changing: intents.compactMap { $0.applied.event == nil ? nil : $0.runtime })
        case .refuse(let intent, let error):
            settle(intent)
            metrics.countError(error.code)
            publisher.refuse(intent.reply, error: error)
        case .rollback(let runtime):
            runtime.modify(roomKey) { $0.rollback() }
        case .catchUp(let runtime, let stored, let refusedBase, let reapply):
            advance(runtime, to: stored, refusedBase: refusedBase)
            for intent in reapply {
                guard let pending = apply(intent.intent, in: runtime, sender: intent.sender, reply: intent.reply,
                                          votes: intent.votes) else {
                    // Answered, not dropped: its sender counts it pending until then.
                    queued.append(.refuse(intent, Self.notLoaded(runtime, id: intent.intent.id)))
                    continue
                }
                queued += machine.applied(pending)
            }
        case .flush:
            // Events get the deliveries of the webhooks listed when their batch is built.
            queued += machine.flush(withHistory: store.keepsHistory, webhooks: webhooks.routing, now: clock.fresh())
        case .batchFinished:
            let waiters = batchWaiters
            batchWaiters.removeAll()
            for waiter in waiters { waiter() }
        case .note(let note):
            log(note)
        }
    }

    private func log(_ note: CommitNote) {
        switch note {
        case .storeFailed(let error, let logNow):
            metrics.storeFailures += 1
            guard logNow else { return }
            logger.error("store write failed; intents refused until it recovers",
                         ["store": store.kind, "kind": error.kind.rawValue, "error": error.message,
                          "failures": "\(metrics.storeFailures)"])
        case .heldInDoubt(let error, let intents):
            metrics.storeFailures += 1
            logger.error("store write sent without an answer; its intents wait, resent until the store answers",
                         ["store": store.kind, "intents": "\(intents)", "error": error.message])
        case .inDoubtResolved(let seconds):
            logger.info("commits in doubt resolved", ["store": store.kind, "seconds": CommitMachine.seconds(seconds)])
        case .storeRecovered:
            logger.info("store recovered", ["store": store.kind])
        case .conflict:
            metrics.commitConflicts += 1
        }
    }

    /// Waits for queued store work, then closes the store.
    func close() {
        store.close()
    }

    /// Lets go of the store for a process taking over (no final tidying).
    func release() {
        store.release()
    }
}

extension IntentTally {
    /// Made only here: `CommitCoordinator` alone changes a connection's `commits`.
    struct Key { fileprivate init() {} }
}

extension Room {
    /// Made only here: the commit path (`CommitCoordinator`) alone changes a room's loaded `room`.
    struct Key { fileprivate init() {} }
}

extension RoomCommitState {
    /// Made only here: `CommitCoordinator` alone changes a room's `commits`.
    struct Key { fileprivate init() {} }
}
