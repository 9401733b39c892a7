import Synchronization

/// Hands what a `HappySession` hears to the async sequences of a
/// `HappyRoom`: each subscriber has a continuation of its own, added when a
/// sequence is made and removed when its consumer stops (or the task
/// iterating it is cancelled). Called where the session calls its delegate.
final class RoomHub: HappySessionDelegate, Sendable {
    private struct Subscribers {
        var next = 0
        var updates: [Int: AsyncStream<RoomUpdate>.Continuation] = [:]
        var states: [Int: AsyncStream<Scene>.Continuation] = [:]
        var presence: [Int: AsyncStream<RoomPresence>.Continuation] = [:]
        var pointers: [Int: AsyncStream<[PointerEntry]>.Continuation] = [:]
        var statuses: [Int: AsyncStream<ConnectionState>.Continuation] = [:]
        var wire: [Int: AsyncStream<WireRecord>.Continuation] = [:]
        var seeds: [Int: @Sendable (RoomUpdate, Scene) -> Void] = [:]
        var finished = false
    }

    private let subscribers = Mutex(Subscribers())
    /// The first welcome or end, for `HappyRoom.join`.
    private let joined = Mutex<(waiters: [Answer<Void>], outcome: Result<Void, SessionError>?)>(([], nil))

    // MARK: subscribing

    func updates() -> AsyncStream<RoomUpdate> {
        stream(\.updates, current: nil, buffering: .unbounded)
    }

    func states(current: Scene?) -> AsyncStream<Scene> {
        stream(\.states, current: current, buffering: .bufferingNewest(1))
    }

    func presence(current: RoomPresence?) -> AsyncStream<RoomPresence> {
        stream(\.presence, current: current, buffering: .bufferingNewest(1))
    }

    func pointers(current: [PointerEntry]) -> AsyncStream<[PointerEntry]> {
        stream(\.pointers, current: current, buffering: .bufferingNewest(1))
    }

    func statuses(current: ConnectionState?) -> AsyncStream<ConnectionState> {
        stream(\.statuses, current: current, buffering: .unbounded)
    }

    func wire() -> AsyncStream<WireRecord> {
        stream(\.wire, current: nil, buffering: .unbounded)
    }

    /// `handler` hears every update with the scene after it, where the session calls its delegate (the seed views).
    func observe(_ handler: @escaping @Sendable (RoomUpdate, Scene) -> Void) -> Int {
        subscribers.withLock { state in
            state.next += 1
            state.seeds[state.next] = handler
            return state.next
        }
    }

    func stopObserving(_ key: Int) {
        _ = subscribers.withLock { $0.seeds.removeValue(forKey: key) }
    }

