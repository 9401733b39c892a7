/// The votes behind a crowd's dragon event (PROTOCOL.md section 12).
public struct Votes: Equatable, Sendable {
    /// Votes for `dragon.forward`.
    public var forward: Int
    /// Votes for `dragon.back`.
    public var back: Int

    /// Creates a tally of `forward` and `back` votes.
    public init(forward: Int, back: Int) {
        self.forward = forward
        self.back = back
    }
}

/// An event of the room (PROTOCOL.md section 3): what the seeds' delegate
/// would have been told, who caused it, and what it changed.
public struct HappyEvent: Equatable, Sendable {
    /// The event's number in the room: one more than the event before it, within an epoch.
    public var seq: UInt64
    /// When the server recorded it, in milliseconds since 1970.
    public var time: Int64
    /// The delegate name as a type; nil for a name this kit does not know.
    public var name: EventName?
    /// The delegate name as sent: `forwardButtonClicked:`, `faceView:didChangeHappiness:`…
    public var delegateName: String
    /// Who caused it; nil for a crowd's voted dragon event.
    public var sender: Participant?
    /// The values it changed, before and after (empty when a dragon button at the edge moved
    /// nothing); a value of a path this kit does not know is left out (`HappyRoom.wire` has it).
    public var changes: [SceneChange]
    /// The scene right after it.
    public var state: Scene
    /// A voted dragon event's votes.
    public var votes: Votes?

    /// Reads an `event` message; a sender with an empty id (a voted event) becomes nil.
    public init(_ message: EventMessage) {
        seq = message.seq
        time = message.time
        name = EventName(rawValue: message.name)
        delegateName = message.name
        sender = message.sender.id.isEmpty ? nil : message.sender
        changes = message.changes.compactMap { SceneChange(wirePath: $0.path, from: $0.from, to: $0.to) }
        state = message.state
        votes = message.votes.map { Votes(forward: $0.forward, back: $0.back) }
    }
}

/// A crowd room's tick (PROTOCOL.md section 12): every event from `from`
/// to `seq` in one message.
public struct HappyTick: Equatable, Sendable {
    /// How many events of one delegate name the tick covers.
    public struct NameCount: Equatable, Sendable {
        /// The delegate name as a type; nil for a name this kit does not know.
        public var name: EventName?
        /// The delegate name as sent: `forwardButtonClicked:`, `faceView:didChangeHappiness:`…
        public var delegateName: String
        /// How many of the tick's events had this name.
        public var count: Int
    }

    /// The first event the tick covers (`seq` + 1 when it covers none).
    public var from: UInt64
    /// The last event the tick covers: the room's seq after it.
    public var seq: UInt64
    /// When the server sent the tick, in milliseconds since 1970.
    public var time: Int64
    /// How many events of each delegate name the tick covers.
    public var names: [NameCount]
    /// The most recent distinct senders (at most 8); `senderCount` counts them all.
    public var senders: [Participant]
    /// How many distinct senders the tick's events had.
    public var senderCount: Int
    /// The net change per path over the tick (paths this kit does not know are left out).
    public var changes: [SceneChange]
    /// The scene after event `seq`.
    public var state: Scene
    /// The tick's joins and leaves, if any.
    public var presence: PresenceBatch?
    /// The votes of the tick's voted dragon events, summed; nil when it has none.
    public var votes: Votes?

    /// How many events it covers (none when it carries joins and leaves only).
    public var eventCount: Int { seq >= from ? Int(seq - from + 1) : 0 }

    /// Reads a `tick` message.
    public init(_ message: TickMessage) {
        from = message.from
        seq = message.seq
        time = message.time
        names = message.names.map { NameCount(name: EventName(rawValue: $0.name), delegateName: $0.name, count: $0.count) }
        senders = message.senders
        senderCount = message.senderCount
        changes = message.changes.compactMap { SceneChange(wirePath: $0.path, from: $0.from, to: $0.to) }
        state = message.state
        presence = message.presence
        votes = message.votes.map { Votes(forward: $0.forward, back: $0.back) }
    }
}

/// What `HappyRoom.events` yields, in the room's order: each event once,
/// across reconnects.
public enum RoomUpdate: Equatable, Sendable {
    /// One event (rooms delivering each event on its own).
    case event(HappyEvent)
    /// Several events at once (a crowd room's tick).
    case tick(HappyTick)
    /// These events will never arrive (a tick or a welcome skipped past
    /// them); the next update's state is current.
    case missed(ClosedRange<UInt64>)
    /// The server replaced this client's queued events by the room's state
    /// at `seq` (it fell too far behind).
    case resynced(seq: UInt64, state: Scene)
    /// The room's delivery changed (section 12): one message per event, or a tick every `tickMs`.
    case delivery(DeliveryMode, tickMs: Int)

    /// The seq the room is at after this update.
    public var seq: UInt64? {
        switch self {
        case .event(let event): return event.seq
        case .tick(let tick): return tick.seq
        case .missed(let range): return range.upperBound
        case .resynced(let seq, _): return seq
        case .delivery: return nil
        }
    }
}

/// Who is in the room: the people listed (at most a crowd's batch size)
/// and how many there are in all.
public struct RoomPresence: Equatable, Sendable {
    /// The people this client knows to be here; in a crowd room only some of them (see `count`).
    public var people: [Participant]
    /// How many people are in the room in all (observers are not counted).
    public var count: Int

    /// Creates a presence of `people`, `count` in all.
    public init(people: [Participant], count: Int) {
        self.people = people
        self.count = count
    }
}

/// One thing a room's connection heard, with the message as the server sent it where
/// there is one: `HappyRoom.wire`, for logs and tools that show the wire
/// (`happyclient watch`). Programs that act on the room want `HappyRoom.events`.
public enum WireRecord: Sendable {
    /// A welcome: the first, or after a reconnect, with what the resume came to.
    case joined(WelcomeMessage, ResumeOutcome)
    /// An event of the room, and its JSON.
    case event(EventMessage, text: String)
    /// A crowd room's tick, and its JSON.
    case tick(TickMessage, text: String)
    /// Events a tick skipped, which will never arrive.
    case missed(ClosedRange<UInt64>)
    /// The room switched delivery, or its tick changed (the message carries nothing else).
    case delivery(DeliveryMode, tickMs: Int)
    /// A join, a leave or a crowd's presence batch, and its JSON.
    case presence(PresenceChange, text: String)
    /// The server replaced what was queued by the state, and its JSON.
    case resync(seq: UInt64, state: Scene, text: String)
    /// The others' pointers changed: a batch (with its JSON), a welcome's list or a leave.
    case pointers(PointerUpdate, text: String?)
    /// An error the server sent that answers no request of this client.
    case error(WireError)
    /// The connection's state changed; `.ended` is the last record.
    case status(ConnectionState)
}
