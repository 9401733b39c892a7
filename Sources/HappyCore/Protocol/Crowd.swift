/// How a room's events reach its clients (PROTOCOL.md section 12): one
/// message per event, or one per tick.
public enum DeliveryMode: String, Equatable, Sendable {
    /// One `event` message per event (sections 3–5).
    case each
    /// At most one `tick` message per client per tick, covering the events meanwhile.
    case tick
}

/// The votes behind a voted dragon event (`crowd.dragon` `vote`).
public struct VoteTally: Equatable, Sendable {
    /// Votes for `dragon.forward`.
    public var forward: Int
    /// Votes for `dragon.back`.
    public var back: Int
    /// The most recent distinct voters, newest first (for a tick's senders; not sent with the event).
    public var voters: [Participant]
    /// Every distinct voter's id (not sent with the event), so that a tick counts a voter once
    /// however many rounds and events it sent in. Empty for a tally read from the wire.
    public var voterIDs: Set<String>

    /// Creates a tally from its counts and, optionally, its voters.
    public init(forward: Int, back: Int, voters: [Participant] = [], voterIDs: Set<String> = []) {
        self.forward = forward
        self.back = back
        self.voters = voters
        self.voterIDs = voterIDs
    }
}

/// Joins and leaves gathered for one batch: a `presence` message of a crowd
/// room, or a tick's `presence`. At most `listLimit` of each are named; the
/// counts cover all of them.
public struct PresenceBatch: Equatable, Sendable {
    /// The most joins, and the most leaves, one batch names (50); the counts go on beyond it.
    public static let listLimit = 50

    /// Everyone in the room after the batch.
    public var count: Int
    /// The participants who joined, at most `listLimit`, in the order they joined.
    public var joined: [Participant] = []
    /// The participants who left, at most `listLimit`, in the order they left.
    public var left: [Participant] = []
    /// How many joined, named or not.
    public var joinedCount = 0
    /// How many left, named or not.
    public var leftCount = 0

    /// Creates a batch; `count` is the room's number of clients after it.
    public init(count: Int, joined: [Participant] = [], left: [Participant] = [], joinedCount: Int = 0,
                leftCount: Int = 0) {
        self.count = count
        self.joined = joined
        self.left = left
        self.joinedCount = joinedCount
        self.leftCount = leftCount
    }

    /// True when nobody joined or left.
    public var isEmpty: Bool { joinedCount == 0 && leftCount == 0 }
    /// It names someone (past `presenceBroadcastMax` a batch carries counts only).
    public var isNamed: Bool { !joined.isEmpty || !left.isEmpty }

    /// `participant` joined; `named`: it may be listed (the room is not past `presenceBroadcastMax`).
    public mutating func join(_ participant: Participant, named: Bool) {
        joinedCount += 1
        if named && joined.count < Self.listLimit { joined.append(participant) }
    }

    /// `participant` left; `named`: it may be listed (the room is not past `presenceBroadcastMax`).
    public mutating func leave(_ participant: Participant, named: Bool) {
        leftCount += 1
        if named && left.count < Self.listLimit { left.append(participant) }
    }

    /// This batch followed by `later` (the count is the later one's).
    public mutating func append(_ later: PresenceBatch) {
        count = later.count
        joinedCount += later.joinedCount
        leftCount += later.leftCount
        joined += later.joined.prefix(Self.listLimit - joined.count)
        left += later.left.prefix(Self.listLimit - left.count)
    }
}

/// What one tick carries: the events from `from` to `seq` counted by name,
/// their most recent senders, the net change of each path and the state
/// after them, and the room's joins and leaves meanwhile. A tick whose
/// `from` is `seq` + 1 carries no event.
public struct TickSummary: Equatable, Sendable {
    /// The most senders a tick names (8); `senderCount` counts all of them.
    public static let senderLimit = 8

    /// The room's name.
    public var room: String
    /// The seq of the first event covered; `seq` + 1 when the tick covers none.
    public var from: UInt64
    /// The seq of the last event covered (the room's seq at the end of the tick).
    public var seq: UInt64
    /// When the tick was sent (milliseconds since 1970).
    public var time: Int64 = 0
    /// Events per delegate name, in the order the names first came.
    public private(set) var names: [(name: String, count: Int)] = []
    /// The most recent distinct senders, newest first.
    public private(set) var senders: [Participant] = []
    private var senderIDs: Set<String> = []
    /// Each path's value before the tick and after it, in the order the paths first changed.
    public private(set) var changes: [(path: ScenePath, from: SceneValue, to: SceneValue)] = []
    /// The scene after event `seq`.
    public var state: Scene
    /// The room's joins and leaves during the tick, or nil when the tick carries none.
    public var presence: PresenceBatch?
    /// The votes of the tick's voted events, summed.
    public private(set) var votes: VoteTally?

    /// An empty tick of `room` after event `seq`, in `state`.
    public init(room: String, after seq: UInt64, state: Scene) {
        self.room = room
        from = seq + 1
        self.seq = seq
        self.state = state
    }

    /// How many distinct senders the tick's events had, voters included.
    public var senderCount: Int { senderIDs.count }
    /// How many events the tick covers (none when `from` is `seq` + 1).
    public var eventCount: Int { seq >= from ? Int(seq - from + 1) : 0 }
    /// True when the tick covers no event and no join or leave: there is nothing to send.
    public var isEmpty: Bool { eventCount == 0 && (presence?.isEmpty ?? true) }