    private func stream<Element: Sendable>(_ list: WritableKeyPath<Subscribers, [Int: AsyncStream<Element>.Continuation]>,
                                           current: Element?,
                                           buffering: AsyncStream<Element>.Continuation.BufferingPolicy) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: buffering)
        let key: Int? = subscribers.withLock { state in
            guard !state.finished else { return nil }
            state.next += 1
            state[keyPath: list][state.next] = continuation
            return state.next
        }
        guard let key else {
            if let current { continuation.yield(current) }
            continuation.finish()
            return stream
        }
        if let current { continuation.yield(current) }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(key) }
        return stream
    }

    /// Keys are unique across the lists: a key is removed from whichever holds it.
    private func unsubscribe(_ key: Int) {
        subscribers.withLock { state in
            state.updates[key] = nil
            state.states[key] = nil
            state.presence[key] = nil
            state.pointers[key] = nil
            state.statuses[key] = nil
            state.wire[key] = nil
        }
    }

    /// The session ended for good: every sequence finishes.
    func finish() {
        let all = subscribers.withLock { state -> Subscribers in
            let all = state
            state = Subscribers()
            state.finished = true
            return all
        }
        all.updates.values.forEach { $0.finish() }
        all.states.values.forEach { $0.finish() }
        all.presence.values.forEach { $0.finish() }
        all.pointers.values.forEach { $0.finish() }
        all.statuses.values.forEach { $0.finish() }
        all.wire.values.forEach { $0.finish() }
    }

    // MARK: joining

    /// Gives `answer` the first welcome (or the session's end), now if it came.
    func whenJoined(_ answer: Answer<Void>) {
        let known = joined.withLock { state -> Result<Void, SessionError>? in
            if state.outcome == nil { state.waiters.append(answer) }
            return state.outcome
        }
        if let known { answer.give(known) }
    }

    private func settleJoin(_ outcome: Result<Void, SessionError>) {
        let waiters = joined.withLock { state -> [Answer<Void>] in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.give(outcome) }
    }

    // MARK: HappySessionDelegate

    private func publish(_ update: RoomUpdate, scene: Scene?, presence: RoomPresence? = nil) {
        let (updates, states, people, seeds) = subscribers.withLock {
            (Array($0.updates.values), Array($0.states.values), Array($0.presence.values), Array($0.seeds.values))
        }
        for continuation in updates { continuation.yield(update) }
        if let scene {
            for continuation in states { continuation.yield(scene) }
            for seed in seeds { seed(update, scene) }
        }
        if let presence { for continuation in people { continuation.yield(presence) } }
    }

    private func record(_ record: WireRecord) {
        for continuation in subscribers.withLock({ Array($0.wire.values) }) { continuation.yield(record) }
    }

    private func publishPresence(_ session: HappySession) {
        let ledger = session.snapshot.ledger
        let presence = RoomPresence(people: ledger.presence, count: ledger.presenceCount)
        for continuation in subscribers.withLock({ Array($0.presence.values) }) { continuation.yield(presence) }
    }

    func session(_ session: HappySession, didJoin welcome: WelcomeMessage, outcome: ResumeOutcome) {
        record(.joined(welcome, outcome))
        let states = subscribers.withLock { Array($0.states.values) }
        for continuation in states { continuation.yield(welcome.state) }
        publishPresence(session)
        switch outcome {
        case .gap(let lastSeen, let seq) where seq > lastSeen:
            publish(.missed(lastSeen + 1...seq), scene: welcome.state)
        case .newEpoch:
            // The room's past is gone (it was deleted or lost): its numbering starts again.
            publish(.resynced(seq: welcome.seq, state: welcome.state), scene: welcome.state)
        default:
            break
        }
    }

    func session(_ session: HappySession, didReceive event: EventMessage, text: String) {
        record(.event(event, text: text))
        publish(.event(HappyEvent(event)), scene: event.state)
    }

    func session(_ session: HappySession, didReceive tick: TickMessage, text: String) {
        record(.tick(tick, text: text))
        publish(.tick(HappyTick(tick)), scene: tick.state)
        if tick.presence != nil { publishPresence(session) }
    }

    func session(_ session: HappySession, missed range: ClosedRange<UInt64>, before tick: TickMessage) {
        record(.missed(range))
        publish(.missed(range), scene: nil)
    }

    func session(_ session: HappySession, didResync seq: UInt64, state: Scene, text: String) {
        record(.resync(seq: seq, state: state, text: text))
        publish(.resynced(seq: seq, state: state), scene: state)
        publishPresence(session)
    }

    func session(_ session: HappySession, didChangeDelivery mode: DeliveryMode, tickMs: Int) {
        record(.delivery(mode, tickMs: tickMs))
        publish(.delivery(mode, tickMs: tickMs), scene: nil)
    }

    func session(_ session: HappySession, presence change: PresenceChange, text: String) {
        record(.presence(change, text: text))
        publishPresence(session)
    }

    func session(_ session: HappySession, didUpdatePointers update: PointerUpdate, text: String?) {
        record(.pointers(update, text: text))
        let pointers = session.pointers.values.sorted { $0.id < $1.id }
        for continuation in subscribers.withLock({ Array($0.pointers.values) }) { continuation.yield(pointers) }
    }

    func session(_ session: HappySession, didReceiveError error: WireError) {
        record(.error(error))
    }

    func session(_ session: HappySession, didChange state: ConnectionState) {
        record(.status(state))
        for continuation in subscribers.withLock({ Array($0.statuses.values) }) { continuation.yield(state) }
        switch state {
        case .connected: settleJoin(.success(()))
        case .ended(let error):
            settleJoin(.failure(error))
            finish()
        default: break
        }
    }
}
