/// Where and as whom a `HappySession` connects, and how it reconnects.
public struct SessionConfiguration: Sendable {
    /// The server: `ws://host:port`, optionally with a path (`/ws` when none).
    public var server: WebSocketURL
    /// The room to join; nil joins the server's default room.
    public var room: String?
    /// The display name; nil lets the server pick `guest-<id>`.
    public var name: String?
    /// An access token (PROTOCOL.md section 7).
    public var token: String?
    /// Joins as an observer (`observe=1`, PROTOCOL.md section 13): hears the
    /// room without being in its presence, and may send no intents or pointers.
    public var observe: Bool
    /// Reconnect (and resume) when a connection that was welcomed drops.
    public var reconnects: Bool
    /// The delays between reconnect attempts.
    public var backoff: Backoff
    /// How each connection is opened: subprotocol, headers, TLS, keepalive.
    public var options: WebSocketOptions
    /// The least time between two of this client's `pointer` messages, in
    /// seconds: the server's default batch interval, and within its default
    /// limit of 30 a second.
    public var pointerInterval: Double
    /// Pings a quiet connection and drops it when nothing answers, so that the
    /// status is never stale; nil leaves it to the transport.
    public var heartbeat: Heartbeat?
    /// Calls the delegate (and so the room's sequences and seed views) and the
    /// completion handlers on the main actor, through the main queue, for UI
    /// code. It needs a running main run loop (an app's); never wait for the
    /// session on the main thread then. By default they are called on the task
    /// that reads the connection.
    public var deliversOnMainActor: Bool
    /// Where the Network framework exists (Apple platforms): reconnect at once
    /// when the network path changes (Wi-Fi to cellular, back online), when
    /// `reconnects` is true.
    public var reconnectsWhenNetworkChanges: Bool

    /// Creates a configuration. Unlike `HappyRoom.connect`, it does not reconnect
    /// unless `reconnects` is true; pointers are paced to one every 0.05 s by
    /// default, a quiet connection is pinged after 15 s, and calls come on the
    /// task that reads the connection.
    public init(server: WebSocketURL, room: String? = nil, name: String? = nil, token: String? = nil,
                observe: Bool = false, reconnects: Bool = false, backoff: Backoff = Backoff(),
                options: WebSocketOptions = WebSocketOptions(), pointerInterval: Double = 0.05,
                heartbeat: Heartbeat? = Heartbeat(), deliversOnMainActor: Bool = false,
                reconnectsWhenNetworkChanges: Bool = true) {
        self.server = server
        self.room = room
        self.name = name
        self.token = token
        self.observe = observe
        self.reconnects = reconnects
        self.backoff = backoff
        self.options = options
        self.pointerInterval = pointerInterval
        self.heartbeat = heartbeat
        self.deliversOnMainActor = deliversOnMainActor
        self.reconnectsWhenNetworkChanges = reconnectsWhenNetworkChanges
    }

    /// The server URL with `/ws` when it names no path.
    public var endpoint: WebSocketURL {
        let (path, query) = Self.split(server.path)
        return server.with(path: (path == "/" || path.isEmpty ? "/ws" : path) + query)
    }

    /// The URL of one connection attempt: room, name and token, plus
    /// `since`/`epoch` when resuming.
    public func connectURL(resumingAfter since: UInt64? = nil, epoch: String? = nil) -> WebSocketURL {
        let base = endpoint
        let (path, query) = Self.split(base.path)
        let added = QueryEncoding.query([
            ("room", room), ("name", name), ("token", token), ("observe", observe ? "1" : nil),
            ("since", epoch == nil ? nil : since.map(String.init)), ("epoch", since == nil ? nil : epoch),
        ])
        if query.isEmpty { return base.with(path: path + added) }
        return base.with(path: path + query + (added.isEmpty ? "" : "&" + added.dropFirst()))
    }

    /// The endpoint as shown to people: without the query (it may hold the token).
    public var displayURL: String {
        let url = endpoint
        return url.with(path: Self.split(url.path).path).description
    }

    private static func split(_ target: String) -> (path: String, query: String) {
        guard let mark = target.firstIndex(of: "?") else { return (target, "") }
        return (String(target[..<mark]), String(target[mark...]))
    }
}
