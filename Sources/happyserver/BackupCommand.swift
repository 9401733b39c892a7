import Foundation
import HappyCore
import HappyCurl
import HappyServer
import HappySQLite

/// `happyserver backup`: has the running server copy its database (only it
/// can read it: the store keeps other processes out), then copies that
/// file to `--to` and checks it.
struct BackupCommand {
    static let usage = """
        usage: happyserver backup --to PATH [--config FILE] [--host HOST] [--port PORT] [--token TOKEN]
                                  [--timeout SECONDS]

        Backs up the database of the running server while it serves and records.
        Asks the server at the configuration's address (POST /api/backup) to
        copy its database, as one commit left it, into backup.dir (or
        dataDir/backups; the newest backup.keep are kept there), then copies that
        file to PATH (mode 0600; into it when PATH is a folder), checks the copy
        (PRAGMA integrity_check) and says what it did.

        The credential is the server's operator key (dataDir/operator.key: run
        this as the server's user); with auth.secret set, an admin token
        (--token or HAPPY_TOKEN; happyserver token --sub NAME --role admin).
        With TLS it trusts the CA certificates of SSL_CERT_FILE (tls.cert itself
        for a self-signed one). A stopped server's database needs no command:
        copy dataDir/happy.sqlite3.
        With cluster.redis the rooms are in Redis: back up Redis itself (its RDB
        snapshots or append-only file, see docs/operations.md).

        options:
          --to PATH          where the copy goes: a new file, or a folder
          --config FILE      the server's configuration (default: config.json if present)
          --host HOST        the server's address (default: its "host", loopback for 0.0.0.0 and ::)
          --port PORT        the server's port (default: its "port"; needed when that is 0)
          --token TOKEN      an admin token, when auth.secret is set (HAPPY_TOKEN)
          --timeout SECONDS  how long the server may take to copy (default 600)

        exit status: 0 done; 2 usage; 69 no server answers, or it makes no backups
        (rooms in memory or in Redis); 73 PATH cannot be written; 74 the backup
        failed, or its copy fails the check; 75 no answer within --timeout;
        77 the credential was refused; 78 the configuration is wrong
        """

    var to: String?
    var options = ServerOptions()
    var token: String?
    var timeout = 600.0

