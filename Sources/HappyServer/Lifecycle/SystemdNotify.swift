import Glibc

/// Tells systemd how the service is doing (`sd_notify`, for `Type=notify`
/// units): a datagram to the socket named in `NOTIFY_SOCKET`, when there is
/// one. Outside systemd it does nothing.
public enum SystemdNotify {
    /// Sends `state` (lines such as `READY=1`, `MAINPID=…`, `STATUS=…`); false when nobody listens.
    @discardableResult
    public static func send(_ state: String) -> Bool {
        guard let path = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !path.isEmpty else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        // "@name" is an abstract socket: its name starts with a NUL byte.
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, target, length) }
            }
        }
        return sent == message.count
    }
}