    /// Changes whose value ended where it started are left out.
    public var netChanges: [(path: ScenePath, from: SceneValue, to: SceneValue)] { changes.filter { $0.from != $0.to } }

    /// Adds the next event (its seq follows this tick's).
    public mutating func add(_ event: RoomEvent) {
        seq = event.seq
        state = event.state
        count(name: event.name.rawValue, times: 1)
        if let tally = event.votes {
            addVotes(tally)
        } else if !event.sender.id.isEmpty {
            noteSender(event.sender)
        }
        for change in event.changes { noteChange(change.path, from: change.from, to: change.to) }
    }

    /// This tick followed by `later` (the next tick, for a client that has not written this one yet).
    public mutating func append(_ later: TickSummary) {
        if later.eventCount > 0 {
            seq = later.seq
            state = later.state
        }
        time = later.time
        for entry in later.names { count(name: entry.name, times: entry.count) }
        for sender in later.senders.reversed() { noteSender(sender) }
        senderIDs.formUnion(later.senderIDs)
        for change in later.changes { noteChange(change.path, from: change.from, to: change.to) }
        if let tally = later.votes { sumVotes(tally) }
        if let batch = later.presence {
            if presence == nil { presence = batch } else { presence!.append(batch) }
        }
    }

    private mutating func count(name: String, times: Int) {
        if let index = names.firstIndex(where: { $0.name == name }) {
            names[index].count += times
        } else {
            names.append((name, times))
        }
    }

    private mutating func noteSender(_ sender: Participant) {
        senderIDs.insert(sender.id)
        senders.removeAll { $0.id == sender.id }
        senders.insert(sender, at: 0)
        if senders.count > Self.senderLimit { senders.removeLast() }
    }

    private mutating func noteChange(_ path: ScenePath, from: SceneValue, to: SceneValue) {
        if let index = changes.firstIndex(where: { $0.path == path }) {
            changes[index].to = to
        } else {
            changes.append((path, from, to))
        }
    }

    private mutating func addVotes(_ tally: VoteTally) {
        // Every voter is a sender; the most recent ones are named.
        sumVotes(tally)
        for voter in tally.voters.reversed() { noteSender(voter) }
        senderIDs.formUnion(tally.voterIDs)
    }

    /// Adds a tally's counts to the tick's (the sum keeps no voters: the senders hold them).
    private mutating func sumVotes(_ tally: VoteTally) {
        var sum = votes ?? VoteTally(forward: 0, back: 0)
        sum.forward += tally.forward
        sum.back += tally.back
        votes = sum
    }

    /// Equal when every field is, the names and changes compared entry by entry in order.
    public static func == (lhs: TickSummary, rhs: TickSummary) -> Bool {
        lhs.room == rhs.room && lhs.from == rhs.from && lhs.seq == rhs.seq && lhs.time == rhs.time
            && lhs.names.elementsEqual(rhs.names, by: { $0 == $1 }) && lhs.senders == rhs.senders
            && lhs.senderIDs == rhs.senderIDs && lhs.state == rhs.state && lhs.presence == rhs.presence
            && lhs.votes == rhs.votes
            && lhs.changes.elementsEqual(rhs.changes, by: { $0.path == $1.path && $0.from == $1.from && $0.to == $1.to })
    }
}

extension RoomEvent {
    /// An event as another node encoded it (its stored JSON); nil when it cannot be read.
    public init?(json bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(bytes, maxDepth: 64), let message = EventMessage(json: json),
              let name = EventName(rawValue: message.name) else { return nil }
        let changes = message.changes.compactMap { SceneChange(wirePath: $0.path, from: $0.from, to: $0.to) }
        let votes = message.votes.map { VoteTally(forward: $0.forward, back: $0.back) }
        self.init(seq: message.seq, time: message.time, room: message.room, name: name, sender: message.sender,
                  changes: changes, state: message.state, votes: votes)
    }
}

extension SceneChange {
    /// A change as the wire writes it; nil when the path is not the scene's or a value is
    /// not of that field's kind.
    public init?(wirePath: String, from: JSONValue, to: JSONValue) {
        guard let path = ScenePath(rawValue: wirePath), let before = SceneValue(json: from, at: path),
              let after = SceneValue(json: to, at: path) else { return nil }
        self.init(path: path, from: before, to: after)
    }
}

extension SceneValue {
    /// A value as the wire writes the field at `path`; nil when it is not of that field's kind.
    public init?(json: JSONValue, at path: ScenePath) {
        switch path {
        case .faceHappiness:
            guard let number = json.doubleValue, number.isFinite, number == number.rounded() else { return nil }
            self = .integer(Int(number))
        case .faceSmile, .faceScale, .heartRate, .heartLineWidth, .dragonX, .dragonY:
            guard let number = json.doubleValue, number.isFinite else { return nil }
            self = .number(number)
        case .heartFillColor, .heartStrokeColor:
            guard let color = json.stringValue.flatMap(RGBColor.init(hex:)) else { return nil }
            self = .color(color)
        case .dragonHidden:
            guard let flag = json.boolValue else { return nil }
            self = .bool(flag)
        }
    }
}

extension StoredEvent {
    /// When the event happened, read from its JSON (nil when unreadable).
    public var time: Int64? {
        guard let json = try? JSONParser.parse(self.json, maxDepth: 64), let time = json["time"]?.doubleValue,
              time.isFinite else { return nil }
        return Int64(time)
    }
}