    static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> BackupCommand {
        var command = BackupCommand()
        command.token = environment["HAPPY_TOKEN"]
        var reader = ArgumentReader(arguments)
        while let flag = reader.nextFlag() {
            switch flag {
            case "--to": command.to = try reader.value(for: flag)
            case "--config", "-c": command.options.configPath = try reader.value(for: flag)
            case "--host": command.options.host = try reader.value(for: flag)
            case "--port", "-p": command.options.port = try ServerOptions.port(try reader.value(for: flag))
            case "--token": command.token = try reader.value(for: flag)
            case "--timeout":
                let text = try reader.value(for: flag)
                guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
                    throw UsageError(message: "--timeout must be a number of seconds from 1 to 86400, got \"\(text)\"")
                }
                command.timeout = seconds
            default: throw UsageError(message: "unknown argument \"\(flag)\"")
            }
        }
        guard command.to != nil else { throw UsageError(message: "--to PATH is required: where the copy goes") }
        return command
    }

    /// Runs the command; what went wrong comes back with its exit status.
    func run() throws(CommandFailure) -> String {
        let config = try CommandFailure.loadingConfiguration(options)
        try CommandFailure.refusingStoresWithoutFile(config, doing: "back up")
        guard config.port != 0 else {
            throw CommandFailure(.usage, "the configuration's port is 0 (any free port): give the port the server "
                + "listens on (its \"listening\" log line) with --port")
        }
        let url = ServerAddress(config: config).url("/api/backup")
        let answer = try requestBackup(url, credential: try credential(config))
        let target = destination(for: answer.path)
        guard FileManager.default.fileExists(atPath: answer.path) else {
            throw CommandFailure(.ioError, "the server wrote \(answer.path), but it is not there: a newer backup "
                + "pushed it out of backup.keep (try again), or the server runs on another machine (run this there)")
        }
        do {
            try SQLiteBackup.copyFile(answer.path, to: target, replacing: false)
        } catch {
            throw CommandFailure(access(answer.path, R_OK) == 0 ? .cannotCreate : .ioError,
                                 "the server wrote \(answer.path), but it cannot be copied to \(target): \(error.message)")
        }
        let facts: SQLiteBackup.Facts
        do {
            facts = try SQLiteBackup.check(target)
        } catch {
            unlink(target)
            throw CommandFailure(.ioError, "the copy failed its check, and was deleted: \(error.message); "
                + "the server's own is \(answer.path)")
        }
        return """
            backed up the database of the server at \(url.dropLast("/api/backup".count)) while it ran
              the server wrote \(answer.path) (\(facts.bytes) bytes) in \(String(format: "%.3f", answer.seconds)) s
              copied to \(target): integrity ok, schema \(facts.schema), \(rooms(facts.rooms))
            """
    }

    /// `--to`, or the server's file name inside it when it is a folder.
    private func destination(for serverFile: String) -> String {
        var isDirectory: ObjCBool = false
        guard let to, FileManager.default.fileExists(atPath: to, isDirectory: &isDirectory), isDirectory.boolValue else {
            return to ?? ""
        }
        return (to as NSString).appendingPathComponent((serverFile as NSString).lastPathComponent)
    }

    /// The operator key beside the database, or with `auth.secret` an admin token.
    private func credential(_ config: HappyConfig) throws(CommandFailure) -> String {
        guard config.auth.secret.isEmpty else {
            guard let token, !token.isEmpty else {
                throw CommandFailure(.usage, "auth.secret is set: give an admin token with --token or HAPPY_TOKEN "
                    + "(happyserver token --sub NAME --role admin)")
            }
            return token
        }
        let path = (config.dataDir as NSString).appendingPathComponent(OperatorKey.fileName)
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure(.unavailable, "there is no operator key \(path): no server has run with this "
                + "configuration's dataDir (a server makes the key at its first start)")
        }
        guard let data = FileManager.default.contents(atPath: path),
              let key = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
              !key.isEmpty else {
            throw CommandFailure(.noPermission, "cannot read the operator key \(path): run this as the server's user")
        }
        return key
    }

    private struct Answer {
        var path: String
        var seconds: Double
    }

    private func requestBackup(_ url: String, credential: String) throws(CommandFailure) -> Answer {
        let response: HTTPClientResponse
        do throws(HTTPClientError) {
            let request = HTTPClientRequest(method: "POST", url: url,
                                            headers: [HTTPHeader("Authorization", "Bearer \(credential)")],
                                            timeout: timeout, trust: .fromEnvironment(ProcessInfo.processInfo.environment),
                                            maxResponseBytes: 64 * 1024)
            response = try HTTPClient().perform(request)
        } catch .cannotConnect(let endpoint, let reason) {
            throw CommandFailure(.unavailable, "no server answers at \(endpoint) (\(reason)): is it running, with this "
                + "configuration (or give --host and --port)? A stopped server's database needs no command: "
                + "copy its dataDir/\(SQLiteRoomStore.fileName)")
        } catch .untrustedCertificate(let endpoint, let reason) {
            throw CommandFailure(.unavailable, "the certificate of \(endpoint) is not trusted (\(reason)): name it, or "
                + "its CA, in SSL_CERT_FILE (the configuration's tls.cert for a self-signed one)")
        } catch .timedOut {
            throw CommandFailure(.tempFailure, "the server at \(url) did not answer within \(Int(timeout)) s; "
                + "its backup may still be running: see its log, or try again with a longer --timeout")
        } catch {
            throw CommandFailure(.unavailable, error.description)
        }
        let json = try? JSONParser.parse(response.body)
        let message = json?["message"]?.stringValue ?? String(decoding: response.body.prefix(300), as: UTF8.self)
        switch response.status {
        case 200:
            guard let path = json?["path"]?.stringValue, let seconds = json?["seconds"]?.doubleValue else {
                throw CommandFailure(.software, "the server at \(url) answered 200 without a backup's path: \(message)")
            }
            return Answer(path: path, seconds: seconds)
        case 401, 403:
            throw CommandFailure(.noPermission, "the server refused the credential (\(response.status)): \(message)")
        case 404:
            throw CommandFailure(.software, "the server at \(url) has no backup route: is it an older happyserver?")
        case 409:
            throw CommandFailure(.unavailable, message)
        default:
            throw CommandFailure(.ioError, "the server could not make the backup (\(response.status)): \(message)")
        }
    }
}
