/// The error codes of PROTOCOL.md section 3.
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
