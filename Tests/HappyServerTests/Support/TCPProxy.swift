import Foundation

/// A TCP forwarder on a free loopback port to `127.0.0.1:targetPort`, which
/// can cut the link silently, as a network partition does: while
/// `blackhole()` holds, every byte either way is read and dropped (no reset,
/// no close), new connections are taken but never forwarded. `heal()` ends
/// it; connections that lived through the cut are then closed (their
/// streams lost bytes), and new ones are forwarded again.
final class TCPProxy: @unchecked Sendable {
    let port: Int
    private let targetPort: Int
    private let listener: Int32
    private let lock = NSLock()
    private var cut = false
    private var stopped = false
    private var threads: [Thread] = []

    init(targetPort: Int) throws {
        self.targetPort = targetPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Int32 in
                guard bind(listener, raw, length) == 0, listen(listener, 64) == 0 else { return -1 }
                return getsockname(listener, raw, &length)
            }
        }
        guard bound == 0 else {
            close(listener)
            throw NSError(domain: "TCPProxy", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot listen"])
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let acceptor = Thread { [self] in acceptLoop() }
        acceptor.name = "tcp-proxy-accept"
        acceptor.start()
        threads.append(acceptor)
    }

    deinit { stop() }

    var url: String { "redis://127.0.0.1:\(port)/0" }

    /// Drops everything from now on, silently.
    func blackhole() { lock.withLock { cut = true } }

    /// Forwards again.
    func heal() { lock.withLock { cut = false } }

    /// Closes the listener and every connection (within half a second).
    func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        let deadline = Date(timeIntervalSinceNow: 5)
        while threads.contains(where: { !$0.isFinished }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    }

    private var state: (cut: Bool, stopped: Bool) { lock.withLock { (cut, stopped) } }

    private func acceptLoop() {
        while !state.stopped {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let thread = Thread { [self] in serve(client) }
            thread.name = "tcp-proxy-conn"
            lock.withLock { threads.append(thread) }
            thread.start()
        }
    }

    /// Pumps one connection both ways until either side closes, the proxy
    /// stops, or the link heals after a cut this connection lived through.
    private func serve(_ client: Int32) {
        defer { close(client) }
        var livedThroughCut = state.cut
        var upstream: Int32 = -1
        defer { if upstream >= 0 { close(upstream) } }
        if !livedThroughCut {
            upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { return }
        }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let now = state
            if now.stopped { return }
            if now.cut { livedThroughCut = true } else if livedThroughCut { return }
            var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, upstream >= 0 ? 2 : 1, 100) > 0 else { continue }
            for (index, entry) in fds.enumerated() where entry.fd >= 0 && entry.revents != 0 {
                let count = read(entry.fd, &buffer, buffer.count)
                if count <= 0 { return }
                // During a cut the bytes vanish, as dropped packets do.
                if state.cut { continue }
                let target = index == 0 ? upstream : client
                var written = 0
                while written < count {
                    let result = buffer.withUnsafeBytes { write(target, $0.baseAddress! + written, count - written) }
                    if result <= 0 { return }
                    written += result
                }
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
