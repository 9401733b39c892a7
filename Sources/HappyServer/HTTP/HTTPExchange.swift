import HappyCore

/// An HTTP response, complete before it is written.
struct HTTPResponse {
    var status: Int
    var contentType: String
    var body: [UInt8]
    var headers: [(name: String, value: String)] = []
    /// Close the connection afterwards (the request body was not read, say).
    var closeConnection = false
    /// Frames may be kept and revalidated with their ETag; the API may not be kept.
    var cacheControl = "no-store"
}

/// A request as its route reads it: built once by `HTTPIntake` when its
/// body is in, and never changed.
struct HTTPRequest {
    /// Where the answer goes (`HTTPResponder.respond`).
    let exchange: HTTPExchange
    let method: String
    /// The request path without its query string.
    let route: String
    let query: [String: String]
    /// The captured headers (`HTTPExchange.capturedHeaders`), by lower-case name.
    let headers: [String: String]
    /// The client's address: forwarded by a trusted proxy, else the peer's.
    let peerAddress: String
    let body: [UInt8]

    init(_ exchange: HTTPExchange, body: [UInt8]) {
        self.exchange = exchange
        method = exchange.method
        route = exchange.route
        query = exchange.query
        headers = exchange.headers
        peerAddress = exchange.peerAddress
        self.body = body
    }
}

/// One HTTP request on a server route, from its headers to its last byte
/// written. The transport holds a retained reference until it closes. What
/// changes is in two parts, each with its owner: the body coming in
/// (`HTTPIntake`) and the answer going out (`HTTPResponder`); no other file
/// can write either.
final class HTTPExchange: Attachment {
    /// The request headers routes read, captured while the transport still has them.
    static let capturedHeaders = ["authorization", "if-none-match", "origin", "x-happy-name", "accept", "host",
                                  "content-type"]

    let transport: any ExchangeTransport
    let method: String
    let path: String
    let query: [String: String]
    /// The captured headers, by lower-case name.
    let headers: [String: String]
    let peerAddress: String
    /// When the request's headers were complete (monotonic seconds).
    let startedAt: Double
    /// The request body as it arrives: `HTTPIntake`'s.
    let incomingBody = HTTPIncomingBody()
    /// The answer and how far it is written: `HTTPResponder`'s.
    let responseState = HTTPResponseState()

    init(transport: any ExchangeTransport, method: String, path: String, query: [String: String],
         headers: [String: String] = [:], peerAddress: String, startedAt: Double) {
        self.transport = transport
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.peerAddress = peerAddress
        self.startedAt = startedAt
        super.init(isConnection: false)
    }

    /// The request path without its query string.
    var route: String {
        if let question = path.firstIndex(of: "?") { return String(path[..<question]) }
        return path
    }

    /// The response given, if any.
    var response: HTTPResponse? { responseState.response }
    /// The connection is gone, or the whole answer is out.
    var isClosed: Bool { responseState.isClosed }
}
