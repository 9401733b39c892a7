import CSQLite
import Foundation
import HappyCore

/// Copies of the store's database: made online by the running server, and
/// checked before one is restored (docs/operations.md, Backups).
public enum SQLiteBackup {
    /// What the check of a backup file found.
    public struct Facts: Equatable, Sendable {
        /// The file checked.
        public var path: String
        /// Its size.
        public var bytes: Int64
        /// The layout it holds (`SQLiteSchema.version`, or an older one the server converts at start).
        public var schema: String
        /// The rooms it holds.
        public var rooms: Int
    }

    /// Copies the database at `source` into `target`, which must not exist,
    /// with `VACUUM INTO` on a connection of its own. That is one read
    /// transaction: the copy is the database as one commit left it, while
    /// the writer goes on committing (WAL). The copy is a single file (no
    /// journal beside it), mode 0600, synced, and appears under `target`
    /// only once complete.
    static func copy(database source: String, fileSystem: String, to target: String) throws(StoreError) {
        if FileManager.default.fileExists(atPath: target) {
            throw StoreError(.io, "cannot back up into \(target): the file exists")
        }
        let partial = target + ".partial"
        unlink(partial)
        do {
            // VACUUM INTO writes into an empty file as it finds it: made private first, it stays private.
            let descriptor = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw SQLiteError(code: SQLITE_CANTOPEN, message: Self.systemError()) }
            Foundation.close(descriptor)
            let database = try SQLiteDatabase(path: source, vfs: fileSystem, create: false)
            defer { database.close() }
            let vacuum = try database.prepare("VACUUM INTO ?1")
            defer { vacuum.finalize() }
            try vacuum.bind(1, partial)
            try vacuum.run()
            try sync(partial)
            guard rename(partial, target) == 0 else { throw SQLiteError(code: SQLITE_IOERR, message: Self.systemError()) }
            try sync((target as NSString).deletingLastPathComponent)
        } catch {
            unlink(partial)
            throw StoreError(.io, "backing up \(source) into \(target): \(error)")
        }
    }

    /// Checks a backup before it is restored: a SQLite database that passes
    /// `PRAGMA integrity_check`, with the tables of a layout the server can
    /// open. Opens it without a journal left beside it afterwards and writes nothing.
    public static func check(_ path: String) throws(StoreError) -> Facts {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw StoreError(.setup, "cannot read \(path): \(systemError())")
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw StoreError(.setup, "\(path) is not a file") }
        guard access(path, R_OK) == 0 else { throw StoreError(.setup, "cannot read \(path): \(systemError())") }
        var log = stat()
        if stat(path + "-wal", &log) == 0, log.st_size > 0 {
            throw StoreError(.damaged, "\(path) has a write-ahead log beside it (\(path)-wal) holding changes the file "
                + "lacks: it was copied from a server that was running or did not stop cleanly. "
                + "Make a backup with happyserver backup instead")
        }
        do {
            let database = try SQLiteDatabase(path: path, vfs: SQLiteRoomStore.fileSystem, create: false)
            defer { database.close() }
            let problems = try integrityProblems(database)
            guard problems.isEmpty else {
                throw SQLiteError(code: SQLITE_CORRUPT, message: "the integrity check failed: "
                    + problems.prefix(3).joined(separator: "; "))
            }
            guard try database.scalarText("SELECT name FROM sqlite_schema WHERE name = 'meta'") != nil,
                  let schema = try database.scalarText("SELECT value FROM meta WHERE key = 'schema'") else {
                throw SQLiteError(code: SQLITE_NOTADB, message: "it is a SQLite database, but not happyserver's")
            }
            guard SQLiteSchema.readable.contains(schema) else {
                throw SQLiteError(code: SQLITE_NOTADB, message: "its layout (schema \(schema)) is newer than this "
                    + "happyserver's (\(SQLiteSchema.version)): restore it with the version that made it")
            }
            let rooms = Int(try database.scalarText("SELECT count(*) FROM rooms") ?? "") ?? 0
            return Facts(path: path, bytes: Int64(status.st_size), schema: schema, rooms: rooms)
        } catch {
            throw StoreError(.damaged, "\(path) is not a usable backup: \(error)")
        }
    }

    /// Every line `PRAGMA integrity_check` gives except its `ok`.
    private static func integrityProblems(_ database: SQLiteDatabase) throws(SQLiteError) -> [String] {
        let check = try database.prepare("PRAGMA integrity_check")
        defer { check.finalize() }
        var lines: [String] = []
        while try check.step() { lines.append(check.text(0)) }
        return lines == ["ok"] ? [] : lines.isEmpty ? ["no answer"] : lines
    }

    /// A private copy (mode 0600) of `source` at `target`, synced. An
    /// existing `target` is replaced only when `replacing`.
    public static func copyFile(_ source: String, to target: String, replacing: Bool) throws(StoreError) {
        if replacing { unlink(target) }
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw StoreError(.setup, "cannot read \(source): \(systemError())") }
        defer { Foundation.close(input) }
        let output = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw StoreError(.setup, "cannot create \(target): \(systemError())") }
        var finished = false
        defer {
            Foundation.close(output)
            if !finished { unlink(target) }
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw StoreError(.io, "reading \(source): \(systemError())") }
            let written = buffer.withUnsafeBytes { write(output, $0.baseAddress, count) }
            guard written == count else { throw StoreError(.io, "writing \(target): \(systemError())") }
        }
        guard fsync(output) == 0 else { throw StoreError(.io, "syncing \(target): \(systemError())") }
        finished = true
    }

    /// Flushes a file or a folder (the rename in it) to the disk.
    static func sync(_ path: String) throws(SQLiteError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SQLiteError(code: SQLITE_IOERR, message: "\(path): \(systemError())") }
        defer { Foundation.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw SQLiteError(code: SQLITE_IOERR, message: "\(path): \(systemError())") }
    }

    static func systemError() -> String { String(cString: strerror(errno)) }
}

extension SQLiteRoomStore {
    /// Copies the database on a connection of its own (`SQLiteBackup.copy`):
    /// commits go on meanwhile, on the writer connection.
    public func backup(to path: String) throws(StoreError) {
        try SQLiteBackup.copy(database: self.path, fileSystem: Self.fileSystem, to: path)
    }
}
