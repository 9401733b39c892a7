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

/// One HTTP request on a server route, from its headers to its last byte
/// written. The transport holds a retained reference until it closes.
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
    var body: [UInt8] = []
    var expectedBodyLength = 0
    var response: HTTPResponse?
    /// Sent with whatever the route answers: CORS on routes pages elsewhere may read.
    var crossOriginHeaders: [(name: String, value: String)] = []
    var bodyOffset = 0
    var headersSent = false
    var isClosed = false
    /// A long-lived response (a frame stream) writes through this instead; false closes.
    var streamWriter: ((HTTPExchange) -> Bool)?
    var onClose: ((HTTPExchange) -> Void)?

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

    /// Marks the exchange closed and tells its owner (a stream), once.
    func finish() {
        guard !isClosed else { return }
        isClosed = true
        onClose?(self)
        onClose = nil
    }
}
