/// The error codes of the protocol: those of PROTOCOL.md section 3, which
/// the WebSocket sends, then those only HTTP answers with (sections 6, 7,
/// 11 and 13, and the server's own routes).
public enum ErrorCode: String, Sendable, CaseIterable, Error {
    /// The text is not JSON (`NaN` and `Infinity` literals included).
    case badJSON = "bad_json"
    /// JSON that is not an object with a known `type`, or an `id` that is not a string of at most 64 characters.
    case badMessage = "bad_message"
    /// An intent whose `action` the protocol does not know.
    case unknownAction = "unknown_action"
    /// A parameter of the wrong kind, outside its range, malformed or missing.
    case invalidValue = "invalid_value"
    /// Over the intent rate limit (section 5); the intent was dropped.
    case rateLimited = "rate_limited"
    /// Not allowed for this client: a viewer's or observer's intent, or `room.reset` by a non-admin.
    case forbidden = "forbidden"
    /// The change could not be recorded; nothing was applied.
    case unavailable = "unavailable"

    // HTTP only.

    /// No credential, or one that is not valid (HTTP 401).
    case unauthorized = "unauthorized"
    /// No route, room or view by that name (HTTP 404).
    case notFound = "not_found"
    /// The route does not answer that method (HTTP 405).
    case methodNotAllowed = "method_not_allowed"
    /// History the store no longer holds (HTTP 410).
    case gone = "gone"
    /// Something this server cannot do, such as a backup of a store that makes none (HTTP 409).
    case unsupported = "unsupported"
    /// A frame could not be drawn (HTTP 500).
    case renderFailed = "render_failed"
}

/// An error answer: the code, a message for people, and the request's id.
public struct WireError: Error, Equatable, Sendable {
    /// The protocol's error code.
    public var code: ErrorCode
    /// An explanation for people; programs should read `code`.
    public var message: String
    /// The `id` of the message that caused the error; nil when it had none or it could not be read.
    public var id: String?

    /// Creates an error answer from its code, message and the request's `id`.
    public init(_ code: ErrorCode, _ message: String, id: String? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }
}
