import Foundation

/// A plain TCP connect, to say why a WebSocket connection failed when
/// libwebsockets only reports "Unable to connect": "Connection refused",
/// "No route to host", a name that does not resolve.
public enum TCPProbe {
    /// Why `host:port` cannot be reached, or nil when a TCP connection
    /// succeeds within `timeout` seconds (the failure lies beyond TCP).
    public static func failure(host: String, port: Int, timeout: Double = 1) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return "cannot resolve \(host): " + String(cString: gai_strerror(status))
        }
        defer { freeaddrinfo(list) }
        var reason = "no address for \(host)"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue),
                            info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return nil }
            guard errno == EINPROGRESS else {
                reason = String(cString: strerror(errno))
                continue
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else {
                reason = "no answer within \(timeout) s"
                continue
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 { return nil }
            reason = String(cString: strerror(error))
        }
        return reason
    }
}
