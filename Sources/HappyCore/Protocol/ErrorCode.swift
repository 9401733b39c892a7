/// The error codes of PROTOCOL.md section 3.
public enum ErrorCode: String, Sendable, CaseIterable, Error {
    case badJSON = "bad_json"
    case badMessage = "bad_message"
    case unknownAction = "unknown_action"
    case invalidValue = "invalid_value"
    case rateLimited = "rate_limited"
    case forbidden = "forbidden"
    case unavailable = "unavailable"
}

/// An error answer: the code, a message for people, and the request's id.
public struct WireError: Error, Equatable, Sendable {
    public var code: ErrorCode
    public var message: String
    public var id: String?

    public init(_ code: ErrorCode, _ message: String, id: String? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }
}
