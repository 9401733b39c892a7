import CWebSockets
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

/// One HTTP request on a callback route, from its headers to its last byte
/// written. lws holds a retained reference in the wsi's opaque user data.
final class HTTPExchange: Attachment {
    let wsi: OpaquePointer
    let method: String
    let path: String
    let query: [String: String]
    let peerAddress: String
    /// When the request's headers were complete (monotonic seconds).
    let startedAt: Double
    var body: [UInt8] = []
    var expectedBodyLength = 0
    var response: HTTPResponse?
    var bodyOffset = 0
    var headersSent = false
    var isClosed = false
    /// A long-lived response (a frame stream) writes through this instead.
    var streamWriter: ((HTTPExchange) -> Int32)?
    var onClose: ((HTTPExchange) -> Void)?

    init(wsi: OpaquePointer, method: String, path: String, query: [String: String], peerAddress: String,
         startedAt: Double) {
        self.wsi = wsi
        self.method = method
        self.path = path
        self.query = query
        self.peerAddress = peerAddress
        self.startedAt = startedAt
        super.init(isConnection: false)
    }

    /// The request path without its query string.
    var route: String {
        if let question = path.firstIndex(of: "?") { return String(path[..<question]) }
        return path
    }
}

/// The HTTP routes served by the server itself (everything else is a file from `webRoot`).
enum HTTPRoute {
    static let mountPoints = ["/api", "/frame", "/stream", "/healthz", "/metrics"]
}
