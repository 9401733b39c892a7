/// One recorded event: its seq and the exact JSON text that was broadcast,
/// so a resumed client receives the same bytes as everyone else did.
public struct StoredEvent: Equatable, Sendable {
    /// The event's number in its room.
    public var seq: UInt64
    /// The event message, byte for byte as it was broadcast.
    public var json: [UInt8]
    /// The dragon's status label right after this event (section 11);
    /// empty when not known (the label then comes from the events).
    public var dragonStatus: String

    /// An event from its parts; `dragonStatus` empty when not known.
    public init(seq: UInt64, json: [UInt8], dragonStatus: String = "") {
        self.seq = seq
        self.json = json
        self.dragonStatus = dragonStatus
    }
}

/// A page of a room's recorded past (PROTOCOL.md section 11).
public struct HistoryPage: Equatable, Sendable {
    /// The room's epoch.
    public var epoch: String
    /// The room's current seq.
    public var seq: UInt64
    /// The oldest seq still held (`seq + 1` when none is).
    public var first: UInt64
    /// Events after the asked seq, oldest first.
    public var events: [StoredEvent]

    /// A page from its parts.
    public init(epoch: String, seq: UInt64, first: UInt64, events: [StoredEvent]) {
        self.epoch = epoch
        self.seq = seq
        self.first = first
        self.events = events
    }
}

/// A room as it was right after one of its events (or at `first` - 1).
public struct PastState: Equatable, Sendable {
    /// The room's epoch.
    public var epoch: String
    /// The event this state follows.
    public var seq: UInt64
    /// The room's scene right after that event.
    public var scene: Scene
    /// The dragon's status label then; empty for the initial label.
    public var dragonStatus: String

    /// A state from its parts.
    public init(epoch: String, seq: UInt64, scene: Scene, dragonStatus: String) {
        self.epoch = epoch
        self.seq = seq
        self.scene = scene
        self.dragonStatus = dragonStatus
    }
}

/// What a store finds for a room at a seq.
public enum PastStateLookup: Equatable, Sendable {
    /// The room's state at that seq.
    case found(PastState)
    /// Older than `first` - 1: no longer held.
    case gone(first: UInt64)
    /// Newer than the room's current seq.
    case beyond(current: UInt64)
    /// The room was never recorded.
    case unknownRoom
}

/// A room as a store holds it.
public struct StoredRoom: Equatable, Sendable {
    /// The room's name.
    public var name: String
    /// The room's epoch: a new one means its past was lost or deleted.
    public var epoch: String
    /// The seq of the room's last event (0 before the first).
    public var seq: UInt64
    /// The room's current scene.
    public var scene: Scene
    /// The most recent events, oldest first, at most the retention count.
    public var history: [StoredEvent]

    /// A room from its parts.
    public init(name: String, epoch: String, seq: UInt64, scene: Scene, history: [StoredEvent]) {
        self.name = name
        self.epoch = epoch
        self.seq = seq
        self.scene = scene
        self.history = history
    }
}

/// What one room contributes to a commit: its new state and the events
/// that led there, in seq order.
public struct RoomCommit: Equatable, Sendable {
    /// The room's name.
    public var room: String
    /// The room's epoch.
    public var epoch: String
    /// The seq the store must hold before this commit (compare-and-set for
    /// shared stores); `seq` after it.
    public var baseSeq: UInt64
    /// The room's seq after this commit: its last event's.
    public var seq: UInt64
    /// The room's scene after this commit.
    public var scene: Scene
    /// The new events, in seq order; empty when the store keeps no history (and in a creation commit).
    public var events: [StoredEvent]
    /// Names this commit among all the process makes, and stays the same
    /// when it is sent again: a shared store tells from it whether a commit
    /// whose answer was lost had landed. Two different commits built on the
    /// same seq (one refused, then another) must not share it.
    public var serial: UInt64
    /// Webhook deliveries of these events (and of a new room), written with them.
    public var deliveries: [OutboxDelivery] = []

    /// A commit from its parts, without webhook deliveries.
    public init(room: String, epoch: String, baseSeq: UInt64, seq: UInt64, scene: Scene, events: [StoredEvent],
                serial: UInt64 = 0) {
        self.serial = serial
        self.room = room
        self.epoch = epoch
        self.baseSeq = baseSeq
        self.seq = seq
        self.scene = scene
        self.events = events
    }
}

/// A room whose commit a shared store refused because it had moved on
/// (another node recorded first); `current` is what the store holds now.
public struct CommitConflict: Equatable, Sendable {
    /// The refused room's name.
    public var room: String
    /// The room as the store holds it now; nil when it holds none.
    public var current: StoredRoom?

    /// A conflict from its parts.
    public init(room: String, current: StoredRoom?) {
        self.room = room
        self.current = current
    }
}

