/// A WebSocket close status code (RFC 6455 section 7.4). The named ones are
/// those the server sends; PROTOCOL.md section 5 says when.
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt16) { rawValue = value }

    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// Server shutting down (or a client leaving).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// A binary message on the JSON protocol.
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// Refused at admission, or a flood.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// A message over `maxMessageBytes`.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// The room could not be loaded.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)
    /// Server full (`maxClients`, `maxRooms`).
    public static let tryAgainLater = WebSocketCloseCode(rawValue: 1013)
    /// Removed from the room by an operator (section 13): do not reconnect.
    public static let kicked = WebSocketCloseCode(rawValue: 4003)
    /// The room was deleted by an operator (section 13): do not reconnect.
    public static let roomDeleted = WebSocketCloseCode(rawValue: 4004)

    public var description: String { String(rawValue) }
}
