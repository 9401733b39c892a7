import CEpoll
import Foundation
import Glibc
import Synchronization

/// A lean WebSocket client loop for the crowd: non-blocking sockets on one
/// epoll instance, the HTTP upgrade written by hand, and the server's frames
/// (never masked) read in place from one shared buffer. lws's client parser
/// reads a frame a byte at a time: with `ClientLoop` a 600-byte tick costs
/// the load generator about 10 µs, and 10 000 clients at 20 ticks a second
/// need two cores; here it costs its share of a `recv` and a few compares.
/// Answers the server's pings and masks what it sends, as RFC 6455 asks of
/// a client.
final class CrowdSocketLoop: CrowdLoop, @unchecked Sendable {
    fileprivate enum Command {
        case open(CrowdSocket)
        case send(CrowdSocket, [UInt8])
        case abort(CrowdSocket)
        case run(@Sendable () -> Void)
        case stop
    }

    private let epoll: Int32
    /// Other threads wake the loop through it.
    private let wakeFD: Int32
    private let commands = Mutex<[Command]>([])
    private let wakePending = Atomic<Bool>(false)
    /// Loop-thread state: the socket of each descriptor.
    private var sockets: [CrowdSocket?] = []
    private var running = true
    private let readBuffer: UnsafeMutableRawPointer
    private static let readCapacity = 256 * 1024
    /// A busy loop naps this long before it looks again, so that what
    /// arrives meanwhile is read in one batch. The server's writes then
    /// find no reader asleep to wake: a cost that loopback puts on the
    /// server (about a sixth of its CPU here) and remote clients would not.
    /// Arrivals are timed up to this much late.
    static let readPauseMicroseconds: UInt32 = 1000
    private let stopped = NSCondition()
    private var isStopped = false

