import Foundation
import HappyCore

/// Puts a backup in place of a stopped server's database
/// (`happyserver restore`, docs/operations.md, Backups).
public enum SQLiteRestore {
    /// What a restore did.
    public struct Report: Equatable, Sendable {
        /// What the check of the backup found.
        public var backup: SQLiteBackup.Facts
        /// The database the server opens from now on.
        public var installed: String
        /// The files of the database it replaced, moved aside (empty when there was none).
        public var setAside: [String]
    }

    /// Why a restore did not happen; nothing in the data directory changed.
    public struct Failure: Error, CustomStringConvertible {
        /// What stood in the way.
        public enum Reason: Sendable {
            /// A server holds the data directory.
            case serverRunning
            /// The backup or the data directory cannot be read or written.
            case unusable
            /// The backup failed its check.
            case damaged
        }

        /// What stood in the way.
        public var reason: Reason
        /// What is wrong and what to do.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    /// The names the store's database takes on disk: the database, and its journals.
    static let databaseFiles = ["", "-wal", "-shm", "-journal"]

    /// Copies `source` into `directory`, checks the copy, gives its rooms new
    /// epochs (`renewEpochs`), moves the current
    /// database and its journals aside (`happy.sqlite3.before-restore-<UTC time>`,
    /// a log beside it would otherwise be replayed into the restored file) and
    /// puts the copy in its place, mode 0600. Holds the directory's lock
    /// throughout, so no server can start meanwhile, and refuses while one runs.
    public static func restore(from source: String, intoDirectory directory: String,
                               at date: Date = Date()) throws(Failure) -> Report {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw Failure(reason: .unusable, message: "cannot create the data directory \(directory): "
                + error.localizedDescription)
        }
        let lock: DataDirectoryLock
        do {
            lock = try DataDirectoryLock(directory: directory)
        } catch .held {
            throw Failure(reason: .serverRunning, message: "a happyserver is running on the data directory \(directory) "
                + "(it holds \(DataDirectoryLock.fileName)): stop it, then restore; nothing was changed")
        } catch {
            throw Failure(reason: .unusable, message: error.message)
        }
        defer { lock.release() }

        let database = (directory as NSString).appendingPathComponent(SQLiteRoomStore.fileName)
        let copy = database + ".restoring"
        do {
            try SQLiteBackup.copyFile(source, to: copy, replacing: true)
        } catch {
            unlink(copy)
            throw Failure(reason: .unusable, message: error.message)
        }
        let facts: SQLiteBackup.Facts
        do {
            facts = try SQLiteBackup.check(copy)
        } catch {
            unlink(copy)
            throw Failure(reason: .damaged, message: error.message.replacingOccurrences(of: copy, with: source)
                + "; nothing was changed")
        }
        do {
            try renewEpochs(in: copy)
            try SQLiteBackup.sync(copy)
        } catch {
            unlink(copy)
            throw Failure(reason: .unusable, message: "cannot prepare the copy of \(source) in \(copy): \(error); "
                + "nothing was changed")
        }
        var setAside: [(original: String, aside: String)] = []
        let stamp = date.formatted(Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted))
        for suffix in databaseFiles where FileManager.default.fileExists(atPath: database + suffix) {
            let aside = "\(database).before-restore-\(stamp)\(suffix)"
            guard rename(database + suffix, aside) == 0 else {
                let reason = SQLiteBackup.systemError()
                // Put back what already moved: the directory stays as it was.
                for file in setAside { rename(file.aside, file.original) }
                unlink(copy)
                throw Failure(reason: .unusable, message: "cannot move \(database + suffix) aside: \(reason); nothing was changed")
            }
            setAside.append((database + suffix, aside))
        }
        guard rename(copy, database) == 0 else {
            throw Failure(reason: .unusable, message: "cannot put the backup in place as \(database): "
                + "\(SQLiteBackup.systemError()); the database it was to replace is in \(setAside.first?.aside ?? "nowhere")")
        }
        try? SQLiteBackup.sync(directory)
        return Report(backup: SQLiteBackup.Facts(path: source, bytes: facts.bytes, schema: facts.schema, rooms: facts.rooms),
                      installed: database, setAside: setAside.map(\.aside))
    }

    /// Gives every room of the copy a new epoch, its state and history kept:
    /// the events after the backup are lost, and the seqs that follow must
    /// not pass for them (to clients resuming with a later seq, to webhook
    /// receivers that skip the ids `<epoch>-<seq>` they have seen).
    private static func renewEpochs(in path: String) throws(SQLiteError) {
        let database = try SQLiteDatabase(path: path, vfs: SQLiteRoomStore.fileSystem, create: false)
        defer { database.close() }
        try database.transaction(immediate: true) { () throws(SQLiteError) in
            let select = try database.prepare("SELECT name FROM rooms")
            var names: [String] = []
            while try select.step() { names.append(select.text(0)) }
            select.finalize()
            let update = try database.prepare("UPDATE rooms SET epoch = ?2 WHERE name = ?1")
            defer { update.finalize() }
            for name in names {
                try update.bind(1, name)
                try update.bind(2, Identifiers.newEpoch())
                try update.run()
            }
        }
    }
}
