import HappyCore

/// What a client knows of its room across connections: epoch, the last
/// event seq passed on, the scene, presence. A value type whose mutating
/// methods say what to do with each message, so that replayed events are
/// passed on exactly once and in order.
public struct RoomLedger: Sendable {
    /// The room's name, from the latest welcome; nil before the first.
    public private(set) var room: String?
    /// This client, as the latest welcome named it; nil before the first.
    public private(set) var you: Participant?
    /// The room's history epoch (a new one means its numbering started again); nil
    /// before the first welcome unless `prime(since:epoch:)` set it.
    public private(set) var epoch: String?
    /// The newest event seq passed on (or covered by a welcome or resync).
    public private(set) var deliveredSeq: UInt64 = 0
    /// The scene as last known; nil before the first welcome.
    public private(set) var state: Scene?
    /// The seq `state` belongs to.
    public private(set) var stateSeq: UInt64 = 0
    /// The people this client knows to be in the room; in a crowd room only some
    /// of them (see `presenceCount`).
    public private(set) var presence: [Participant] = []
    /// How many people are in the room (observers are not counted).
    public private(set) var presenceCount = 0
    /// How the room's events arrive now (section 12).
    public private(set) var delivery = DeliveryMode.each
    /// States after recent events, to answer "the scene after seq N".
    private var recent: [(seq: UInt64, state: Scene)] = []
    private static let recentLimit = 64

    /// An empty ledger: nothing seen yet.
    public init() {}

    /// Where to resume from: the last seq seen and its epoch.
    public var resumePoint: (since: UInt64, epoch: String)? {
        epoch.map { (deliveredSeq, $0) }
    }

    /// Starts as if the events up to `since` of `epoch` had been seen, so
    /// that the first connection replays the ones after it.
    public mutating func prime(since: UInt64, epoch: String) {
        guard self.epoch == nil else { return }
        self.epoch = epoch
        deliveredSeq = since
    }

    /// Takes in a welcome; says how it relates to the previous connection.
    public mutating func welcome(_ welcome: WelcomeMessage) -> ResumeOutcome {
        let outcome: ResumeOutcome
        if epoch == nil {
            outcome = .fresh
            deliveredSeq = welcome.seq
        } else if welcome.epoch != epoch || welcome.seq < deliveredSeq {
            outcome = .newEpoch
            deliveredSeq = welcome.seq
        } else if welcome.recovered {
            outcome = .resumed(missed: welcome.seq - deliveredSeq)
        } else {
            outcome = .gap(lastSeen: deliveredSeq, seq: welcome.seq)
            deliveredSeq = welcome.seq
        }
        if case .resumed = outcome {} else { recent.removeAll() }
        room = welcome.room
        you = welcome.you
        epoch = welcome.epoch
        state = welcome.state
        stateSeq = welcome.seq
        presence = welcome.presence
        presenceCount = welcome.presenceCount
        delivery = welcome.delivery
        return outcome
    }

    /// Takes in a tick; `isNew` is false when it carries nothing new (it ends
    /// at or before what was passed on and holds no presence). `missed` names
    /// the events between the last one passed on and the tick's `from`, when
    /// it starts past the next seq (a tick may start at or before it: a
    /// joining client's first tick can cover events its welcome covered).
    public mutating func tick(_ tick: TickMessage) -> (isNew: Bool, missed: ClosedRange<UInt64>?) {
        if let batch = tick.presence { presence(batch) }
        guard tick.seq > deliveredSeq || tick.eventCount == 0 else { return (false, nil) }
        var missed: ClosedRange<UInt64>?
        if tick.seq > deliveredSeq {
            if tick.from > deliveredSeq + 1 { missed = (deliveredSeq + 1)...(tick.from - 1) }
            deliveredSeq = tick.seq
            state = tick.state
            stateSeq = tick.seq
            recent.append((tick.seq, tick.state))
            if recent.count > Self.recentLimit { recent.removeFirst(recent.count - Self.recentLimit) }
        }
        return (true, missed)
    }

    /// The room's delivery changed.
    public mutating func delivery(_ mode: DeliveryMode) {
        delivery = mode
    }

    /// Takes in a crowd room's batch of joins and leaves.
    public mutating func presence(_ batch: PresenceBatch) {
        for participant in batch.joined where !presence.contains(participant) { presence.append(participant) }
        presence.removeAll { batch.left.contains($0) }
        presenceCount = batch.count
    }

    /// Takes in an event; false when it was already passed on (a replay
    /// of something seen), so it must not be passed on again.
    public mutating func event(_ event: EventMessage) -> Bool {
        guard event.seq > deliveredSeq else { return false }
        deliveredSeq = event.seq
        if event.seq > stateSeq {
            state = event.state
            stateSeq = event.seq
        }
        recent.append((event.seq, event.state))
        if recent.count > Self.recentLimit { recent.removeFirst(recent.count - Self.recentLimit) }
        return true
    }

    /// Takes in a resync: the state replaces everything queued before `seq`.
    public mutating func resync(seq: UInt64, state: Scene, presence: [Participant]?, presenceCount: Int?) {
        self.state = state
        stateSeq = seq
        deliveredSeq = max(deliveredSeq, seq)
        if let presence {
            self.presence = presence
            self.presenceCount = presenceCount ?? presence.count
        }
    }

    /// Takes in a join or leave.
    public mutating func presence(_ change: PresenceChange) {
        switch change {
        case .joined(let participant):
            if !presence.contains(participant) { presence.append(participant) }
            presenceCount += 1
        case .left(let participant):
            presence.removeAll { $0 == participant }
            presenceCount = max(0, presenceCount - 1)
        case .batch(let batch):
            presence(batch)
        }
    }

    /// The scene right after event `seq` when it is still known (in tick
    /// delivery, after the tick that carried it), else the current one;
    /// seq 0 (a tied vote's ack, which names no event) is the current one.
    public func state(after seq: UInt64) -> Scene? {
        guard seq > 0 else { return state }
        return recent.first(where: { $0.seq >= seq })?.state ?? state
    }
}
