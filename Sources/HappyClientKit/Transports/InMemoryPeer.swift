import Dispatch
import Foundation
import Synchronization

/// The server end of one `InMemoryTransport` connection, played by a test:
/// it accepts or refuses the handshake, sends what a server would, reads what
/// the client sent, answers pings or stays silent, and closes or drops the
/// connection. Every method may be called from any thread.
public final class InMemoryPeer: Sendable {
    /// How the client ended the connection.
    public struct ClientClose: Equatable, Sendable {
        /// The close code the client sent; nil when it dropped the connection (`abort`).
        public var code: UInt16?
        /// The reason it gave.
        public var reason: String

        /// A close with `code` (nil: dropped) and `reason`.
        public init(code: UInt16?, reason: String) {
            self.code = code
            self.reason = reason
        }
    }

    private struct State {
        var answersPings = true
        var pings = 0
        var opened = false
        var ended = false
        var clientClose: ClientClose?
    }

    /// The address the client asked for, its query included.
    public let url: WebSocketURL
    /// The options it connected with (subprotocol, headers…).
    public let options: WebSocketOptions
    let clientEnd: InMemoryClientEnd
    private let state = Mutex(State())
    private let inbox = WaitableQueue<String>()
    private let continuation: AsyncStream<WebSocketEvent>.Continuation

    init(url: WebSocketURL, options: WebSocketOptions) {
        self.url = url
        self.options = options
        let (events, continuation) = AsyncStream.makeStream(of: WebSocketEvent.self)
        self.continuation = continuation
        clientEnd = InMemoryClientEnd(events: events)
        clientEnd.peer = self
    }

    /// The URL's query parameters, decoded (`room`, `name`, `since`, `epoch`…).
    public var query: [String: String] {
        guard let mark = url.path.firstIndex(of: "?") else { return [:] }
        var pairs: [String: String] = [:]
        for part in url.path[url.path.index(after: mark)...].split(separator: "&") {
            let pair = part.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            pairs[pair[0]] = pair.count > 1 ? pair[1] : ""
        }
        return pairs
    }

    // MARK: what the server does

    /// Completes the handshake, selecting `subprotocol`: the client sees `.open`.
    public func accept(subprotocol: String? = "happy.v1") {
        guard state.withLock({ state in
            defer { state.opened = true }
            return !state.ended && !state.opened
        }) else { return }
        continuation.yield(.open(subprotocol: subprotocol))
    }

    /// Fails the connection before it opens: the client sees `.failed(reason)`.
    public func refuse(_ reason: String = "connection refused") {
        end(.failed(reason), clientClose: nil)
    }

    /// Sends one text message (a server message's JSON).
    public func send(_ text: String) {
        guard !state.withLock({ $0.ended }) else { return }
        continuation.yield(.text(text))
    }

    /// Closes with a close frame: the client sees `.closed(code:reason:)`.
    public func close(code: UInt16, reason: String = "") {
        end(.closed(code: code, reason: reason), clientClose: nil)
    }

    /// Drops the connection with no close frame (a cable pulled, a server
    /// killed): the client sees `.closed(code: nil, …)`.
    public func drop() {
        end(.closed(code: nil, reason: ""), clientClose: nil)
    }

    /// Whether pings are answered (true until set otherwise). A silent peer
    /// stands for a connection that died without anyone noticing.
    public var answersPings: Bool {
        get { state.withLock { $0.answersPings } }
        set { state.withLock { $0.answersPings = newValue } }
    }

    // MARK: what the client did

    /// The next text message the client sent that this method has not
    /// returned yet, waiting up to `seconds` for it; nil if none came.
    public func nextMessage(within seconds: Double = 10) async -> String? {
        await inbox.next(within: seconds)
    }

    /// How many pings the client sent.
    public var pingCount: Int { state.withLock { $0.pings } }

    /// How the client ended the connection; nil while it did not (or the server did).
    public var clientClose: ClientClose? { state.withLock { $0.clientClose } }

    /// Whether the connection ended, by either side.
    public var hasEnded: Bool { state.withLock { $0.ended } }

    // MARK: the client end's calls

    func received(_ text: String) {
        if !state.withLock({ $0.ended }) { inbox.push(text) }
    }

    func pinged(_ onPong: @escaping @Sendable () -> Void) {
        let answers = state.withLock { state -> Bool in
            state.pings += 1
            return state.answersPings && state.opened && !state.ended
        }
        if answers { DispatchQueue.global().async { onPong() } }
    }

    /// Ends the connection once: the client's last event, then its stream finishes.
    func end(_ event: WebSocketEvent, clientClose: ClientClose?) {
        let first = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.ended = true
            state.clientClose = clientClose
            return true
        }
        guard first else { return }
        continuation.yield(event)
        continuation.finish()
    }
}

/// The client end of an in-memory pair: what the session holds.
final class InMemoryClientEnd: TransportConnection, @unchecked Sendable {
    let events: AsyncStream<WebSocketEvent>
    /// Set once, right after `init`; weak so that a pair frees itself.
    weak var peer: InMemoryPeer?

    init(events: AsyncStream<WebSocketEvent>) {
        self.events = events
    }

    func send(text: String) { peer?.received(text) }

    func send(binary: [UInt8]) {}

    func ping(onPong: @escaping @Sendable () -> Void) { peer?.pinged(onPong) }

    func close(code: UInt16, reason: String) {
        peer?.end(.closed(code: code, reason: reason), clientClose: InMemoryPeer.ClientClose(code: code, reason: reason))
    }

    func abort() {
        peer?.end(.closed(code: nil, reason: "aborted"), clientClose: InMemoryPeer.ClientClose(code: nil, reason: "aborted"))
    }
}
