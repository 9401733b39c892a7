import Foundation
import HappyCore

/// Why a connection to the server did not carry the whole answer.
enum StreamFailure: Error, Equatable {
    /// No connection: refused, unresolvable, a TLS handshake that failed.
    case cannotConnect(String)
    /// Nothing happened within the idle timeout.
    case timeout
    /// The connection broke before the answer was complete.
    case broken(String)
}

/// A TCP connection to the server, plain or TLS, on a non-blocking socket:
/// every wait is one `poll()` of at most `idleTimeout` seconds, so a server
/// that never answers costs a sleeping thread and no CPU.
final class ServerStream {
    private let fd: Int32
    private let idleTimeout: Double
    private var tls: TLSSession?

    private init(fd: Int32, idleTimeout: Double) {
        self.fd = fd
        self.idleTimeout = idleTimeout
    }

    deinit {
        tls = nil
        close(fd)
    }

    /// Connects to `host:port` (with TLS when `secure`), each step within `idleTimeout` seconds.
    static func open(host: String, port: Int, secure: Bool, idleTimeout: Double) -> Result<ServerStream, StreamFailure> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return .failure(.cannotConnect("cannot resolve \(host): " + String(cString: gai_strerror(status))))
        }
        defer { freeaddrinfo(list) }
        var failure = StreamFailure.cannotConnect("no address for \(host)")
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue),
                            info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            let stream = ServerStream(fd: fd, idleTimeout: idleTimeout)
            if let problem = stream.connect(to: info.pointee.ai_addr, length: info.pointee.ai_addrlen) {
                failure = problem
                continue
            }
            if secure, let problem = stream.startTLS(host: host) { return .failure(problem) }
            return .success(stream)
        }
        return .failure(failure)
    }

    /// Writes all of `bytes`.
    func write(_ bytes: [UInt8]) -> StreamFailure? {
        var offset = 0
        while offset < bytes.count {
            let result: IOResult = bytes.withUnsafeBytes { raw in
                let pointer = raw.baseAddress!.advanced(by: offset)
                if let tls { return tls.write(pointer, count: bytes.count - offset) }
                let sent = send(fd, pointer, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if sent >= 0 { return .done(sent) }
                return errno == EAGAIN || errno == EINTR ? .wait(Int16(POLLOUT)) : .failed(Self.systemError())
            }
            switch result {
            case .done(let count): offset += count
            case .wait(let events): if let problem = waitUntilReady(events) { return problem }
            case .failed(let reason): return .broken(reason)
            case .end: return .broken("the server closed the connection")
            }
        }
        return nil
    }

    /// Reads what has come, up to `capacity` bytes, waiting for some; an empty array at the end.
    func read(capacity: Int = 65_536) -> Result<[UInt8], StreamFailure> {
        var buffer = [UInt8](repeating: 0, count: capacity)
        while true {
            let result: IOResult = buffer.withUnsafeMutableBytes { raw in
                if let tls { return tls.read(raw.baseAddress!, count: capacity) }
                let count = recv(fd, raw.baseAddress!, capacity, 0)
                if count > 0 { return .done(count) }
                if count == 0 { return .end }
                return errno == EAGAIN || errno == EINTR ? .wait(Int16(POLLIN)) : .failed(Self.systemError())
            }
            switch result {
            case .done(let count): return .success(Array(buffer.prefix(count)))
            case .end: return .success([])
            case .wait(let events): if let problem = waitUntilReady(events) { return .failure(problem) }
            case .failed(let reason): return .failure(.broken(reason))
            }
        }
    }

    // MARK: steps

    private func connect(to address: UnsafePointer<sockaddr>, length: socklen_t) -> StreamFailure? {
        if Glibc.connect(fd, address, length) == 0 { return nil }
        guard errno == EINPROGRESS else { return .cannotConnect(Self.systemError()) }
        if let problem = waitUntilReady(Int16(POLLOUT)) { return problem }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
        return error == 0 ? nil : .cannotConnect(String(cString: strerror(error)))
    }

    private func startTLS(host: String) -> StreamFailure? {
        let session: TLSSession
        switch TLSSession.make(fd: fd, host: host) {
        case .failure(let failure): return .cannotConnect(failure.reason)
        case .success(let made): session = made
        }
        tls = session
        while true {
            switch session.handshake() {
            case .done: return nil
            case .wait(let events): if let problem = waitUntilReady(events) { return problem }
            case .failed(let reason): return .cannotConnect(reason)
            case .end: return .cannotConnect("the server closed the connection during the TLS handshake")
            }
        }
    }

    /// Sleeps in poll() until the socket is ready for `events`; nil when it is.
    private func waitUntilReady(_ events: Int16) -> StreamFailure? {
        let deadline = SystemTime.monotonicSeconds() + idleTimeout
        while true {
            let left = deadline - SystemTime.monotonicSeconds()
            guard left > 0 else { return .timeout }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(min(left, 3600) * 1000) + 1)
            if ready > 0 { return nil }
            if ready < 0 && errno != EINTR { return .broken(Self.systemError()) }
        }
    }

    private static func systemError() -> String {
        String(cString: strerror(errno))
    }
}

/// What one step on the socket came to.
enum IOResult {
    /// So many bytes were moved (or the handshake finished: 0).
    case done(Int)
    /// Nothing yet: wait for these poll() events.
    case wait(Int16)
    /// The connection ended cleanly.
    case end
    case failed(String)
}
