import Foundation
import HappyCore
import HappySQLite

/// `happyserver restore`: puts a backup in place of a stopped server's database.
struct RestoreCommand {
    static let usage = """
        usage: happyserver restore --from PATH [--config FILE]

        Restores a backup (made by happyserver backup, or a copy of a stopped
        server's database) into the data directory of the configuration, for the
        server to serve at its next start. Checks PATH first (PRAGMA
        integrity_check, a database this happyserver can open), moves the current
        dataDir/happy.sqlite3 and its journal files aside as
        happy.sqlite3.before-restore-<UTC time>, and puts the copy in its place
        (mode 0600). The rooms keep their state and history as the backup holds
        them, under new epochs: clients start afresh from the restored state
        rather than resume past events the backup does not hold.

        Refuses, changing nothing, while a server runs on the data directory
        (stop it first), and a backup that fails the check. PATH is not changed.

        options:
          --from PATH     the backup to restore
          --config FILE   the server's configuration (default: config.json if present)

        exit status: 0 restored; 2 usage; 65 the backup fails its check; 69 the
        configuration keeps rooms in Redis or in memory; 74 a file cannot be read
        or written; 75 a server is running on the data directory; 78 the
        configuration is wrong
        """

    var from: String?
    var options = ServerOptions()

    static func parse(_ arguments: [String]) throws(UsageError) -> RestoreCommand {
        var command = RestoreCommand()
        var reader = ArgumentReader(arguments)
        while let flag = reader.nextFlag() {
            switch flag {
            case "--from": command.from = try reader.value(for: flag)
            case "--config", "-c": command.options.configPath = try reader.value(for: flag)
            default: throw UsageError(message: "unknown argument \"\(flag)\"")
            }
        }
        guard command.from != nil else { throw UsageError(message: "--from PATH is required: the backup to restore") }
        return command
    }

    /// Runs the command; what went wrong comes back with its exit status.
    func run() throws(CommandFailure) -> String {
        let config = try CommandFailure.loadingConfiguration(options)
        try CommandFailure.refusingStoresWithoutFile(config, doing: "restore")
        // Whatever the restore creates (the data directory, the database) is the server's user's alone.
        umask(0o077)
        let report: SQLiteRestore.Report
        do {
            report = try SQLiteRestore.restore(from: from ?? "", intoDirectory: config.dataDir)
        } catch {
            switch error.reason {
            case .serverRunning: throw CommandFailure(.tempFailure, error.message)
            case .damaged: throw CommandFailure(.dataError, error.message)
            case .unusable: throw CommandFailure(.ioError, error.message)
            }
        }
        let replaced = report.setAside.isEmpty
            ? "there was no database before"
            : "the database it replaced is now \(report.setAside.joined(separator: ", "))"
        return """
            restored \(report.backup.path) (\(report.backup.bytes) bytes, integrity ok, schema \(report.backup.schema), \
            \(rooms(report.backup.rooms)), each under a new epoch)
              into \(report.installed)
              \(replaced)
            start the server to serve it
            """
    }
}
