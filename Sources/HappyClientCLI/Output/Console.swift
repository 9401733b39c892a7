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

    static func writeAll(_ fd: Int32, _ bytes: inout [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            offset += written
        }
    }
}
