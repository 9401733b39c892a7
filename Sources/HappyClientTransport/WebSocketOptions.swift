/// How to open a connection. Every transport sends the subprotocol, the
/// `Origin` and the headers; `allowInsecureTLS` is honoured by libwebsockets
/// and by URLSession on Apple platforms, `keepaliveSeconds` and
/// `offersCompression` by libwebsockets only.
public struct WebSocketOptions: Sendable {
    /// Subprotocol to offer (`happy.v1`), or nil to offer none.
    public var subprotocol: String?
    /// The `Origin` header, as a browser page would send it; nil sends none.
    public var origin: String?
    /// Extra headers for the handshake request, in this order.
    public var headers: [(name: String, value: String)]
    /// Accept self-signed certificates (tests, local TLS).
    public var allowInsecureTLS: Bool
    /// Ping the server after this many idle seconds and drop the connection
    /// if it stays silent as long again; nil sends no pings (benchmarks).
    /// Sessions also watch the connection themselves (`SessionConfiguration.heartbeat`).
    public var keepaliveSeconds: UInt16?
    /// Offer permessage-deflate; the server decides whether to use it.
    public var offersCompression: Bool

    /// Creates options; the defaults offer `happy.v1`, send no `Origin` or extra header,
    /// check TLS certificates, ping after 20 idle seconds and offer no compression.
    public init(subprotocol: String? = "happy.v1", origin: String? = nil,
                headers: [(name: String, value: String)] = [], allowInsecureTLS: Bool = false,
                keepaliveSeconds: UInt16? = 20, offersCompression: Bool = false) {
        self.subprotocol = subprotocol
        self.origin = origin
        self.headers = headers
        self.allowInsecureTLS = allowInsecureTLS
        self.keepaliveSeconds = keepaliveSeconds
        self.offersCompression = offersCompression
    }
}
