/// One recorded event: its seq and the exact JSON text that was broadcast,
/// so a resumed client receives the same bytes as everyone else did.
public struct StoredEvent: Equatable, Sendable {
    public var seq: UInt64
    public var json: [UInt8]

    public init(seq: UInt64, json: [UInt8]) {
        self.seq = seq
        self.json = json
    }
}

/// A room as a store holds it.
public struct StoredRoom: Equatable, Sendable {
    public var name: String
    public var epoch: String
    public var seq: UInt64
    public var scene: Scene
    /// The most recent events, oldest first, at most the retention count.
    public var history: [StoredEvent]

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
    public var room: String
    public var epoch: String
    /// The seq the store must hold before this commit (compare-and-set for
    /// shared stores); `seq` after it.
    public var baseSeq: UInt64
    public var seq: UInt64
    public var scene: Scene
    public var events: [StoredEvent]

    public init(room: String, epoch: String, baseSeq: UInt64, seq: UInt64, scene: Scene, events: [StoredEvent]) {
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
    public var room: String
    public var current: StoredRoom?

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
    }

    public let kind: Kind
    public let message: String
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
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
    /// Flushes and closes; no calls follow.
    func close()
}

/// Keeps rooms in memory only: nothing survives a restart, so each start is
/// a new epoch for every room. For tests, benchmarks and `persistence.enabled: false`.
public final class MemoryRoomStore: RoomStore, @unchecked Sendable {
    private var rooms: [String: StoredRoom] = [:]
    private let historySize: Int

    public init(historySize: Int) {
        self.historySize = historySize
    }

    public var isSynchronous: Bool { true }
    public var kind: String { "memory" }
    public var keepsHistory: Bool { false }

    public func loadRoom(named name: String) throws(StoreError) -> StoredRoom? {
        rooms[name]
    }

    @discardableResult
    public func commit(_ commits: [RoomCommit]) throws(StoreError) -> [CommitConflict] {
        for commit in commits {
            // History lives in the server's ring; the memory store keeps state only.
            rooms[commit.room] = StoredRoom(name: commit.room, epoch: commit.epoch, seq: commit.seq,
                                            scene: commit.scene, history: [])
        }
        return []
    }

    public func close() {}
}
