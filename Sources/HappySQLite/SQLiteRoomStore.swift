import CSQLite
import Foundation
import HappyCore

/// Rooms on disk in SQLite (WAL mode): per room its epoch, seq and scene, and
/// its newest `historyLimit` events as the exact JSON that was broadcast,
/// each with the dragon's label after it (PROTOCOL.md section 11).
/// Every `commit` is one transaction; with `fsync` the WAL is synced before
/// it returns, so an acknowledged change survives power loss, not only a crash.
///
/// `loadRoom` and `commit` use the writer connection, from one thread at a
/// time. `history` and `pastState` may be called from any thread meanwhile:
/// they use their own connection, which reads the last committed snapshot
/// while the writer writes.
public final class SQLiteRoomStore: RoomStore, @unchecked Sendable {
    public static let fileName = "happy.sqlite3"
    static let schemaVersion = SQLiteSchema.version
    /// SQLite's unix layer that keeps other processes out with one lock held
    /// from open to close and keeps the WAL index in process memory, shared
    /// by this process's connections: no memory-mapped -shm file, so a full
    /// or failing disk gives error codes rather than SIGBUS, and the history
    /// reader can still read while the writer writes.
    static let fileSystem = "unix-excl"

    public let path: String
    /// Events a resume may replay (`loadRoom` returns at most this many).
    public let historySize: Int
    /// Events each room keeps for history and replay.
    public let historyLimit: Int
    /// Events each room keeps on disk: the history, and never fewer than a
    /// resume needs (the history still answers only the newest `historyLimit`).
    let retainedEvents: Int
    private let database: SQLiteDatabase
    private let lock: DataDirectoryLock
    private let selectRoom: SQLiteStatement
    private let selectEvents: SQLiteStatement
    private let selectPast: SQLiteStatement
    private let updateRoom: SQLiteStatement
    private let replaceRoom: SQLiteStatement
    private let insertEvent: SQLiteStatement
    private let reuseEvent: SQLiteStatement
    private let deleteEvents: SQLiteStatement
    private let deleteRoom: SQLiteStatement
    private let insertDelivery: SQLiteStatement
    private let deleteOldEvents: SQLiteStatement
    let historyReader: SQLiteHistoryReader
    private var closed = false
    /// Webhook deliveries an older build had queued by list position, moved to their webhook's key on opening.
    public private(set) var deliveriesMovedToKeys = 0

