/// A way to open WebSocket connections for a Happy session: libwebsockets on
/// Linux (`LWSTransport`), `URLSessionWebSocketTask` on Apple platforms
/// (`URLSessionTransport`), an in-memory pair in tests (`InMemoryTransport`),
/// or one of your own (a swift-nio or Starscream client, say).
///
/// A transport only carries messages. The session above it decides when to
/// connect, reconnect, resume and give up, so every transport behaves alike.
public protocol HappyTransport: Sendable {
    /// Starts opening a connection to `url`, offering `options.subprotocol` and
    /// sending `options.headers` with the handshake. Returns at once; what
    /// happens next arrives on the connection's `events`.
    func connect(to url: WebSocketURL, options: WebSocketOptions) -> any TransportConnection
}

/// One connection made by a `HappyTransport`. Every method may be called from
/// any thread, also before the connection is open (what is sent waits for it)
/// and after it ended (then nothing happens).
public protocol TransportConnection: AnyObject, Sendable {
    /// What happens on the connection, in order: `.open` (or `.failed`), the
    /// messages, then one `.closed` or `.failed`, after which the stream
    /// finishes. Read by one consumer: the session.
    var events: AsyncStream<WebSocketEvent> { get }

    /// Queues one text message, sent after what was queued before it.
    func send(text: String)

    /// Queues one binary message.
    func send(binary: [UInt8])

    /// Sends a WebSocket ping. `onPong` is called once, on any thread, when a
    /// pong arrives after it; never when none does (the caller keeps the time).
    func ping(onPong: @escaping @Sendable () -> Void)

    /// Starts the closing handshake with `code` and `reason`; `events` ends
    /// with `.closed` once the connection is gone.
    func close(code: UInt16, reason: String)

    /// Drops the connection at once, without a closing handshake (a dead
    /// network, a connection the session gave up on); `events` ends with
    /// `.closed(code: nil, …)`.
    func abort()
}

/// Something that happened on a WebSocket connection.
public enum WebSocketEvent: Sendable, Equatable {
    /// The handshake succeeded; `subprotocol` is the one the server selected (nil: none).
    case open(subprotocol: String?)
    /// A whole text message (fragments already joined).
    case text(String)
    /// A whole binary message (fragments already joined).
    case binary([UInt8])
    /// The connection ended; `code` is nil when no close frame arrived.
    case closed(code: UInt16?, reason: String)
    /// The connection could not be made, or broke; the text says why.
    case failed(String)

    /// Whether this is the connection's last event (`.closed` or `.failed`).
    public var endsConnection: Bool {
        switch self {
        case .closed, .failed: return true
        case .open, .text, .binary: return false
        }
    }
}
