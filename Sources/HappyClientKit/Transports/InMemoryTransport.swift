import Synchronization

/// A transport for tests, with no network: each `connect` makes a connected
/// pair whose server end, an `InMemoryPeer`, the test plays. The session on
/// the client end is the real one (its state machine, reconnect, resume and
/// heartbeat), so a test can script what a server does and watch the session
/// answer, on any platform.
///
/// ```swift
/// let transport = InMemoryTransport()
/// let room = HappyRoom(configuration: configuration, transport: transport)
/// let joining = Task { try await room.join() }
/// let server = await transport.nextConnection()!
/// server.accept()
/// server.send(welcomeJSON)
/// ```
public final class InMemoryTransport: HappyTransport {
    private let waiting = WaitableQueue<InMemoryPeer>()
    private let made = Mutex<[InMemoryPeer]>([])

    /// A transport that has made no connection yet.
    public init() {}

    /// Makes a pair; its server end waits for `nextConnection` (it is neither
    /// accepted nor refused until the test says so).
    public func connect(to url: WebSocketURL, options: WebSocketOptions) -> any TransportConnection {
        let peer = InMemoryPeer(url: url, options: options)
        made.withLock { $0.append(peer) }
        waiting.push(peer)
        return peer.clientEnd
    }

    /// The server end of every connection made so far, oldest first.
    public var connections: [InMemoryPeer] { made.withLock { $0 } }

    /// The server end of the next connection this method has not returned
    /// yet, waiting up to `seconds` for the client to make it; nil if it does not.
    public func nextConnection(within seconds: Double = 10) async -> InMemoryPeer? {
        await waiting.next(within: seconds)
    }
}
