/// How a server ended a connection: its close code (nil when no close frame
/// arrived) and reason text.
///
/// libwebsockets 4.1's client replaces the codes 1012–1015 by 1002 before
/// it reports them, but keeps the reason text. A 1002 that carries a reason
/// is therefore read as one of those (1013, try again later, for a Happy
/// server): a refusal worth retrying, not a protocol error.
public struct CloseReason: Equatable, Sendable, CustomStringConvertible {
    /// The close code; nil when the connection ended without a close frame.
    public var code: UInt16?
    /// The close frame's reason text (empty when there was none).
    public var reason: String

    /// Creates a close reason of `code` and `reason`.
    public init(code: UInt16?, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The code as lws reported it stood for 1012–1014 (restart, try again later, bad gateway).
    public var isTryAgainLater: Bool {
        code == 1013 || code == 1012 || code == 1014 || (code == 1002 && !reason.isEmpty)
    }

    /// An operator removed this client (4003) or deleted its room (4004),
    /// PROTOCOL.md section 13.
    public static let kicked: UInt16 = 4003
    /// The close code of a room deleted by an operator.
    public static let roomDeleted: UInt16 = 4004

    /// Retrying cannot help, or must not happen by itself: the server refused
    /// what this client is or sent (bad room, name or token, unsupported or
    /// oversized data), or closed with an application code (4000–4999): an
    /// operator removed it or deleted its room, or a code this client does not
    /// know, which it must not second-guess by coming back.
    public var isFinal: Bool {
        guard let code, !isTryAgainLater else { return false }
        return [1002, 1003, 1007, 1008, 1009, 1010].contains(code) || (4000...4999).contains(code)
    }

    /// The server restarts or is replaced (1012, PROTOCOL.md section 2): rejoin
    /// at once, within 250 ms at random, and resume. libwebsockets reports
    /// 1012 as 1002; a Happy server's restart is then known by its reason.
    public var isServiceRestart: Bool {
        code == 1012 || (code == 1002 && reason == WebSocketCloseCode.serviceRestartReason)
    }

    /// Closed by an operator: kicked (4003) or the room deleted (4004).
    public var isOperatorRemoval: Bool {
        code == Self.kicked || code == Self.roomDeleted
    }

    /// What an operator's close says: the server's reason (`removed from the
    /// room by an operator: spam`), or the protocol's words when it sent none.
    public var removalText: String? {
        guard isOperatorRemoval else { return nil }
        if !reason.isEmpty { return reason }
        return code == Self.kicked ? "removed from the room by an operator" : "the room was deleted by an operator"
    }

    /// What the close means, as a type.
    public var kind: CloseKind {
        guard let code else { return .noCloseFrame }
        if isServiceRestart { return .serviceRestart }
        if isTryAgainLater { return .tryAgainLater }
        switch code {
        case 1000: return .normal
        case 1001: return .goingAway
        case 1002: return .protocolError
        case 1003: return .unsupportedData
        case 1007: return .invalidPayload
        case 1008: return .policyViolation
        case 1009: return .messageTooBig
        case 1011: return .internalError
        case Self.kicked: return .kicked
        case Self.roomDeleted: return .roomDeleted
        default: return .other(code)
        }
    }

    /// `close 1008 (policy violation): invalid room name: …`
    public var description: String {
        guard let code else { return reason.isEmpty ? "connection closed without a close frame" : reason }
        let label: String
        if isServiceRestart {
            label = "close 1012 (service restart)"
        } else if isTryAgainLater && code == 1002 {
            label = "close 1012–1015 (try again later; libwebsockets reports these as 1002)"
        } else {
            label = "close \(code)" + (Self.names[code].map { " (\($0))" } ?? "")
        }
        return reason.isEmpty ? label : "\(label): \(reason)"
    }

    static let names: [UInt16: String] = [
        1000: "normal closure", 1001: "going away", 1002: "protocol error", 1003: "unsupported data",
        1007: "invalid payload", 1008: "policy violation", 1009: "message too big", 1010: "missing extension",
        1011: "internal error", 1012: "service restart", 1013: "try again later", 1014: "bad gateway",
        4003: "removed by an operator", 4004: "room deleted by an operator",
    ]
}

/// The close codes a Happy server sends (PROTOCOL.md sections 2, 5 and 13), as a type.
public enum CloseKind: Equatable, Sendable {
    /// 1000: the client left, or the server closed after a request it could not serve.
    case normal
    /// 1001: the server is shutting down.
    case goingAway
    /// Close 1002: a protocol error (lws also reports 1012–1014 as this, see `isTryAgainLater`).
    case protocolError
    /// 1003: a binary message.
    case unsupportedData
    /// 1007: text that is not UTF-8.
    case invalidPayload
    /// 1008: refused (room name, token, origin, flood).
    case policyViolation
    /// 1009: a message over `maxMessageBytes`.
    case messageTooBig
    /// Close 1011: the server met an error it could not recover from.
    case internalError
    /// 1013–1014 (and 1012 from a server that is not Happy): the server is full; retrying later can work.
    case tryAgainLater
    /// 1012: the server restarts or is replaced: rejoin at once and resume (PROTOCOL.md section 2).
    case serviceRestart
    /// 4003: an operator removed this client.
    case kicked
    /// 4004: an operator deleted the room.
    case roomDeleted
    /// The connection ended without a close frame.
    case noCloseFrame
    /// Any other code.
    case other(UInt16)
}
