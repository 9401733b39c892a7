import Foundation

/// Where output goes: whole lines, written at once and unbuffered, so
/// that piped output (NDJSON) is readable line by line as it happens.
public struct Console: Sendable {
    public var out: @Sendable (String) -> Void
    public var err: @Sendable (String) -> Void

    public init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void) {
        self.out = out
        self.err = err
    }

    /// Standard output and standard error.
    public static let standard = Console(out: { FileDescriptor.writeAll(1, $0 + "\n") },
                                         err: { FileDescriptor.writeAll(2, $0 + "\n") })
}

/// Raw writes to a file descriptor.
enum FileDescriptor {
    /// Writes every byte of `text`, retrying short writes and interruptions.
    static func writeAll(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        writeAll(fd, &bytes)
    }

    /// Writes `bytes` to the file at `path` (created or replaced); the
    /// system's reason when it cannot (`No such file or directory`).
    static func save(_ bytes: [UInt8], toFile path: String) -> String? {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        var remaining = bytes
        let written = writeAll(fd, &remaining)
        let writeError = errno
        guard close(fd) == 0, written else { return String(cString: strerror(written ? errno : writeError)) }
        return nil
    }

    /// False when a write failed (`errno` says why).
    @discardableResult
    static func writeAll(_ fd: Int32, _ bytes: inout [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return false
            }
            offset += written
        }
        return true
    }
}
