import Glibc
import HappyLWS

/// A WebSocket connection's transport on an lws connection.
struct LWSConnectionTransport: ConnectionTransport {
    let connection: LWSConnection
    /// The plaintext socket pre-framed bytes are written to directly, or -1
    /// under TLS, where every byte goes through lws.
    private let directSocket: Int32

    init(connection: LWSConnection) {
        self.connection = connection
        directSocket = connection.isTLS ? -1 : connection.socketDescriptor
    }

    @inline(__always)
    func requestWritable() {
        connection.requestWritable()
    }

    @inline(__always)
    func write(_ bytes: UnsafeMutablePointer<UInt8>, count: Int, as kind: TransportWrite) -> Bool {
        let mode: WriteMode
        switch kind {
        case .preframed:
            // The server writes only while lws holds nothing of the
            // connection (hasBufferedOutput), so the socket comes first.
            if directSocket >= 0 { return connection.writeToSocketFirst(bytes, count: count, socket: directSocket) }
            mode = .raw
        case .text: mode = .text
        case .binary: mode = .binary
        case .ping: mode = .ping
        }
        return connection.write(bytes, count: count, mode: mode) >= 0
    }

    @inline(__always)
    var hasBufferedOutput: Bool { connection.hasBufferedOutput }

    func pauseReading() {
        connection.pauseReading()
    }

    func resumeReading() {
        connection.resumeReading()
    }

    func awaitCloseAcknowledgement(seconds: Int32) {
        connection.setTimeout(.closeAck, seconds: seconds)
    }

    func kill() {
        connection.kill()
    }

    var bytesRead: Int64? { connection.bytesRead }
}

/// An HTTP exchange's transport on an lws connection.
struct LWSExchangeTransport: ExchangeTransport {
    let connection: LWSConnection

    func requestWritable() {
        connection.requestWritable()
    }

    func write(_ bytes: UnsafeMutablePointer<UInt8>, count: Int, final: Bool) -> Bool {
        connection.write(bytes, count: count, mode: final ? .httpFinal : .raw) == count
    }

    /// Status line and headers; lws adds the protocol-level ones.
    func writeHeaders(_ head: HTTPResponseHead, into cursor: inout UnsafeMutablePointer<UInt8>?,
                      end: UnsafeMutablePointer<UInt8>) -> Bool {
        guard let start = cursor,
              let next = connection.writeResponseHeaders(
                status: head.status, contentType: head.contentType, contentLength: head.contentLength,
                cacheControl: head.cacheControl, closeConnection: head.close, headers: head.headers,
                from: start, end: end) else { return false }
        cursor = next
        return true
    }

    func keepOpenWithoutTimeout() {
        connection.clearTimeout()
    }

    func limitSendBuffer(bytes: Int32) -> Bool {
        connection.setSendBuffer(bytes: bytes)
    }

    /// lws stops reading an HTTP connection while a response is in progress,
    /// so a long response (a frame stream) would not notice its client
    /// hanging up until it next writes. True when the socket has reached end
    /// of file or failed; data waiting (a pipelined request) or nothing at
    /// all means the peer is still there.
    var peerHasHungUp: Bool {
        let fd = connection.socketDescriptor
        guard fd >= 0 else { return true }
        var byte: UInt8 = 0
        let received = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if received == 0 { return true }
        if received < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
        return false
    }

    func kill() {
        connection.kill()
    }
}
