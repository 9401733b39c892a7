/// A room's numbered state at one point: its scene after event `seq`.
public struct RoomSnapshot: Equatable, Sendable {
    /// The seq of the last event in this state (0 before the first).
    public var seq: UInt64
    /// The scene after that event.
    public var scene: Scene

    /// A snapshot from its parts.
    public init(seq: UInt64, scene: Scene) {
        self.seq = seq
        self.scene = scene
    }
}

/// An intent applied to a room's working state, waiting to be recorded.
public struct AppliedIntent: Sendable {
    /// What the reducer made of the intent: the event's name, its changes and the ack's result.
    public var outcome: Outcome
    /// The event to broadcast once recorded; nil when nothing changed.
    public var event: RoomEvent?
    /// The seq to acknowledge: the event's, or the room's current one.
    public var ackSeq: UInt64
}

/// One room's ordered life: the reducer applied to a *working* state that runs
/// ahead while changes are being recorded, and the *committed* state that
/// readers see. A failed write rolls the working state back, so nothing that
/// was not recorded is ever shown or acknowledged. The dragon panel's status
/// label follows the committed events here, and nowhere else. A value: its
/// holder decides who may change it.
public struct Room<HistoryElement> {
    /// The room's name.
    public let name: String
    /// The room's epoch; only `replace` changes it.
    public private(set) var epoch: String
    /// The recorded state: what readers see and what acks report.
    public private(set) var committed: RoomSnapshot
    /// The state intents apply to; ahead of `committed` while writes are under way.
    public private(set) var working: RoomSnapshot
    /// The recorded events kept for resuming clients, at most `historyCapacity`.
    public private(set) var history: HistoryRing<HistoryElement>
    /// The label's texts (the art's initial one).
    public let labels: DragonStatus
    /// The dragon panel's status label after the committed state.
    public private(set) var dragonStatus: String
    /// When the last committed event happened (milliseconds since 1970), when known.
    public private(set) var lastEventTime: Int64?

    /// `history`: recorded events, oldest first; `dragonStatus` is the label
    /// after them (nil: the initial one).
    public init(name: String, epoch: String, snapshot: RoomSnapshot, historyCapacity: Int,
                history: [(seq: UInt64, element: HistoryElement)] = [], labels: DragonStatus = DragonStatus(),
                dragonStatus: String? = nil) {
        self.name = name
        self.epoch = epoch
        committed = snapshot
        working = snapshot
        self.history = HistoryRing(capacity: historyCapacity)
        for event in history { self.history.append(seq: event.seq, event.element) }
        self.labels = labels
        self.dragonStatus = dragonStatus ?? labels.initial
    }

    /// Whether the working state differs from the committed one.
    public var hasUncommittedChanges: Bool { working.seq != committed.seq || working.scene != committed.scene }

    /// Applies `action` to the working state. An event gets the next seq.
    /// `votes`: the votes a crowd's voted event carries (section 12).
    public mutating func apply(_ action: Action, sender: Participant, time: Int64, reducer: SceneReducer,
                      votes: VoteTally? = nil) -> AppliedIntent {
        var scene = working.scene
        let outcome = reducer.apply(action, to: &scene)
        guard let name = outcome.eventName else {
            return AppliedIntent(outcome: outcome, event: nil, ackSeq: working.seq)
        }
        working = RoomSnapshot(seq: working.seq + 1, scene: scene)
        let event = RoomEvent(seq: working.seq, time: time, room: self.name, name: name, sender: sender,
                              changes: outcome.changes, state: scene, votes: votes)
        return AppliedIntent(outcome: outcome, event: event, ackSeq: working.seq)
    }

    /// Marks everything up to `event` as recorded.
    public mutating func commit(_ event: RoomEvent, historyElement: HistoryElement) {
        committed = RoomSnapshot(seq: event.seq, scene: event.state)
        history.append(seq: event.seq, historyElement)
        if let text = labels.after(event.name, dragon: event.state.dragon) { dragonStatus = text }
        lastEventTime = event.time
    }

    /// The time of the last event when it was recorded elsewhere (another node, the store).
    public mutating func noteLastEvent(at time: Int64) {
        lastEventTime = time
    }

    /// Forgets working changes that could not be recorded.
    public mutating func rollback() {
        working = committed
    }

    /// Takes events recorded elsewhere (another node) that follow the
    /// committed state directly, ending at `snapshot`. Working changes are
    /// dropped. `dragonStatus`: the label after them (nil: unchanged).
    public mutating func catchUp(to snapshot: RoomSnapshot, events: [(seq: UInt64, element: HistoryElement)],
                        dragonStatus: String? = nil) {
        for event in events { history.append(seq: event.seq, event.element) }
        committed = snapshot
        working = snapshot
        if let dragonStatus { self.dragonStatus = dragonStatus }
    }

    /// Replaces the whole state (a newer version read from a shared store),
    /// with the recorded events it holds and the label after them.
    public mutating func replace(epoch: String, snapshot: RoomSnapshot, history events: [(seq: UInt64, element: HistoryElement)] = [],
                        dragonStatus: String? = nil) {
        if epoch != self.epoch || snapshot.seq < committed.seq { history.removeAll() }
        self.epoch = epoch
        committed = snapshot
        working = snapshot
        for event in events { history.append(seq: event.seq, event.element) }
        self.dragonStatus = dragonStatus ?? labels.initial
    }
}