    /// Opens (creating if needed) the store in `directory`. Refuses, with a
    /// message that says what to do, a database that cannot be read or fails
    /// its integrity check: it never starts empty over existing data. An older
    /// schema is converted (see `SQLiteSchema`), and webhook deliveries queued
    /// by list position move to the key of the webhook at that place in
    /// `webhooks` (see `SQLiteWebhookOutbox.moveListPositionsToKeys`).
    public init(directory: String, historySize: Int, historyLimit: Int = 100_000, fsync: Bool,
                webhooks: [HappyConfig.Webhook] = []) throws(StoreError) {
        self.historySize = historySize
        self.historyLimit = historyLimit
        retainedEvents = max(historyLimit, historySize, 0)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.setup, "cannot create the data directory \(directory): \(error.localizedDescription)")
        }
        guard access(directory, W_OK) == 0 else {
            throw StoreError(.setup, "the data directory \(directory) is not writable (\(String(cString: strerror(errno)))); "
                + "fix its permissions or set another dataDir")
        }
        do {
            lock = try DataDirectoryLock(directory: directory)
        } catch {
            throw StoreError(.setup, error.message)
        }
        path = (directory as NSString).appendingPathComponent(Self.fileName)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw StoreError(.setup, "\(path) is a directory, not a database; move it away")
        }
        if FileManager.default.fileExists(atPath: path), !FileManager.default.isReadableFile(atPath: path) {
            throw StoreError(.setup, "cannot read the database \(path): permission denied")
        }
        // SQLite gives the journal files the database's mode: made 0600 first, all three stay private.
        let created = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if created >= 0 { Foundation.close(created) }
        do {
            database = try SQLiteDatabase(path: path, vfs: Self.fileSystem)
            try Self.verify(database, path: path)
            try database.execute("""
                PRAGMA journal_mode = WAL;
                PRAGMA synchronous = \(fsync ? "FULL" : "NORMAL");
                """)
            let journal = try database.scalarText("PRAGMA journal_mode")
            guard journal?.lowercased() == "wal" else {
                throw SQLiteError(code: SQLITE_ERROR, message: "could not switch to WAL mode (got \(journal ?? "nothing"))")
            }
            // Files of an older install may be readable by others: they hold names, addresses and history.
            for file in [path, path + "-wal", path + "-shm"] { chmod(file, 0o600) }
            try SQLiteSchema.prepare(database)
            deliveriesMovedToKeys = try SQLiteWebhookOutbox.moveListPositionsToKeys(in: database, webhooks: webhooks)
            let schema = try database.scalarText("SELECT value FROM meta WHERE key = 'schema'")
            guard schema == Self.schemaVersion else {
                throw SQLiteError(code: SQLITE_ERROR, message: "schema version \(schema ?? "?") is not \(Self.schemaVersion)")
            }
            selectRoom = try database.prepare("SELECT epoch, seq, scene FROM rooms WHERE name = ?1")
            selectEvents = try database.prepare(
                "SELECT seq, status, json FROM events WHERE room = ?1 AND seq > ?2 ORDER BY seq")
            selectPast = try database.prepare("SELECT epoch, seq, base_seq FROM rooms WHERE name = ?1")
            updateRoom = try database.prepare("UPDATE rooms SET seq = ?2, scene = ?3, base_seq = ?4 WHERE name = ?1")
            replaceRoom = try database.prepare("""
                INSERT OR REPLACE INTO rooms (name, epoch, seq, scene, base_seq, base_scene, base_status)
                VALUES (?1, ?2, ?3, ?4, ?5, ?4, '')
                """)
            insertEvent = try database.prepare("INSERT INTO events (room, seq, status, json) VALUES (?1, ?2, ?3, ?4)")
            reuseEvent = try database.prepare(
                "UPDATE events SET seq = ?3, status = ?4, json = ?5 WHERE room = ?1 AND seq = ?2")
            deleteEvents = try database.prepare("DELETE FROM events WHERE room = ?1")
            deleteRoom = try database.prepare("DELETE FROM rooms WHERE name = ?1")
            insertDelivery = try database.prepare(SQLiteWebhookOutbox.insertSQL)
            deleteOldEvents = try database.prepare("""
                DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE room = ?1 AND seq < ?2 ORDER BY seq LIMIT ?3)
                """)
            historyReader = try SQLiteHistoryReader(path: path, fileSystem: Self.fileSystem, historyLimit: historyLimit)
        } catch {
            throw StoreError(.setup, "cannot use the database \(path): \(error). "
                + "If it is damaged, restore it from a backup or move it away to start with empty rooms.")
        }
    }

    /// A quick integrity check: fails on files that are not databases or are damaged.
    private static func verify(_ database: SQLiteDatabase, path: String) throws(SQLiteError) {
        let result = try database.scalarText("PRAGMA quick_check")
        guard result == "ok" else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "integrity check failed: \(result ?? "no answer")")
        }
    }

    public var isSynchronous: Bool { false }
    public var kind: String { "sqlite" }
    public var keepsHistory: Bool { retainedEvents > 0 }

    public func loadRoom(named name: String) throws(StoreError) -> StoredRoom? {
        do {
            defer { selectRoom.reset(); selectEvents.reset() }
            try selectRoom.bind(1, name)
            guard try selectRoom.step() else { return nil }
            let epoch = selectRoom.text(0)
            let seq = UInt64(selectRoom.int64(1))
            guard let scene = SQLiteSchema.scene(fromText: selectRoom.text(2)) else {
                throw SQLiteError(code: SQLITE_CORRUPT, message: "room \(name) has an unreadable scene")
            }
            var history: [StoredEvent] = []
            if historySize > 0 {
                try selectEvents.bind(1, name)
                try selectEvents.bind(2, Int64(seq) - Int64(historySize))
                while try selectEvents.step() {
                    history.append(StoredEvent(seq: UInt64(selectEvents.int64(0)), json: selectEvents.blob(2),
                                               dragonStatus: selectEvents.text(1)))
                }
            }
            return StoredRoom(name: name, epoch: epoch, seq: seq, scene: scene, history: history)
        } catch {
            throw StoreError(.io, "reading room \(name) from \(path): \(error)")
        }
    }

    @discardableResult
    public func commit(_ commits: [RoomCommit]) throws(StoreError) -> [CommitConflict] {
        guard !commits.isEmpty else { return [] }
        do {
            try database.transaction(immediate: true) { () throws(SQLiteError) in
                for commit in commits {
                    try write(commit)
                    try insert(commit.deliveries)
                }
            }
        } catch {
            throw StoreError(.io, "writing to \(path): \(error)")
        }
        return []
    }

    public func enqueue(_ deliveries: [OutboxDelivery]) throws(StoreError) {
        guard !deliveries.isEmpty else { return }
        do {
            try database.transaction(immediate: true) { () throws(SQLiteError) in try insert(deliveries) }
        } catch {
            throw StoreError(.io, "queueing webhook deliveries in \(path): \(error)")
        }
    }

    private func insert(_ deliveries: [OutboxDelivery]) throws(SQLiteError) {
        for delivery in deliveries {
            try insertDelivery.bind(1, Int64(delivery.webhook))
            try insertDelivery.bind(2, blob: delivery.json)
            try insertDelivery.run()
        }
    }

    public func webhookOutbox() throws(StoreError) -> any WebhookOutbox {
        do {
            return try SQLiteWebhookOutbox(path: path, fileSystem: Self.fileSystem)
        } catch {
            throw StoreError(.setup, "cannot open the webhook outbox in \(path): \(error)")
        }
    }

    public func deleteRoom(named name: String) throws(StoreError) {
        do {
            try database.transaction(immediate: true) { () throws(SQLiteError) in
                try deleteEvents.bind(1, name)
                try deleteEvents.run()
                try deleteRoom.bind(1, name)
                try deleteRoom.run()
            }
        } catch {
            throw StoreError(.io, "deleting room \(name) from \(path): \(error)")
        }
    }

    /// The room's stored epoch, seq and base seq.
    private func storedPast(of room: String) throws(SQLiteError) -> (epoch: String, seq: UInt64, baseSeq: UInt64)? {
        defer { selectPast.reset() }
        try selectPast.bind(1, room)
        guard try selectPast.step() else { return nil }
        return (selectPast.text(0), UInt64(selectPast.int64(1)), UInt64(selectPast.int64(2)))
    }

    private func write(_ commit: RoomCommit) throws(SQLiteError) {
        let scene = SQLiteSchema.sceneText(commit.scene)
        guard let stored = try storedPast(of: commit.room), stored.epoch == commit.epoch,
              !commit.events.isEmpty || commit.seq == stored.seq else {
            // A new room or a new epoch: its past starts here (as in
            // MemoryRoomStore). So does a change recorded without its
            // events, which would leave a gap in the past.
            try deleteEvents.bind(1, commit.room)
            try deleteEvents.run()
            let baseSeq = commit.events.first.map { $0.seq - 1 } ?? commit.seq
            let newBase = self.newBase(after: commit.events.last?.seq ?? commit.seq, from: baseSeq)
            try replaceRoom.bind(1, commit.room)
            try replaceRoom.bind(2, commit.epoch)
            try replaceRoom.bind(3, Int64(commit.seq))
            try replaceRoom.bind(4, scene)
            try replaceRoom.bind(5, Int64(newBase))
            try replaceRoom.run()
            try record(commit.events, of: commit.room, from: baseSeq, to: newBase)
            return
        }
        let newBase = self.newBase(after: commit.events.last?.seq ?? commit.seq, from: stored.baseSeq)
        try updateRoom.bind(1, commit.room)
        try updateRoom.bind(2, Int64(commit.seq))
        try updateRoom.bind(3, scene)
        try updateRoom.bind(4, Int64(newBase))
        try updateRoom.run()
        try record(commit.events, of: commit.room, from: stored.baseSeq, to: newBase)
    }

    /// The base once the room holds events up to `newest`: it moves up so
    /// that `retainedEvents` are held, never down.
    private func newBase(after newest: UInt64, from baseSeq: UInt64) -> UInt64 {
        let retained = UInt64(retainedEvents)
        return newest > retained ? max(baseSeq, newest - retained) : baseSeq
    }

    /// Writes a room's new events while its base moves from `baseSeq` to
    /// `newBase`, in bounded work: about one row per new event, however long
    /// the history.
    ///
    /// The newest event pushed out stays as the base: its row holds the state
    /// and label at `first` - 1 (`base_scene` and `base_status` hold them only
    /// while the base is not an event). The room's rows form a ring: a new
    /// event takes over the row of the event that falls out with it (an update
    /// through the (room, seq) index), so a room at its limit neither grows the
    /// table nor frees and reallocates pages, and each commit writes fewer
    /// pages than an insert plus a delete would.
    private func record(_ events: [StoredEvent], of room: String, from baseSeq: UInt64, to newBase: UInt64) throws(SQLiteError) {
        let retained = UInt64(retainedEvents)
        // Events older than the new base (in a commit longer than the limit) are not written.
        for event in events where event.seq >= newBase {
            if event.seq > retained + baseSeq {
                // The row this event falls out with: `retained` + 1 back, below the new base.
                try reuseEvent.bind(1, room)
                try reuseEvent.bind(2, Int64(event.seq - retained - 1))
                try reuseEvent.bind(3, Int64(event.seq))
                try reuseEvent.bind(4, event.dragonStatus)
                try reuseEvent.bind(5, blob: event.json)
                try reuseEvent.run()
                if database.changes == 1 { continue }
            }
            try insertEvent.bind(1, room)
            try insertEvent.bind(2, Int64(event.seq))
            try insertEvent.bind(3, event.dragonStatus)
            try insertEvent.bind(4, blob: event.json)
            try insertEvent.run()
        }
        guard newBase > baseSeq else { return }
        // Rows below the new base that no new event took over: none at a
        // steady limit; after the limit was lowered, the excess goes a few
        // hundred rows per commit, so no commit stalls on it.
        try deleteOldEvents.bind(1, room)
        try deleteOldEvents.bind(2, Int64(newBase))
        try deleteOldEvents.bind(3, Int64(max(256, 2 * events.count)))
        try deleteOldEvents.run()
    }

    public func close() {
        close(checkpointing: true)
    }

    /// Closes without the final checkpoint: the write-ahead log is whole and
    /// synced, and the process taking over reads it on opening, in far less
    /// time than copying it into the database would take here.
    public func release() {
        close(checkpointing: false)
    }

    private func close(checkpointing: Bool) {
        guard !closed else { return }
        closed = true
        historyReader.close()
        if checkpointing { try? database.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        for statement in [selectRoom, selectEvents, selectPast, updateRoom, replaceRoom, insertEvent, reuseEvent,
                          deleteEvents, deleteRoom, insertDelivery, deleteOldEvents] {
            statement.finalize()
        }
        database.close()
        lock.release()
    }
}
