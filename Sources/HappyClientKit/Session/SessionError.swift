import HappyCore

/// Why a session request or the session itself ended without success.
public enum SessionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The connection could not be made (refused, unresolvable, TLS, HTTP answer).
    case cannotConnect(url: String, reason: String)
    /// The server answered a request with an error.
    case refused(WireError)
    /// The server closed the connection with a close frame the client cannot get past.
    case closed(url: String, CloseReason)
    /// An operator removed this client from the room (4003) or deleted the
    /// room (4004); the session does not reconnect by itself.
    case removed(url: String, CloseReason)
    /// An established connection dropped before the answer came.
    case connectionLost(url: String, reason: String)
    /// Nothing decisive within the time allowed.
    case timeout(String)
    /// The session was stopped.
    case stopped
    /// The task waiting for the answer was cancelled (the answer, if any, is ignored).
    case cancelled
    /// Not a `ws://`, `wss://`, `http://` or `https://` URL with a host.
    case invalidURL(String, reason: String)

    /// The error in words, for people: `cannot connect to ws://…: Connection refused`.
    public var description: String {
        switch self {
        case .cannotConnect(let url, let reason): return "cannot connect to \(url): \(reason)"
        case .refused(let error): return "refused by the server: \(error.code.rawValue): \(error.message)"
        case .closed(let url, let close): return "refused by the server at \(url): \(close)"
        case .removed(_, let close): return "\(close.removalText ?? close.description) (close \(close.code ?? 0))"
        case .connectionLost(let url, let reason): return "connection to \(url) lost: \(reason)"
        case .timeout(let what): return "timeout: \(what)"
        case .stopped: return "the session was stopped"
        case .cancelled: return "cancelled"
        case .invalidURL(let url, let reason):
            return "\(url) is not a server address (\(reason)): give ws://host:port or wss://host:port"
        }
    }
}
