import Foundation

/// A self-pipe: other threads (session callbacks, signal handlers) write a
/// byte to wake the terminal loop out of `poll`.
final class WakePipe: @unchecked Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws(TerminalError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw TerminalError("cannot create a pipe") }
        readEnd = fds[0]
        writeEnd = fds[1]
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Wakes the loop (a full pipe already will).
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}

/// Waits for input on file descriptors.
enum Poller {
    /// Which of `fds` are readable, waiting at most `timeout` seconds.
    static func readable(_ fds: [Int32], timeout: Double) -> Set<Int32> {
        var entries = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let result = poll(&entries, nfds_t(entries.count), Int32(max(0, min(timeout, 60)) * 1000))
        guard result > 0 else { return [] }
        return Set(entries.filter { $0.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 }.map(\.fd))
    }
}
