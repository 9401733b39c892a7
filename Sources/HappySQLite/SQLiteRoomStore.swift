import CSQLite
import Foundation
import HappyCore

/// Rooms on disk in SQLite (WAL mode): per room its epoch, seq and scene, and
/// the last `historySize` events as the exact JSON that was broadcast.
/// Every `commit` is one transaction; with `fsync` the WAL is synced before
/// it returns, so an acknowledged change survives power loss, not only a crash.
public final class SQLiteRoomStore: RoomStore, @unchecked Sendable {
    public static let fileName = "happy.sqlite3"
    static let schemaVersion = SQLiteSchema.version

    public let path: String
    public let historySize: Int
    private let database: SQLiteDatabase
    private let lock: DataDirectoryLock
    private let selectRoom: SQLiteStatement
    private let selectEvents: SQLiteStatement
    private let upsertRoom: SQLiteStatement
    private let insertBatch: SQLiteStatement
    private let trimBatches: SQLiteStatement
    private var closed = false

    /// Opens (creating if needed) the store in `directory`. Refuses, with a
    /// message that says what to do, a database that cannot be read or fails
    /// its integrity check: it never starts empty over existing data.
    public init(directory: String, historySize: Int, fsync: Bool) throws(StoreError) {
        self.historySize = historySize
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.setup, "cannot create the data directory \(directory): \(error.localizedDescription)")
        }
        guard access(directory, W_OK) == 0 else {
            throw StoreError(.setup, "the data directory \(directory) is not writable (\(String(cString: strerror(errno)))); "
                + "fix its permissions or set another dataDir")
        }
        lock = try DataDirectoryLock(directory: directory)
        path = (directory as NSString).appendingPathComponent(Self.fileName)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw StoreError(.setup, "\(path) is a directory, not a database; move it away")
        }
        if FileManager.default.fileExists(atPath: path), !FileManager.default.isReadableFile(atPath: path) {
            throw StoreError(.setup, "cannot read the database \(path): permission denied")
        }
        do {
            database = try SQLiteDatabase(path: path)
            try Self.verify(database, path: path)
            // Exclusive locking before WAL: the WAL index lives in process
            // memory instead of a memory-mapped -shm file, so a full or
            // failing disk gives error codes rather than SIGBUS. The data
            // directory lock already keeps other processes out.
            try database.execute("""
                PRAGMA locking_mode = EXCLUSIVE;
                PRAGMA journal_mode = WAL;
                PRAGMA synchronous = \(fsync ? "FULL" : "NORMAL");
                CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS rooms (
                    name TEXT PRIMARY KEY, epoch TEXT NOT NULL, seq INTEGER NOT NULL, scene TEXT NOT NULL);
                """)
            try SQLiteSchema.prepareHistory(database)
            let journal = try database.scalarText("PRAGMA journal_mode")
            guard journal?.lowercased() == "wal" else {
                throw SQLiteError(code: SQLITE_ERROR, message: "could not switch to WAL mode (got \(journal ?? "nothing"))")
            }
            let schema = try database.scalarText("SELECT value FROM meta WHERE key = 'schema'")
            guard schema == Self.schemaVersion else {
                throw SQLiteError(code: SQLITE_ERROR, message: "schema version \(schema ?? "?") is not \(Self.schemaVersion)")
            }
            selectRoom = try database.prepare("SELECT epoch, seq, scene FROM rooms WHERE name = ?1")
            selectEvents = try database.prepare(
                "SELECT first, events FROM batches WHERE room = ?1 AND last > ?2 ORDER BY last")
            upsertRoom = try database.prepare("""
                INSERT INTO rooms (name, epoch, seq, scene) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT (name) DO UPDATE SET epoch = excluded.epoch, seq = excluded.seq, scene = excluded.scene
                """)
            insertBatch = try database.prepare(
                "INSERT OR REPLACE INTO batches (room, last, first, events) VALUES (?1, ?2, ?3, ?4)")
            trimBatches = try database.prepare("DELETE FROM batches WHERE room = ?1 AND last <= ?2")
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
    public var keepsHistory: Bool { historySize > 0 }

    public func loadRoom(named name: String) throws(StoreError) -> StoredRoom? {
        do {
            defer { selectRoom.reset(); selectEvents.reset() }
            try selectRoom.bind(1, name)
            guard try selectRoom.step() else { return nil }
            let epoch = selectRoom.text(0)
            let seq = UInt64(selectRoom.int64(1))
            let sceneText = selectRoom.text(2)
            guard let json = try? JSONParser.parse(sceneText), let scene = Scene(json: json) else {
                throw SQLiteError(code: SQLITE_CORRUPT, message: "room \(name) has an unreadable scene")
            }
            var history: [StoredEvent] = []
            if historySize > 0 {
                try selectEvents.bind(1, name)
                try selectEvents.bind(2, Int64(seq) - Int64(historySize))
                while try selectEvents.step() {
                    history += SQLiteSchema.events(first: UInt64(selectEvents.int64(0)), packed: selectEvents.blob(1))
                }
                history.removeAll { $0.seq > seq || $0.seq + UInt64(historySize) <= seq }
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
            try database.execute("BEGIN IMMEDIATE")
            do {
                for commit in commits { try write(commit) }
                try database.execute("COMMIT")
            } catch {
                try? database.execute("ROLLBACK")
                throw error
            }
        } catch {
            throw StoreError(.io, "writing to \(path): \(error)")
        }
        return []
    }

    private func write(_ commit: RoomCommit) throws(SQLiteError) {
        try upsertRoom.bind(1, commit.room)
        try upsertRoom.bind(2, commit.epoch)
        try upsertRoom.bind(3, Int64(commit.seq))
        try upsertRoom.bind(4, String(decoding: ServerMessageEncoder.sceneJSON(commit.scene), as: UTF8.self))
        try upsertRoom.run()
        guard historySize > 0, let first = commit.events.first, let last = commit.events.last else { return }
        // One row per commit: the events of one loop turn, packed together.
        try insertBatch.bind(1, commit.room)
        try insertBatch.bind(2, Int64(last.seq))
        try insertBatch.bind(3, Int64(first.seq))
        try insertBatch.bind(4, blob: SQLiteSchema.pack(commit.events))
        try insertBatch.run()
        if last.seq > UInt64(historySize) {
            try trimBatches.bind(1, commit.room)
            try trimBatches.bind(2, Int64(last.seq) - Int64(historySize))
            try trimBatches.run()
        }
    }

    public func close() {
        guard !closed else { return }
        closed = true
        try? database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for statement in [selectRoom, selectEvents, upsertRoom, insertBatch, trimBatches] { statement.finalize() }
        database.close()
        lock.release()
    }
}

/// An exclusive lock on a data directory, so two servers never share one store.
final class DataDirectoryLock {
    private var descriptor: Int32

    init(directory: String) throws(StoreError) {
        let path = (directory as NSString).appendingPathComponent("happy.lock")
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StoreError(.setup, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            Foundation.close(descriptor)
            throw StoreError(.setup, "another happyserver is using the data directory \(directory); stop it or choose another dataDir")
        }
    }

    func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        Foundation.close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
