/// `LWSConnection`: one libwebsockets connection (a `struct lws *`, "wsi"),
/// with the per-connection operations the server and the client share.
///
/// Every call here must happen on the thread that services the connection's
/// context, while lws still knows the connection (between its first callback
/// and `CLOSED`/`CLIENT_CLOSED`/`WSI_DESTROY`). The tiny wrappers are
/// inlinable: the server's per-message paths call them about a million times
/// a second, so each must compile down to the lws call it wraps.
public import CWebSockets

/// A libwebsockets connection. A plain wrapper around the wsi pointer: copying
/// it copies the pointer, and it owns nothing (see `attach(_:)` for user data).
public struct LWSConnection: Hashable {
    /// The lws connection (`struct lws *`).
    public let wsi: OpaquePointer

    @inlinable @inline(__always)
    public init(_ wsi: OpaquePointer) {
        self.wsi = wsi
    }

    /// Bytes lws needs in front of every payload handed to `write` (`LWS_PRE`):
    /// it writes the frame header (and TLS or HTTP/2 framing) there in place.
    @inlinable
    public static var writeHeadroom: Int { Int(happy_lws_pre) }

    /// The context the connection belongs to.
    @inlinable
    public var context: LWSContextHandle? {
        lws_get_context(wsi).map(LWSContextHandle.init)
    }

    // MARK: writing

    /// Asks lws for one WRITEABLE callback when the socket can take more.
    /// Several requests before the callback still give one callback.
    @inlinable @inline(__always)
    public func requestWritable() {
        lws_callback_on_writable(wsi)
    }

    /// Writes `count` bytes at `payload`, which must have `writeHeadroom`
    /// writable bytes before it. Call it once per WRITEABLE callback. With
    /// `endsMessage: false` a text, binary or continuation frame leaves the
    /// message open (no FIN bit). Returns the bytes lws accepted (all of
    /// them: lws keeps what the socket does not take yet), or a negative
    /// number when the connection failed and must be closed.
    @inlinable @inline(__always)
    public func write(_ payload: UnsafeMutablePointer<UInt8>, count: Int, mode: WriteMode,
                      endsMessage: Bool = true) -> Int {
        var flags = mode.lwsValue
        if !endsMessage { flags |= happy_write_no_fin }
        return Int(lws_write(wsi, payload, count, lws_write_protocol(rawValue: UInt32(flags))))
    }

    /// Writes `count` bytes that are already whole WebSocket frames to the
    /// plaintext socket `socket` (this connection's `socketDescriptor`)
    /// itself, the way lws would but without its write path; whatever the
    /// socket does not take now lws keeps and sends first. Only while
    /// `hasBufferedOutput` is false (in a writable callback, or after
    /// checking: lws also writes pongs and close answers of its own, and
    /// keeps what of them the socket did not take), and never under TLS.
    /// False when the connection failed and must be closed.
    @inlinable @inline(__always)
    public func writeToSocketFirst(_ bytes: UnsafeMutablePointer<UInt8>, count: Int, socket: Int32) -> Bool {
        happy_write_socket_first(wsi, socket, bytes, count) >= 0
    }

    /// The connection runs over TLS: its bytes go through lws's TLS layer.
    @inlinable
    public var isTLS: Bool { lws_is_ssl(wsi) != 0 }

    /// lws still holds bytes of an earlier write that the socket did not
    /// take; it sends them on the next POLLOUT before any writable callback.
    @inlinable
    public var hasBufferedOutput: Bool { lws_partial_buffered(wsi) != 0 }

    // MARK: reading

    /// Stops reading from the socket (TCP backpressure) until `resumeReading`.
    @inlinable
    public func pauseReading() {
        lws_rx_flow_control(wsi, 0)
    }

    /// Reads from the socket again after `pauseReading`.
    @inlinable
    public func resumeReading() {
        lws_rx_flow_control(wsi, 1)
        lwsLoopCheckDue(lws_get_context(wsi))
    }