/// Why a store could not do what was asked.
public struct StoreError: Error, Equatable, CustomStringConvertible {
    /// What went wrong, for metrics and for deciding what an operator must do.
    public enum Kind: String, Sendable {
        /// The data directory or database cannot be used as configured (fix the config or the files).
        case setup
        /// The store cannot be reached right now (a network store); it may come back.
        case unreachable
        /// A read or write failed (disk full, I/O error, a refused command).
        case io
        /// Stored data cannot be read back as a room.
        case damaged
        /// A write was sent but no answer came back (a lost reply, a paused
        /// or cut-off store): it may have been recorded, or may still be. Its
        /// intents must be neither acknowledged nor refused until the same
        /// write, sent again, gets a definite answer.
        case inDoubt
        /// The store cannot do this at all (a backup of rooms kept in memory
        /// only, or in Redis, which is backed up on its own side).
        case unsupported
    }

    /// What went wrong.
    public let kind: Kind
    /// What happened, for the log.
    public let message: String
    /// An error of `kind` described by `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    /// The message.
    public var description: String { message }
}

/// Where rooms live. The server calls a store from one worker thread at a
/// time (never from the network thread when `isSynchronous` is false), and
/// sends acks and events only after `commit` returns.
public protocol RoomStore: AnyObject, Sendable {
    /// True when calls are cheap enough to make inline (the in-memory store).
    var isSynchronous: Bool { get }
    /// A short name for logs and `/healthz`.
    var kind: String { get }
    /// Whether the store keeps event history (commits then carry each event's JSON).
    var keepsHistory: Bool { get }

    /// The room as stored, or nil when it has never been recorded.
    func loadRoom(named name: String) throws(StoreError) -> StoredRoom?
    /// Records the commits. A store only this server writes records all of
    /// them atomically (one transaction). A shared store checks each room's
    /// `baseSeq` and refuses rooms that moved on, returning them as conflicts;
    /// the other rooms are recorded.
    func commit(_ commits: [RoomCommit]) throws(StoreError) -> [CommitConflict]
    /// The room's events after `since`, oldest first, at most `limit`
    /// (section 11); nil when the room was never recorded. Read by seq from
    /// an index: the cost does not grow with the history's length.
    func history(ofRoom name: String, after since: UInt64, limit: Int) throws(StoreError) -> HistoryPage?
    /// The room right after event `seq` (or at `first` - 1).
    func pastState(ofRoom name: String, at seq: UInt64) throws(StoreError) -> PastStateLookup
    /// Queues webhook deliveries that no commit carries (presence, rooms emptied).
    func enqueue(_ deliveries: [OutboxDelivery]) throws(StoreError)
    /// Where the webhook senders read the queued deliveries (a connection of their own).
    func webhookOutbox() throws(StoreError) -> any WebhookOutbox
    /// A reload listed these webhooks: deliveries for them come from now on,
    /// beside some made earlier for webhooks no longer listed. Called on the
    /// service thread before any delivery for a new webhook is made.
    func configureWebhooks(_ webhooks: [HappyConfig.Webhook])
    /// Forgets a room: its state and history (an operator deleted it; section 13).
    func deleteRoom(named name: String) throws(StoreError)
    /// Writes a consistent copy of everything the store holds to `path` (a
    /// new file) while commits go on. Called from a thread of its own, never
    /// the one that commits. Throws `unsupported` when the store has nothing
    /// to copy (memory) or is backed up by other means (Redis).
    func backup(to path: String) throws(StoreError)
    /// Flushes and closes; no calls follow.
    func close()
    /// Closes at once for another process that opens the store right after
    /// (an upgrade): what is recorded stays recorded, tidying is left to it.
    func release()
}

extension RoomStore {
    /// By default, as `close()`.
    public func release() { close() }
    /// By default nothing: the outbox keeps any webhook's deliveries by key.
    public func configureWebhooks(_ webhooks: [HappyConfig.Webhook]) {}
}

/// Keeps rooms in memory only: nothing survives a restart, so each start is
/// a new epoch for every room. For tests, benchmarks and `persistence.enabled: false`.
public final class MemoryRoomStore: RoomStore, @unchecked Sendable {
    /// One room: its state, its newest `historyLimit` events and the state
    /// just before the oldest of them.
    private struct Record {
        var room: StoredRoom
        var events: RingQueue<StoredEvent>
        /// The state at `first` - 1 when no event stands for it (a new room).
        var base: PastState
        /// The newest event pushed out, which stands for `first` - 1 (its state is read when asked for).
        var baseEvent: StoredEvent?
        /// False once commits came without their events (history off): then
        /// nothing up to `first` - 1 can be told, not even its label.
        var baseKnown = true
        var baseSeq: UInt64 { baseEvent?.seq ?? base.seq }
    }

    private var records: [String: Record] = [:]
    private let historySize: Int
    private let historyLimit: Int

    /// `historySize`: events a resume may replay; `historyLimit`: events kept for history and replay.
    public init(historySize: Int, historyLimit: Int = 100_000) {
        self.historySize = historySize
        self.historyLimit = historyLimit
    }

    /// Webhook deliveries, in memory like everything else here.
    public let outbox = MemoryWebhookOutbox()

