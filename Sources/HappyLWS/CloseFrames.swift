/// Close frames through lws: reading the code and reason of a peer's close
/// (`LWS_CALLBACK_WS_PEER_INITIATED_CLOSE`) and setting those of our own
/// close, which lws sends when the callback then returns -1.
internal import CWebSockets
public import HappyCore

/// The code and reason of a close frame the peer sent.
public struct PeerClose: Equatable, Sendable {
    public var code: UInt16
    /// The reason text, invalid UTF-8 repaired.
    public var reason: String

    public init(code: UInt16, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Reads a close frame's payload: a big-endian code and a UTF-8 reason.
    /// Nil for a payload too short to hold a code (a close without a code).
    public init?(payload: UnsafeRawBufferPointer) {
        guard payload.count >= 2 else { return nil }
        code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        reason = String(decoding: payload[2...], as: UTF8.self)
    }
}

extension LWSConnection {
    /// Sets the code and reason lws puts in the close frame it sends when
    /// the callback returns -1. The reason is cut to what a close frame
    /// holds, at a character boundary.
    public func setCloseReason(code: UInt16, reason: String) {
        var bytes = CloseFrame.reasonBytes(reason)
        lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), &bytes, bytes.count)
    }

    /// `setCloseReason(code:reason:)` with a named code.
    public func setCloseReason(_ code: WebSocketCloseCode, reason: String) {
        setCloseReason(code: code.rawValue, reason: reason)
    }
}