    /// In a RECEIVE callback: the message being received is binary.
    @inlinable @inline(__always)
    public var isBinaryFrame: Bool { lws_frame_is_binary(wsi) != 0 }

    /// In a RECEIVE callback: the chunk belongs to a frame with the FIN bit.
    @inlinable @inline(__always)
    public var isFinalFragment: Bool { lws_is_final_fragment(wsi) != 0 }

    /// In a RECEIVE callback: bytes of the current frame still to come
    /// (lws hands a long frame over in chunks of the rx buffer size).
    @inlinable @inline(__always)
    public var remainingPayload: Int { Int(lws_remaining_packet_payload(wsi)) }

    /// In a RECEIVE callback: the chunk is the last one of its message
    /// (a FIN frame with nothing of it left to read).
    @inlinable @inline(__always)
    public var endsMessage: Bool { isFinalFragment && remainingPayload == 0 }

    // MARK: timeouts

    /// Arms lws's pending timeout of the connection: when `seconds` pass
    /// before the awaited thing happens, lws closes it.
    @inlinable
    public func setTimeout(_ timeout: PendingTimeout, seconds: Int32) {
        lws_set_timeout(wsi, timeout.lwsValue, seconds)
        lwsTimerDue(lws_get_context(wsi), inSeconds: Double(seconds))
    }

    /// Lifts the pending timeout (a long response lws would otherwise end).
    @inlinable
    public func clearTimeout() {
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
    }

    /// Drops the connection without a close handshake, at lws's next chance
    /// (safe from inside another connection's callback).
    @inlinable
    public func kill() {
        lws_set_timeout(wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, happy_kill_async)
        lwsLoopCheckDue(lws_get_context(wsi))
    }

    // MARK: socket

    /// The socket descriptor, or a negative number once it is gone.
    @inlinable
    public var socketDescriptor: Int32 { lws_get_socket_fd(wsi) }

    /// Bytes read from the TCP socket so far (by lws, or TLS under it), never
    /// less than the truth; nil when the kernel does not say (not TCP).
    public var bytesRead: Int64? {
        let count = happy_socket_bytes_read(lws_get_socket_fd(wsi))
        return count < 0 ? nil : Int64(count)
    }

    /// Fixes the socket's kernel send buffer at `bytes` (Linux doubles the
    /// figure), which also turns its autotuning off. False when it failed.
    @inlinable
    public func setSendBuffer(bytes: Int32) -> Bool {
        happy_set_send_buffer(lws_get_socket_fd(wsi), bytes) == 0
    }
}

/// How `LWSConnection.write` frames its bytes.
public enum WriteMode: Sendable, Hashable {
    /// A WebSocket text frame (lws adds the header).
    case text
    /// A WebSocket binary frame.
    case binary
    /// A further frame of a fragmented message.
    case continuation
    /// A WebSocket ping; the payload comes back in the pong.
    case ping
    /// The bytes as they are (`LWS_WRITE_HTTP`): pre-framed WebSocket frames
    /// (several may go in one write), or a chunk of an HTTP response.
    case raw
    /// The last chunk of an HTTP response (`LWS_WRITE_HTTP_FINAL`).
    case httpFinal

    @inlinable
    var lwsValue: Int32 {
        switch self {
        case .text: happy_write_text
        case .binary: happy_write_binary
        case .continuation: happy_write_continuation
        case .ping: happy_write_ping
        case .raw: happy_write_http
        case .httpFinal: happy_write_http_final
        }
    }
}

/// What a connection's pending timeout waits for (`lws_set_timeout`).
public enum PendingTimeout: Sendable, Hashable {
    /// Our close frame is out; the peer's answer is due.
    case closeAck
    /// The connection is being dropped by its owner.
    case killedByParent

    @inlinable
    var lwsValue: pending_timeout {
        switch self {
        case .closeAck: PENDING_TIMEOUT_CLOSE_ACK
        case .killedByParent: PENDING_TIMEOUT_KILLED_BY_PARENT
        }
    }
}
