import Foundation
import HappyClientTransport
internal import HappyLWS
import Synchronization

/// Receives a connection's events on its loop's thread.
public protocol WebSocketDelegate: AnyObject {
    /// The handshake succeeded; `subprotocol` is the one the server selected (nil: none).
    func webSocketDidOpen(_ connection: WebSocketConnection, subprotocol: String?)
    /// `bytes` is only valid during the call.
    func webSocket(_ connection: WebSocketConnection, didReceive bytes: UnsafeRawBufferPointer, binary: Bool)
    /// The connection ended; `code` is nil when no close frame arrived. The last call
    /// for this connection.
    func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String)
    /// The connection could not be made; `error` says why. The last call for this connection.
    func webSocketDidFail(_ connection: WebSocketConnection, error: String)
}

/// One client WebSocket connection on a `ClientLoop`. `send`, `close`,
/// `abort`, `setReading(_:)` and `nextEvent` may be called from any thread.
/// Without a delegate, events are queued for `nextEvent(timeout:)`.
public final class WebSocketConnection: @unchecked Sendable {
    enum Outgoing {
        case message([UInt8], mode: WriteMode, endsMessage: Bool)
        case close(code: UInt16, reason: String)
    }

    /// The address the connection was opened to.
    public let url: WebSocketURL
    /// The options it was opened with.
    public let options: WebSocketOptions
    weak var delegate: WebSocketDelegate?
    let loop: ClientLoop

    // Loop-thread state.
    /// Known from the connect call (or from CLIENT_ESTABLISHED); nil once finished.
    var lwsConnection: LWSConnection?
    var finished = false
    /// Messages from the server have no size limit here.
    var assembler = MessageAssembler(limit: .max)
    var peerCloseCode: UInt16?
    var peerCloseReason = ""
    /// The subprotocol named in the server's handshake answer.
    var selectedSubprotocol: String?
    private let acceptedExtensions = Mutex<String?>(nil)
    /// The C strings of the connect request, alive as long as the connection.
    let cStrings = CStringArena()

    private let outgoing = Mutex<[Outgoing]>([])
    /// Called at the next pong; dropped unanswered when the connection ends.
    private let pongWaiters = Mutex<[@Sendable () -> Void]>([])
    private let events = EventQueue<WebSocketEvent>()
    private let usesQueue: Bool

    init(loop: ClientLoop, url: WebSocketURL, options: WebSocketOptions, delegate: WebSocketDelegate?) {
        self.loop = loop
        self.url = url
        self.options = options
        self.delegate = delegate
        usesQueue = delegate == nil
    }

    // MARK: any thread

    /// The server's `Sec-WebSocket-Extensions` answer (nil: none), known once the connection is open.
    public internal(set) var negotiatedExtensions: String? {
        get { acceptedExtensions.withLock { $0 } }
        set { acceptedExtensions.withLock { $0 = newValue } }
    }

    /// Queues one text message, sent after what was queued before it.
    public func send(text: String) {
        enqueue(.message(Array(text.utf8), mode: .text, endsMessage: true))
    }

    /// Queues one message of `bytes`: a binary message when `binary`, else a text
    /// message (the bytes are sent as they are, not checked as UTF-8).
    public func send(bytes: [UInt8], binary: Bool = false) {
        enqueue(.message(bytes, mode: binary ? .binary : .text, endsMessage: true))
    }

    /// Sends one text message split into frames (a fragmented message).
    public func send(fragments: [String]) {
        for (index, fragment) in fragments.enumerated() {
            enqueue(.message(Array(fragment.utf8), mode: index == 0 ? .text : .continuation,
                             endsMessage: index == fragments.count - 1))
        }
    }

    /// Sends a close frame with `code` after what is queued.
    public func close(code: UInt16 = 1000, reason: String = "") {
        enqueue(.close(code: code, reason: reason))
    }

    /// Sends a WebSocket ping after what is queued; `onPong` is called on the
    /// loop's thread when the next pong arrives (never, if none does).
    public func ping(onPong: @escaping @Sendable () -> Void) {
        pongWaiters.withLock { $0.append(onPong) }
        enqueue(.message(Array("happy".utf8), mode: .ping, endsMessage: true))
    }

    /// Drops the TCP connection without a close frame.
    public func abort() {
        loop.post(.abort(self))
    }

    /// Stops (or resumes) reading from the socket, as a stalled client would.
    public func setReading(_ reading: Bool) {
        loop.post(.flowControl(self, reading))
    }

    /// The next event, waiting up to `timeout` seconds (queue mode only).
    public func nextEvent(timeout: Double) -> WebSocketEvent? {
        events.next(timeout: timeout)
    }

    private func enqueue(_ item: Outgoing) {
        outgoing.withLock { $0.append(item) }
        loop.post(.wantWrite(self))
    }

    // MARK: loop thread

    func takeOutgoing() -> Outgoing? {
        outgoing.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }

    var hasOutgoing: Bool { outgoing.withLock { !$0.isEmpty } }

    func didOpen(subprotocol: String?) {
        if let delegate { delegate.webSocketDidOpen(self, subprotocol: subprotocol) }
        if usesQueue { events.push(.open(subprotocol: subprotocol)) }
    }

    func didReceive(_ bytes: UnsafeRawBufferPointer, binary: Bool) {
        if let delegate { delegate.webSocket(self, didReceive: bytes, binary: binary) }
        if usesQueue {
            events.push(binary ? .binary(Array(bytes)) : .text(String(decoding: bytes, as: UTF8.self)))
        }
    }

    func didReceivePong() {
        for onPong in takePongWaiters() { onPong() }
    }

    func takePongWaiters() -> [@Sendable () -> Void] {
        pongWaiters.withLock { waiting in
            defer { waiting.removeAll() }
            return waiting
        }
    }

    func didClose() {
        if let delegate { delegate.webSocketDidClose(self, code: peerCloseCode, reason: peerCloseReason) }
        if usesQueue { events.push(.closed(code: peerCloseCode, reason: peerCloseReason)) }
    }

    func didFail(_ error: String) {
        if let delegate { delegate.webSocketDidFail(self, error: error) }
        if usesQueue { events.push(.failed(error)) }
    }
}

/// A thread-safe FIFO with a blocking, time-limited `next`.
final class EventQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var head = 0

    func push(_ item: Element) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    func next(timeout: Double) -> Element? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while head >= items.count {
            if !condition.wait(until: deadline) { break }
        }
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head > 1024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}
