import HappyClientTransport

/// The libwebsockets transport: connections on a `ClientLoop` (one lws
/// service thread serves any number of them). Linux only; the default there.
public struct LWSTransport: HappyTransport {
    /// The loop the connections run on.
    public let loop: ClientLoop

    /// A transport whose connections run on `loop`.
    public init(loop: ClientLoop) {
        self.loop = loop
    }

    /// Opens a connection on the loop; its events arrive on `events`.
    public func connect(to url: WebSocketURL, options: WebSocketOptions) -> any TransportConnection {
        let relay = LWSEventRelay()
        let socket = loop.connect(url, options: options, delegate: relay)
        return LWSTransportConnection(socket: socket, relay: relay)
    }
}

/// A `WebSocketConnection` seen as a `TransportConnection`: it keeps the
/// relay alive (the socket holds its delegate weakly).
final class LWSTransportConnection: TransportConnection {
    let socket: WebSocketConnection
    private let relay: LWSEventRelay

    init(socket: WebSocketConnection, relay: LWSEventRelay) {
        self.socket = socket
        self.relay = relay
    }

    var events: AsyncStream<WebSocketEvent> { relay.events }

    func send(text: String) { socket.send(text: text) }

    func send(binary: [UInt8]) { socket.send(bytes: binary, binary: true) }

    func ping(onPong: @escaping @Sendable () -> Void) { socket.ping(onPong: onPong) }

    func close(code: UInt16, reason: String) { socket.close(code: code, reason: reason) }

    func abort() { socket.abort() }
}

/// Turns the loop's delegate calls into the stream's events, on the loop's thread.
final class LWSEventRelay: WebSocketDelegate, Sendable {
    let events: AsyncStream<WebSocketEvent>
    private let continuation: AsyncStream<WebSocketEvent>.Continuation

    init() {
        (events, continuation) = AsyncStream.makeStream(of: WebSocketEvent.self)
    }

    deinit {
        // Nobody holds the connection any more: whoever still reads the stream stops.
        continuation.finish()
    }

    func webSocketDidOpen(_ connection: WebSocketConnection, subprotocol: String?) {
        continuation.yield(.open(subprotocol: subprotocol))
    }

    func webSocket(_ connection: WebSocketConnection, didReceive bytes: UnsafeRawBufferPointer, binary: Bool) {
        continuation.yield(binary ? .binary(Array(bytes)) : .text(String(decoding: bytes, as: UTF8.self)))
    }

    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        continuation.yield(.closed(code: code, reason: reason))
        continuation.finish()
    }

    func webSocketDidFail(_ connection: WebSocketConnection, error: String) {
        continuation.yield(.failed(error))
        continuation.finish()
    }
}