    /// Always true: every call is a dictionary lookup or update.
    public var isSynchronous: Bool { true }
    /// `memory`.
    public var kind: String { "memory" }
    /// True unless `historyLimit` is 0.
    public var keepsHistory: Bool { historyLimit > 0 }

    /// The room, with its newest `historySize` events as `history`; nil when never committed.
    public func loadRoom(named name: String) throws(StoreError) -> StoredRoom? {
        guard let record = records[name] else { return nil }
        var room = record.room
        let count = min(historySize, record.events.count)
        room.history = (record.events.count - count ..< record.events.count).map { record.events[$0] }
        return room
    }

    /// Forgets the room's state and events; deliveries already queued for its webhooks stay.
    public func deleteRoom(named name: String) throws(StoreError) {
        records.removeValue(forKey: name)
    }

    /// Appends the deliveries to `outbox`.
    public func enqueue(_ deliveries: [OutboxDelivery]) throws(StoreError) {
        outbox.append(deliveries)
    }

    /// `outbox` itself (memory needs no connection of its own).
    public func webhookOutbox() throws(StoreError) -> any WebhookOutbox {
        outbox
    }

    /// Records every commit (never a conflict: nothing else writes here) and queues
    /// their deliveries. A room's first commit, or one with another epoch, starts its past anew.
    @discardableResult
    public func commit(_ commits: [RoomCommit]) throws(StoreError) -> [CommitConflict] {
        for commit in commits {
            outbox.append(commit.deliveries)
            let room = StoredRoom(name: commit.room, epoch: commit.epoch, seq: commit.seq, scene: commit.scene, history: [])
            // Taken out of the dictionary while it changes: a copy left there
            // would make every append copy the whole history.
            guard var record = records.removeValue(forKey: commit.room), record.room.epoch == commit.epoch else {
                // A new room (or a new epoch): its past starts here.
                var record = Record(room: room, events: RingQueue(),
                                    base: PastState(epoch: commit.epoch, seq: commit.baseSeq, scene: commit.scene,
                                                    dragonStatus: ""))
                if !commit.events.isEmpty {
                    record.base.seq = commit.events[0].seq - 1
                    for event in commit.events { record.events.append(event) }
                }
                records[commit.room] = record
                continue
            }
            record.room = room
            for event in commit.events { record.events.append(event) }
            while record.events.count > historyLimit {
                record.baseEvent = record.events.removeFirst()
            }
            if record.baseSeq + UInt64(record.events.count) < commit.seq {
                // Events not given (history off): the past held ends here.
                record.events = RingQueue()
                record.baseEvent = nil
                record.base = PastState(epoch: commit.epoch, seq: commit.seq, scene: commit.scene, dragonStatus: "")
                record.baseKnown = false
            }
            records[commit.room] = record
        }
        return []
    }

    /// The events after `since`, at most `limit`, from the newest `historyLimit` held.
    public func history(ofRoom name: String, after since: UInt64, limit: Int) throws(StoreError) -> HistoryPage? {
        guard let record = records[name] else { return nil }
        let first = record.baseSeq + 1
        let start = max(since, record.baseSeq)
        var events: [StoredEvent] = []
        if start < record.room.seq {
            let index = Int(start - record.baseSeq)
            for position in index ..< min(record.events.count, index + limit) { events.append(record.events[position]) }
        }
        return HistoryPage(epoch: record.room.epoch, seq: record.room.seq, first: first, events: events)
    }

    /// The room right after event `seq`, read from the `state` of that event's JSON;
    /// throws `damaged` when that JSON holds none.
    public func pastState(ofRoom name: String, at seq: UInt64) throws(StoreError) -> PastStateLookup {
        guard let record = records[name] else { return .unknownRoom }
        if seq > record.room.seq { return .beyond(current: record.room.seq) }
        if seq < record.baseSeq { return .gone(first: record.baseSeq + 1) }
        let event: StoredEvent
        if seq == record.baseSeq {
            guard let baseEvent = record.baseEvent else {
                return record.baseKnown ? .found(record.base) : .gone(first: record.baseSeq + 1)
            }
            event = baseEvent
        } else {
            event = record.events[Int(seq - record.baseSeq) - 1]
        }
        guard let scene = Self.scene(in: event.json) else {
            throw StoreError(.damaged, "event \(seq) of room \(name) has no readable state")
        }
        return .found(PastState(epoch: record.room.epoch, seq: seq, scene: scene, dragonStatus: event.dragonStatus))
    }

    /// Refuses: rooms in memory have no file to copy, and are lost on restart anyway.
    public func backup(to path: String) throws(StoreError) {
        throw StoreError(.unsupported, "persistence is disabled (persistence.enabled: false): the rooms are kept in "
            + "memory only, so there is no database to back up")
    }

    /// The scene an event message carries (`state`: the whole scene after it).
    public static func scene(in eventJSON: [UInt8]) -> Scene? {
        (try? JSONParser.parse(eventJSON, maxDepth: 64))?["state"].flatMap(Scene.init(json:))
    }

    /// Does nothing: there is nothing to flush.
    public func close() {}
}
