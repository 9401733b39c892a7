import Foundation
import HappyCore
import HappyServer

/// The data directory holds names, addresses, history and the operator key:
/// it is the server's user's alone (0700, its files 0600), whatever the umask.
enum DataDirectory {
    /// Makes every file the process creates private from here on (the database,
    /// its journal, the key, backups), then creates `path` or narrows its mode.
    static func prepare(_ path: String, logger: Logger) throws(ServerError) {
        umask(0o077)
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw ServerError("cannot create the data directory \(path): \(error.localizedDescription); "
                + "fix the permissions of its parent or set another dataDir")
        }
        guard access(path, W_OK) == 0 else {
            throw ServerError("the data directory \(path) is not writable (\(String(cString: strerror(errno)))); "
                + "fix its permissions or set another dataDir")
        }
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw ServerError("cannot read the data directory \(path): \(String(cString: strerror(errno)))")
        }
        if status.st_mode & 0o077 != 0 {
            guard chmod(path, 0o700) == 0 else {
                throw ServerError("the data directory \(path) is open to other users (mode \(String(status.st_mode & 0o777, radix: 8))) "
                    + "and cannot be narrowed: \(String(cString: strerror(errno))); chmod 700 it")
            }
            logger.warn("data directory narrowed to its owner", ["path": path, "was": String(status.st_mode & 0o777, radix: 8)])
        }
    }
}
