/// `LWSListenSocket`: the server's listening TCP socket, owned by the server
/// rather than by lws, so that it can pass to a new process (an upgrade)
/// with every connection waiting in its backlog: none is refused meanwhile.
import Glibc
internal import CWebSockets

/// Why a listening socket could not be had.
public struct LWSListenError: Error, Sendable, CustomStringConvertible {
    public let description: String
}

/// A listening TCP socket: bound and listening, non-blocking, not inherited
/// by child processes unless handed over explicitly.
public final class LWSListenSocket: @unchecked Sendable {
    /// Connections the kernel holds until they are accepted: a crowd
    /// reconnecting at once (a restart) waits here, not refused.
    public static let backlog: Int32 = 4096

    public let descriptor: Int32
    /// The port it is bound to.
    public let port: Int
    private var closed = false

    private init(descriptor: Int32, port: Int) {
        self.descriptor = descriptor
        self.port = port
    }

    deinit { close() }

    /// Binds `host:port` (0 picks a free port) and listens. An address with
    /// a `:` is IPv6 (`::` is every address, both families).
    public static func open(host: String, port: Int) throws(LWSListenError) -> LWSListenSocket {
        let ipv6 = host.contains(":")
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                        | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LWSListenError(description: "socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else {
                Glibc.close(fd)
                throw LWSListenError(description: "\(host) is not an IPv6 address")
            }
            var no: Int32 = 0
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &no, socklen_t(MemoryLayout<Int32>.size))
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else {
                Glibc.close(fd)
                throw LWSListenError(description: "\(host) is not an IPv4 address")
            }
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard bound == 0, listen(fd, backlog) == 0 else {
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            throw LWSListenError(description: "cannot listen on \(host):\(port): \(why)")
        }
        return LWSListenSocket(descriptor: fd, port: try localPort(fd))
    }

    /// A listening socket handed over by the process this one replaces.
    public static func inherited(descriptor fd: Int32) throws(LWSListenError) -> LWSListenSocket {
        var listening: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0, listening == 1 else {
            throw LWSListenError(description: "descriptor \(fd) is not a listening socket")
        }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return LWSListenSocket(descriptor: fd, port: try localPort(fd))
    }

    /// Accepts one waiting connection: its descriptor (non-blocking, no
    /// Nagle delay) and the peer's address, or nil when none waits.
    public func accept() -> (descriptor: Int32, address: String)? {
        var storage = sockaddr_storage()
        let fd = happy_accept(descriptor, &storage)
        guard fd >= 0 else { return nil }
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        return (fd, LWSCallback.addressText(storage))
    }

    /// Stops listening (the kernel refuses connections from then on, unless
    /// another process holds the same socket).
    public func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(descriptor)
    }

    private static func localPort(_ fd: Int32) throws(LWSListenError) -> Int {
        var storage = sockaddr_storage()
        var size = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) }
        }
        guard named == 0 else { throw LWSListenError(description: "getsockname: \(String(cString: strerror(errno)))") }
        let family = storage.ss_family
        return withUnsafeBytes(of: &storage) { raw -> Int in
            if family == sa_family_t(AF_INET6) {
                return Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            }
            return Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
        }
    }
}
