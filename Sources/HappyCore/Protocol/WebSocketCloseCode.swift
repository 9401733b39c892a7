/// A WebSocket close status code (RFC 6455 section 7.4). The named ones are
/// those the server sends; PROTOCOL.md section 5 says when.
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    /// The numeric code, as carried in the close frame.
    public let rawValue: UInt16
    /// A code from its number, named or not.
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// A code written as an integer literal.
    public init(integerLiteral value: UInt16) { rawValue = value }

    /// A normal close.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// Server shutting down (or a client leaving).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// A frame that breaks RFC 6455 (a client frame without a mask key).
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// A binary message on the JSON protocol.
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// Refused at admission, or a flood.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// A message over `maxMessageBytes`.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// The room could not be loaded.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)
    /// The server restarts or is replaced by a new version: reconnect at once and resume (section 2).
    public static let serviceRestart = WebSocketCloseCode(rawValue: 1012)
    /// The reason sent with `serviceRestart`. libwebsockets 4.1's client turns
    /// a received 1012 into 1002 (an early registry of codes); a client on it
    /// knows the restart by this reason.
    public static let serviceRestartReason = "server restarting: reconnect now"
    /// Server full (`maxClients`, `maxRooms`).
    public static let tryAgainLater = WebSocketCloseCode(rawValue: 1013)
    /// Removed from the room by an operator (section 13): do not reconnect.
    public static let kicked = WebSocketCloseCode(rawValue: 4003)
    /// The room was deleted by an operator (section 13): do not reconnect.
    public static let roomDeleted = WebSocketCloseCode(rawValue: 4004)

    /// The code as a decimal number.
    public var description: String { String(rawValue) }
}
