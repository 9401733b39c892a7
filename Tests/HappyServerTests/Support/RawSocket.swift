import Foundation

/// A blocking loopback TCP connection with a receive timeout, for requests
/// the regular clients would rewrite or interpret.
final class RawSocket {
    private let fd: Int32
    private var buffered: [UInt8] = []

    /// `receiveBuffer` shrinks the kernel's receive buffer (a reader that
    /// stops reading then pushes back on the server sooner).
    init(port: Int, timeout: Double = 5, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Self.failure("socket: errno \(errno)") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw Self.failure("connect to port \(port): errno \(errno)")
        }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Self.failure("send: errno \(errno)") }
            offset += sent
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Discards whatever has arrived and tells whether the peer has closed
    /// or reset the connection (never blocks).
    func discardReceivedAndCheckClosed() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 { return true }
            if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
        }
    }

    /// Exactly `count` bytes, or nil when the peer closed or the timeout passed first.
    func read(count: Int) -> [UInt8]? {
        while buffered.count < count {
            guard fill() else { return nil }
        }
        defer { buffered.removeFirst(count) }
        return Array(buffered[..<count])
    }

    /// Bytes up to and including `delimiter`, or nil.
    func read(until delimiter: [UInt8]) -> [UInt8]? {
        while true {
            if let range = buffered.firstRange(of: delimiter) {
                defer { buffered.removeFirst(range.upperBound) }
                return Array(buffered[..<range.upperBound])
            }
            guard fill() else { return nil }
        }
    }

    /// How the last read that got nothing ended.
    enum Ending: Equatable {
        /// The peer closed the connection (FIN).
        case closed
        /// The peer reset the connection (RST): whatever it had sent that
        /// was not read yet may be lost.
        case reset
        /// Nothing came within the receive timeout: the connection may still be open.
        case timedOut
        case failed(errno: Int32)

        /// The peer ended the connection, one way or the other.
        var peerClosed: Bool { self == .closed || self == .reset }
    }

    private var lastEnding = Ending.timedOut

    /// Everything until the peer closes or resets the connection, or until
    /// nothing more arrives within the receive timeout; and which of these
    /// ended the read (empty bytes alone cannot tell a close from a hang).
    func readToEnd() -> (bytes: [UInt8], ending: Ending) {
        while fill() {}
        defer { buffered.removeAll() }
        return (buffered, lastEnding)
    }

    /// Whether the peer has closed or reset the connection, without reading
    /// or waiting.
    func hasEnded() -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        if count == 0 { return true }
        return count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
    }

    /// Discards what arrives until the peer ends the connection, or `seconds` pass.
    func awaitEnd(seconds: Double) -> Ending {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var chunk = [UInt8](repeating: 0, count: 16384)
        while Date() < deadline {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return .closed }
            if count < 0 {
                let error = errno
                if error == EAGAIN || error == EWOULDBLOCK || error == EINTR { continue }
                return error == ECONNRESET ? .reset : .failed(errno: error)
            }
        }
        return .timedOut
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else {
            let error = errno
            lastEnding = count == 0 ? .closed
                : error == ECONNRESET ? .reset
                : error == EAGAIN || error == EWOULDBLOCK ? .timedOut : .failed(errno: error)
            return false
        }
        buffered.append(contentsOf: chunk[..<count])
        return true
    }

    static func failure(_ message: String) -> NSError {
        NSError(domain: "RawSocket", code: 1, userInfo: [NSLocalizedDescriptionKey: message])
    }
}

/// A minimal WebSocket client on a raw socket. libwebsockets' own client
/// rewrites some valid close codes (1012–1015) to 1002 before reporting them,
/// so close codes such as 1013 are read here, straight from the frame.
/// One thread may send while another reads (they share only the socket).
final class RawWebSocket: @unchecked Sendable {
    enum Frame: Equatable {
        case text(String)
        case binary([UInt8])
        case close(code: UInt16?, reason: String)
        case ping([UInt8])
        case pong([UInt8])
    }

    let socket: RawSocket
    /// The handshake answer's status line and headers.
    let handshake: String

    /// `headers` are extra request header lines such as `"Origin: https://example.com"`.
    init(port: Int, target: String = "/ws", subprotocol: String? = "happy.v1", headers: [String] = [],
         timeout: Double = 5, receiveBuffer: Int32? = nil) throws {
        socket = try RawSocket(port: port, timeout: timeout, receiveBuffer: receiveBuffer)
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let subprotocol { request += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        for header in headers { request += header + "\r\n" }
        try socket.send(request + "\r\n")
        guard let head = socket.read(until: Array("\r\n\r\n".utf8)) else {
            throw RawSocket.failure("no handshake answer from \(target)")
        }
        handshake = String(decoding: head, as: UTF8.self)
    }

    var upgraded: Bool { handshake.hasPrefix("HTTP/1.1 101") }

    /// The status code of the handshake answer.
    var status: Int? { handshake.split(separator: " ").dropFirst().first.flatMap { Int($0) } }

    /// Sends one frame, masked as RFC 6455 requires of a client unless `masked` is false.
    func send(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) throws {
        try socket.send(Self.frame(opcode: opcode, payload, fin: fin, masked: masked))
    }

    /// One client frame's bytes.
    static func frame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) -> [UInt8] {
        let maskBit: UInt8 = masked ? 0x80 : 0
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(maskBit | 127)
            frame += (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (8 * UInt64($0))) & 0xFF) }
        }
        guard masked else { return frame + payload }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    func send(text: String) throws { try send(opcode: 0x1, Array(text.utf8)) }

    /// The last frame read had RSV1 set: its payload is compressed (permessage-deflate).
    private(set) var lastFrameCompressed = false

    /// The next frame, or nil when the connection ended or the timeout passed.
    func nextFrame() -> Frame? {
        guard let header = socket.read(count: 2) else { return nil }
        lastFrameCompressed = header[0] & 0x40 != 0
        var length = UInt64(header[1] & 0x7F)
        if length == 126 {
            guard let extended = socket.read(count: 2) else { return nil }
            length = extended.reduce(0) { $0 << 8 | UInt64($1) }
        } else if length == 127 {
            guard let extended = socket.read(count: 8) else { return nil }
            length = extended.reduce(0) { $0 << 8 | UInt64($1) }
        }
        guard let payload = socket.read(count: Int(length)) else { return nil }
        switch header[0] & 0x0F {
        case 0x1: return .text(String(decoding: payload, as: UTF8.self))
        case 0x2: return .binary(payload)
        case 0x8:
            guard payload.count >= 2 else { return .close(code: nil, reason: "") }
            return .close(code: UInt16(payload[0]) << 8 | UInt16(payload[1]),
                          reason: String(decoding: payload[2...], as: UTF8.self))
        case 0x9: return .ping(payload)
        case 0xA: return .pong(payload)
        default: return .binary(payload)
        }
    }

    /// Reads frames until a close frame; returns it with the text messages before it.
    func readUntilClose() -> (close: Frame?, texts: [String]) {
        var texts: [String] = []
        while let frame = nextFrame() {
            switch frame {
            case .close: return (frame, texts)
            case .text(let text): texts.append(text)
            default: continue
            }
        }
        return (nil, texts)
    }
}
