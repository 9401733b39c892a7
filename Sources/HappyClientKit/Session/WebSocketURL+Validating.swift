import Foundation

extension WebSocketURL {
    /// Parses `text` as `init?(_:)` does, or says why it is not a server address.
    public init(validating text: String) throws(SessionError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let url = WebSocketURL(trimmed) else {
            let lower = trimmed.lowercased()
            let reason = ["ws://", "wss://", "http://", "https://"].contains(where: lower.hasPrefix)
                ? "no host, or a port outside 1-65535" : "it must start with ws://, wss://, http:// or https://"
            throw .invalidURL(text, reason: reason)
        }
        self = url
    }
}
