/// How a WebSocket connection's bytes are written.
enum TransportWrite {
    /// One text message, framed by the transport (needed with extensions).
    case text
    /// One binary message, framed by the transport.
    case binary
    /// Bytes that are already whole WebSocket frames.
    case preframed
    /// A ping control frame with the bytes as payload.
    case ping
}

/// Kernel send buffer of every long-lived connection (WebSocket clients and
/// frame streams). Linux would otherwise grow it to megabytes (`tcp_wmem`),
/// hiding a slow reader's backlog from the server's own queues, where
/// `maxQueuedBytes` and `writeTimeoutSeconds` apply.
let longLivedSendBufferBytes: Int32 = 64 * 1024

/// What the server's components may do to a WebSocket connection. The lws
/// implementation wraps the connection's wsi; in-process tests use a fake
/// that records what it was asked to do.
protocol ConnectionTransport {
    /// Asks for one writable callback (the write path then runs).
    func requestWritable()
    /// Writes `count` bytes (with the transport's headroom before `bytes`
    /// for `.text`, `.binary` and `.ping`); false when the connection failed.
    func write(_ bytes: UnsafeMutablePointer<UInt8>, count: Int, as kind: TransportWrite) -> Bool
    /// Bytes of an earlier write still wait in the transport: a write now
    /// would have to queue behind them, so only the writable callback writes.
    var hasBufferedOutput: Bool { get }
    /// Stops reading the peer's messages (TCP backpressure) until `resumeReading`.
    func pauseReading()
    func resumeReading()
    /// After the server's close frame: wait at most `seconds` for the peer's.
    func awaitCloseAcknowledgement(seconds: Int32)
    /// Drops the connection without a close handshake.
    func kill()
    /// Bytes read from the socket so far (never low), or nil when it gives no count.
    var bytesRead: Int64? { get }
}

/// What the server's components may do to an HTTP exchange's connection.
protocol ExchangeTransport {
    func requestWritable()
    /// Writes raw response bytes (status line and headers included), with
    /// the transport's headroom before `bytes` (a `WriteScratch`); `final`
    /// ends the response. False when the connection failed.
    func write(_ bytes: UnsafeMutablePointer<UInt8>, count: Int, final: Bool) -> Bool
    /// Lays out the status line and headers at `cursor` (up to `end`).
    func writeHeaders(_ head: HTTPResponseHead, into cursor: inout UnsafeMutablePointer<UInt8>?,
                      end: UnsafeMutablePointer<UInt8>) -> Bool
    /// A long-lived response (a stream) must not be ended by the request timeout.
    func keepOpenWithoutTimeout()
    /// Fixes the kernel send buffer (slow readers must show in the app's queues).
    func limitSendBuffer(bytes: Int32) -> Bool
    /// Whether the peer hung up while nothing is being read from it.
    var peerHasHungUp: Bool { get }
    func kill()
}

/// The status line and headers of an HTTP response.
struct HTTPResponseHead {
    var status: Int
    var contentType: String?
    /// Without a length the body ends when the connection closes.
    var contentLength: Int?
    var cacheControl: String
    var close: Bool
    var headers: [(name: String, value: String)]
}
