import CSQLite
import Foundation
import HappyCore

extension SQLiteRoomStore {
    public func history(ofRoom name: String, after since: UInt64, limit: Int) throws(StoreError) -> HistoryPage? {
        do {
            return try historyReader.history(ofRoom: name, after: since, limit: limit)
        } catch {
            throw StoreError(.io, "reading the history of room \(name) from \(path): \(error)")
        }
    }

    public func pastState(ofRoom name: String, at seq: UInt64) throws(StoreError) -> PastStateLookup {
        let lookup: PastStateLookup?
        do {
            lookup = try historyReader.pastState(ofRoom: name, at: seq)
        } catch {
            throw StoreError(.io, "reading room \(name) at seq \(seq) from \(path): \(error)")
        }
        guard let lookup else {
            throw StoreError(.damaged, "the state of room \(name) at seq \(seq) cannot be read from \(path)")
        }
        return lookup
    }
}

/// Reads rooms' pasts on a connection of its own, so any thread may read
/// while the store's writer commits: each call reads one committed snapshot
/// (WAL). One call at a time, under its lock.
final class SQLiteHistoryReader: @unchecked Sendable {
    private let lock = NSLock()
    private let database: SQLiteDatabase
    private let selectRoom: SQLiteStatement
    private let selectEvents: SQLiteStatement
    private let selectEvent: SQLiteStatement
    /// Events a room's history answers: the newest `historyLimit`, although
    /// more are kept when a resume needs more (`historySize`).
    private let historyLimit: UInt64
    private var closed = false

    init(path: String, fileSystem: String, historyLimit: Int) throws(SQLiteError) {
        self.historyLimit = UInt64(max(0, historyLimit))
        database = try SQLiteDatabase(path: path, vfs: fileSystem)
        try database.execute("PRAGMA query_only = 1")
        selectRoom = try database.prepare(
            "SELECT epoch, seq, base_seq, base_scene, base_status FROM rooms WHERE name = ?1")
        selectEvents = try database.prepare("""
            SELECT seq, status, json FROM events WHERE room = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq LIMIT ?4
            """)
        selectEvent = try database.prepare("SELECT status, json FROM events WHERE room = ?1 AND seq = ?2")
    }

    /// A room's epoch, seq and the base of its history, as `selectRoom` left them.
    private struct Past {
        var epoch: String
        var seq: UInt64
        /// `first` - 1: the base kept with the room, or, when more events are
        /// kept than `historyLimit`, the event just before the newest `historyLimit`.
        var baseSeq: UInt64
    }

    private func past(of name: String) throws(SQLiteError) -> Past? {
        try selectRoom.bind(1, name)
        guard try selectRoom.step() else { return nil }
        let seq = UInt64(selectRoom.int64(1))
        let kept = UInt64(selectRoom.int64(2))
        return Past(epoch: selectRoom.text(0), seq: seq, baseSeq: seq > historyLimit ? max(kept, seq - historyLimit) : kept)
    }

    func history(ofRoom name: String, after since: UInt64, limit: Int) throws(SQLiteError) -> HistoryPage? {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { throw SQLiteError(code: SQLITE_MISUSE, message: "the store is closed") }
        return try database.transaction(immediate: false) { () throws(SQLiteError) -> HistoryPage? in
            defer { selectRoom.reset(); selectEvents.reset() }
            guard let past = try past(of: name) else { return nil }
            var events: [StoredEvent] = []
            if limit > 0, since < past.seq {
                // A `since` older than the base answers from the oldest event held.
                try selectEvents.bind(1, name)
                try selectEvents.bind(2, Int64(max(since, past.baseSeq)))
                try selectEvents.bind(3, Int64(past.seq))
                try selectEvents.bind(4, Int64(limit))
                while try selectEvents.step() {
                    events.append(StoredEvent(seq: UInt64(selectEvents.int64(0)), json: selectEvents.blob(2),
                                              dragonStatus: selectEvents.text(1)))
                }
            }
            return HistoryPage(epoch: past.epoch, seq: past.seq, first: past.baseSeq + 1, events: events)
        }
    }

    /// The lookup, or nil when the state at `seq` should be held but cannot be read.
    func pastState(ofRoom name: String, at seq: UInt64) throws(SQLiteError) -> PastStateLookup? {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { throw SQLiteError(code: SQLITE_MISUSE, message: "the store is closed") }
        return try database.transaction(immediate: false) { () throws(SQLiteError) -> PastStateLookup? in
            defer { selectRoom.reset(); selectEvent.reset() }
            guard let past = try past(of: name) else { return .unknownRoom }
            if seq > past.seq { return .beyond(current: past.seq) }
            if seq < past.baseSeq { return .gone(first: past.baseSeq + 1) }
            try selectEvent.bind(1, name)
            try selectEvent.bind(2, Int64(seq))
            if try selectEvent.step() {
                guard let scene = MemoryRoomStore.scene(in: selectEvent.blob(1)) else { return nil }
                return .found(PastState(epoch: past.epoch, seq: seq, scene: scene, dragonStatus: selectEvent.text(0)))
            }
            // Only the base may have no event row: the room's initial state (or
            // the state its past restarted from) is kept with the room.
            guard seq == past.baseSeq, let scene = SQLiteSchema.scene(fromText: selectRoom.text(3)) else { return nil }
            return .found(PastState(epoch: past.epoch, seq: seq, scene: scene, dragonStatus: selectRoom.text(4)))
        }
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        for statement in [selectRoom, selectEvents, selectEvent] { statement.finalize() }
        database.close()
    }
}
