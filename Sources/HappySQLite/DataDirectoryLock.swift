import Foundation

/// An exclusive lock on a data directory (`flock` on `happy.lock`), so two
/// servers never share one store, and nothing is restored under a running one.
final class DataDirectoryLock {
    static let fileName = "happy.lock"

    /// Why the lock could not be taken.
    enum Failure: Error {
        /// Another process holds it: a server runs on the directory.
        case held(String)
        /// The lock file cannot be made or opened.
        case unusable(String)

        var message: String {
            switch self {
            case .held(let message), .unusable(let message): return message
            }
        }
    }

    private var descriptor: Int32

    init(directory: String) throws(Failure) {
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .unusable("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            Foundation.close(descriptor)
            throw .held("another happyserver is using the data directory \(directory); stop it or choose another dataDir")
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