    init(name: String) throws {
        Self.raiseDescriptorLimit()
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard epoll >= 0, wakeFD >= 0 else {
            throw BenchError("crowd: no epoll instance or eventfd (\(String(cString: strerror(errno))))")
        }
        readBuffer = .allocate(byteCount: Self.readCapacity, alignment: 16)
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: wakeFD))
        epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFD, &event)
        let thread = Thread { [self] in serve() }
        thread.name = name
        thread.start()
    }

    deinit {
        readBuffer.deallocate()
    }

    /// As many open files as the hard limit allows: 10 000 clients need more than the usual 1 024.
    private static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    // MARK: any thread

    func open(_ client: CrowdClient, port: Int, path: String) -> CrowdLink {
        open(client as any SocketClient, port: port, path: path)
    }

    /// Connects any client of this loop's sockets to `path` on the server.
    func open(_ client: any SocketClient, port: Int, path: String) -> CrowdSocket {
        let socket = CrowdSocket(loop: self, client: client, port: port, path: path)
        post(.open(socket))
        return socket
    }

    func perform(_ body: @escaping @Sendable () -> Void) { post(.run(body)) }

    func shutdown() {
        stopped.lock()
        let done = isStopped
        stopped.unlock()
        guard !done else { return }
        post(.stop)
        stopped.lock()
        while !isStopped { stopped.wait() }
        stopped.unlock()
    }

    fileprivate func post(_ command: Command) {
        commands.withLock { $0.append(command) }
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
    }

    // MARK: loop thread

    private func serve() {
        let capacity = 1024
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        var busy = false
        while running {
            if busy { usleep(Self.readPauseMicroseconds) }
            let count = epoll_wait(epoll, events, Int32(capacity), -1)
            if count < 0 && errno != EINTR { break }
            busy = count > 0
            for index in 0..<max(0, Int(count)) {
                let fd = events[index].data.fd
                if fd == wakeFD {
                    var count: UInt64 = 0
                    _ = read(wakeFD, &count, 8)
                    wakePending.store(false, ordering: .releasing)
                    drainCommands()
                } else if fd >= 0, fd < sockets.count, let socket = sockets[Int(fd)] {
                    handle(socket, events: events[index].events)
                }
            }
        }
        for case let socket? in sockets { Glibc.close(socket.fd) }
        sockets.removeAll()
        Glibc.close(epoll)
        Glibc.close(wakeFD)
        stopped.lock()
        isStopped = true
        stopped.broadcast()
        stopped.unlock()
    }

    private func drainCommands() {
        let pending = commands.withLock { list in
            let taken = list
            list.removeAll()
            return taken
        }
        for command in pending {
            switch command {
            case .open(let socket): connect(socket)
            case .send(let socket, let frame):
                guard socket.state != .closed else { continue }
                socket.unsent.append(contentsOf: frame)
                if socket.state != .connecting { flush(socket) }
            case .abort(let socket): finish(socket, why: nil)
            case .run(let body): body()
            case .stop: running = false
            }
        }
    }

    private func connect(_ socket: CrowdSocket) {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return fail(socket, "socket: \(String(cString: strerror(errno)))") }
        socket.fd = fd
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(socket.port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7f00_0001).bigEndian)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 || errno == EINPROGRESS else {
            Glibc.close(fd)
            socket.fd = -1
            return fail(socket, "connect: \(String(cString: strerror(errno)))")
        }
        if Int(fd) >= sockets.count { sockets += Array(repeating: nil, count: Int(fd) + 1024 - sockets.count) }
        sockets[Int(fd)] = socket
        watch(socket, writable: true, adding: true)
    }

    private func watch(_ socket: CrowdSocket, writable: Bool, adding: Bool = false) {
        var event = epoll_event(events: EPOLLIN.rawValue | (writable ? EPOLLOUT.rawValue : 0),
                                data: epoll_data_t(fd: socket.fd))
        epoll_ctl(epoll, adding ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, socket.fd, &event)
        socket.watchingWritable = writable
    }

    private func handle(_ socket: CrowdSocket, events: UInt32) {
        if socket.state == .connecting {
            guard events & (EPOLLOUT.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 else { return }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket.fd, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else { return finish(socket, why: "connect: \(String(cString: strerror(error)))") }
            socket.state = .upgrading
            socket.unsent = socket.upgradeRequest + socket.unsent
            watch(socket, writable: false)
            flush(socket)
            return
        }
        if events & EPOLLIN.rawValue != 0 || events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            readAll(socket)
        }
        if socket.state != .closed && events & EPOLLOUT.rawValue != 0 { flush(socket) }
    }

    private func readAll(_ socket: CrowdSocket) {
        while socket.state != .closed {
            let count = recv(socket.fd, readBuffer, Self.readCapacity, 0)
            if count > 0 {
                consume(socket, count)
                if count < Self.readCapacity { return }
            } else if count == 0 {
                return finish(socket, why: "closed by the server without a close frame")
            } else {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                return finish(socket, why: "recv: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// New bytes in the read buffer: after what an earlier read left of a frame, if anything.
    private func consume(_ socket: CrowdSocket, _ count: Int) {
        if socket.carried.isEmpty {
            let used = parse(socket, UnsafeRawBufferPointer(start: readBuffer, count: count))
            if used < count && socket.state != .closed {
                socket.carried = Array(UnsafeRawBufferPointer(start: readBuffer + used, count: count - used))
            }
        } else {
            socket.carried.append(contentsOf: UnsafeRawBufferPointer(start: readBuffer, count: count))
            let carried = socket.carried
            let used = carried.withUnsafeBytes { parse(socket, $0) }
            socket.carried = socket.state == .closed ? [] : Array(carried[used...])
        }
    }

    private static let headerEnd = Array("\r\n\r\n".utf8)
    private static let switching = Array("HTTP/1.1 101".utf8)

    /// Reads the upgrade answer and every whole frame in `bytes`; how many bytes it used.
    private func parse(_ socket: CrowdSocket, _ bytes: UnsafeRawBufferPointer) -> Int {
        var at = 0
        if socket.state == .upgrading {
            guard let end = MessageScan.find(Self.headerEnd, in: bytes, from: 0) else {
                if bytes.count > 16 * 1024 { finish(socket, why: "no end to the upgrade answer's headers") }
                return 0
            }
            guard MessageScan.matches(Self.switching, in: bytes, at: 0) else {
                let line = bytes.prefix(while: { $0 != UInt8(ascii: "\r") })
                finish(socket, why: "upgrade refused: \(String(decoding: line, as: UTF8.self))")
                return bytes.count
            }
            socket.state = .open
            at = end
        }
        while socket.state == .open {
            let remaining = bytes.count - at
            guard remaining >= 2 else { break }
            let first = bytes[at], second = bytes[at + 1]
            var length = Int(second & 0x7f)
            var header = 2
            if length == 126 {
                guard remaining >= 4 else { break }
                length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
                header = 4
            } else if length == 127 {
                guard remaining >= 10 else { break }
                length = (2..<10).reduce(0) { $0 << 8 | Int(bytes[at + $1]) }
                header = 10
            }
            if second & 0x80 != 0 {
                finish(socket, why: "the server masked a frame")
                return bytes.count
            }
            guard remaining >= header + length else { break }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(at + header)..<(at + header + length)])
            at += header + length
            frame(socket, opcode: first & 0x0f, final: first & 0x80 != 0, payload)
        }
        return at
    }

    private func frame(_ socket: CrowdSocket, opcode: UInt8, final: Bool, _ payload: UnsafeRawBufferPointer) {
        switch opcode {
        case 1, 2:
            if final {
                socket.client.receive(payload)
            } else {
                socket.fragments = Array(payload)
            }
        case 0:
            socket.fragments.append(contentsOf: payload)
            if final {
                let message = socket.fragments
                socket.fragments = []
                message.withUnsafeBytes { socket.client.receive($0) }
            }
        case 8:
            let code = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil
            let reason = payload.count > 2 ? String(decoding: payload.dropFirst(2), as: UTF8.self) : ""
            socket.closeCode = code
            finish(socket, why: "closed \(code.map(String.init) ?? "without a code") \(reason)")
        case 9:
            socket.unsent.append(contentsOf: CrowdSocket.frame(opcode: 0x8a, payload: payload))
            flush(socket)
        default:
            break
        }
    }

    private func flush(_ socket: CrowdSocket) {
        while !socket.unsent.isEmpty {
            let sent = socket.unsent.withUnsafeBytes { Glibc.send(socket.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent > 0 {
                socket.unsent.removeFirst(sent)
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                if !socket.watchingWritable { watch(socket, writable: true) }
                return
            } else {
                return finish(socket, why: "send: \(String(cString: strerror(errno)))")
            }
        }
        if socket.watchingWritable { watch(socket, writable: false) }
    }

    /// Closes the socket once; `why` nil: this side chose to (nothing for the client to count).
    private func finish(_ socket: CrowdSocket, why: String?) {
        guard socket.state != .closed else { return }
        socket.state = .closed
        if socket.fd >= 0 {
            epoll_ctl(epoll, EPOLL_CTL_DEL, socket.fd, nil)
            Glibc.close(socket.fd)
            if Int(socket.fd) < sockets.count { sockets[Int(socket.fd)] = nil }
            socket.fd = -1
        }
        socket.carried = []
        socket.unsent = []
        socket.client.ended(why ?? "closed by the load generator", closeCode: socket.closeCode)
    }

    private func fail(_ socket: CrowdSocket, _ why: String) {
        socket.state = .closed
        socket.client.ended(why, closeCode: nil)
    }
}

/// One crowd connection on a `CrowdSocketLoop`; everything but `send` and
/// `abort` belongs to the loop's thread.
final class CrowdSocket: CrowdLink, @unchecked Sendable {
    enum State { case connecting, upgrading, open, closed }

    private unowned let loop: CrowdSocketLoop
    let client: any SocketClient
    /// The server's close frame's code, once one came.
    var closeCode: Int?
    let port: Int
    let path: String
    var fd: Int32 = -1
    var state = State.connecting
    var watchingWritable = false
    /// The start of a frame (or of the upgrade answer) that the last read did not complete.
    var carried: [UInt8] = []
    /// A fragmented message so far.
    var fragments: [UInt8] = []
    /// Bytes the socket has not taken yet.
    var unsent: [UInt8] = []

    init(loop: CrowdSocketLoop, client: any SocketClient, port: Int, path: String) {
        self.loop = loop
        self.client = client
        self.port = port
        self.path = path
    }

    var upgradeRequest: [UInt8] {
        Array(("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
               "Sec-WebSocket-Key: Y3Jvd2QtYmVuY2gta2V5IQ==\r\nSec-WebSocket-Version: 13\r\n" +
               "Sec-WebSocket-Protocol: happy.v1\r\n\r\n").utf8)
    }

    func send(text: String) {
        loop.post(.send(self, Self.frame(opcode: 0x81, payload: Array(text.utf8))))
    }

    func abort() {
        loop.post(.abort(self))
    }

    /// A final frame from the client: masked, as every client frame must be.
    static func frame<Payload: Collection<UInt8>>(opcode: UInt8, payload: Payload) -> [UInt8] {
        var frame: [UInt8] = [opcode]
        frame.reserveCapacity(payload.count + 14)
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xffff {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xff)) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        for (index, byte) in payload.enumerated() { frame.append(byte ^ mask[index & 3]) }
        return frame
    }
}
