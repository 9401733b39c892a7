import Foundation
import HappyCore

/// Why a command (`backup`, `restore`) did not do its work: what is wrong,
/// what to do, and its exit status (BSD's sysexits, as the server's own).
struct CommandFailure: Error {
    enum Status: Int32 {
        case usage = 2
        /// The backup fails its check (EX_DATAERR).
        case dataError = 65
        /// No server answers, or its store makes no backups (EX_UNAVAILABLE).
        case unavailable = 69
        /// The server answered what it should not (EX_SOFTWARE).
        case software = 70
        /// The output cannot be written (EX_CANTCREAT).
        case cannotCreate = 73
        /// A file cannot be read, written or copied (EX_IOERR).
        case ioError = 74
        /// Try again later: a server runs, or no answer in time (EX_TEMPFAIL).
        case tempFailure = 75
        /// The credential was refused or cannot be read (EX_NOPERM).
        case noPermission = 77
        /// The configuration is wrong (EX_CONFIG).
        case config = 78
    }

    let status: Status
    let message: String

    init(_ status: Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// The configuration the command works on.
    static func loadingConfiguration(_ options: ServerOptions) throws(CommandFailure) -> HappyConfig {
        do {
            return try loadConfiguration(options)
        } catch {
            throw CommandFailure(.config, error.message)
        }
    }

    /// Backups are of SQLite's file: none with rooms in Redis or in memory.
    static func refusingStoresWithoutFile(_ config: HappyConfig, doing what: String) throws(CommandFailure) {
        if !config.cluster.redis.isEmpty {
            throw CommandFailure(.unavailable, "this configuration keeps the rooms in Redis (cluster.redis), not in a "
                + "database file happyserver can \(what): back up Redis itself, from its RDB snapshots or its "
                + "append-only file (see Backups in docs/operations.md)")
        }
        if !config.persistence.enabled {
            throw CommandFailure(.unavailable, "persistence is disabled (persistence.enabled: false): the rooms are kept "
                + "in memory only, so there is no database to \(what)")
        }
    }
}

/// Where a command reaches the server its configuration describes: its
/// `host` (loopback when that is a wildcard), its `port`, `https` with TLS.
struct ServerAddress {
    let scheme: String
    let host: String
    let port: Int

    init(config: HappyConfig) {
        scheme = config.tls.isEnabled ? "https" : "http"
        switch config.host {
        case "0.0.0.0", "": host = "127.0.0.1"
        case "::": host = "[::1]"
        default: host = config.host.contains(":") ? "[\(config.host)]" : config.host
        }
        port = config.port
    }

    func url(_ path: String) -> String {
        "\(scheme)://\(host):\(port)\(path)"
    }
}

/// "1 room", "3 rooms".
func rooms(_ count: Int) -> String {
    count == 1 ? "1 room" : "\(count) rooms"
}
