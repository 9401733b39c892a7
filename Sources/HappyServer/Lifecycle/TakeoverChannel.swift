import Glibc
import HappyCore

/// The new process's side of an upgrade: it finds the listening socket and
/// the channel to the running process in its environment, says `ready` once
/// its configuration is good, waits for `released` (the store is free), and
/// says `serving` once it accepts connections.
public final class TakeoverChannel {
    /// The listening socket the running process handed over.
    public let listenDescriptor: Int32
    private let channel: Int32

    private init(listenDescriptor: Int32, channel: Int32) {
        self.listenDescriptor = listenDescriptor
        self.channel = channel
    }

    /// The channel, when this process was started to take over; the
    /// variables are cleared so that they reach no process of its own.
    public static func fromEnvironment() -> TakeoverChannel? {
        guard let listen = getenv(HandoverEnvironment.listenVariable).flatMap({ Int32(String(cString: $0)) }),
              let channel = getenv(HandoverEnvironment.channelVariable).flatMap({ Int32(String(cString: $0)) }) else {
            return nil
        }
        unsetenv(HandoverEnvironment.listenVariable)
        unsetenv(HandoverEnvironment.channelVariable)
        _ = fcntl(channel, F_SETFD, FD_CLOEXEC)
        return TakeoverChannel(listenDescriptor: listen, channel: channel)
    }

    /// The configuration is good and this binary runs: the running process may let go.
    public func tellReady() {
        say("ready")
    }

    /// Waits until the running process has released the store; throws when
    /// it says nothing within `seconds` or goes away.
    public func waitForRelease(seconds: Double) throws(ServerError) {
        var poller = pollfd(fd: channel, events: Int16(POLLIN), revents: 0)
        var received = [UInt8]()
        let deadline = SystemTime.monotonicSeconds() + seconds
        while !received.contains(0x0A) {
            let left = deadline - SystemTime.monotonicSeconds()
            guard left > 0 else { throw ServerError("the running server did not release the store within \(Int(seconds)) s") }
            let ready = poll(&poller, 1, Int32(left * 1000))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { read(channel, $0.baseAddress, $0.count) }
            guard count > 0 else { throw ServerError("the running server went away before it released the store") }
            received += buffer[0..<count]
        }
        guard received.starts(with: Array("released".utf8)) else {
            throw ServerError("the running server said \(String(decoding: received, as: UTF8.self)) instead of releasing the store")
        }
    }

    /// Accepting connections: the running process sends its clients over and stops.
    public func tellServing() {
        say("serving")
        close(channel)
    }

    private func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(channel, $0.baseAddress, $0.count) }
    }
}
