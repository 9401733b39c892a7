/// The payload rules of a WebSocket close frame (RFC 6455 section 5.5.1).
public enum CloseFrame {
    /// A control frame carries at most 125 bytes: the 2-byte code and the reason.
    public static let maxReasonBytes = 123

    /// `reason` as UTF-8, cut to `maxReasonBytes` at a character boundary
    /// (a close frame whose reason is not valid UTF-8 is a protocol error).
    public static func reasonBytes(_ reason: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for character in reason {
            let utf8 = character.utf8
            guard bytes.count + utf8.count <= maxReasonBytes else { break }
            bytes.append(contentsOf: utf8)
        }
        return bytes
    }

    /// A whole unmasked close frame (server to client) with `code` and `reason`.
    public static func frame(code: WebSocketCloseCode, reason: String) -> [UInt8] {
        let reason = reasonBytes(reason)
        let value = code.rawValue
        return [0x88, UInt8(2 + reason.count), UInt8(value >> 8), UInt8(value & 0xff)] + reason
    }
}
