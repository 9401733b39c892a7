/// The name part of an HTTP `Host` header or an origin, and the rules a
/// configured host name (`publicHosts`) follows.
public enum HostName {
    /// Whether `text` is a DNS name (letters, digits, `-`, dots between labels)
    /// or an IP address, with no scheme, port or path.
    public static func isValid(_ text: String) -> Bool {
        if IPAddress(text) != nil { return true }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        return labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") }
        }
    }

    /// The host of a `Host` header value (`name`, `name:port`, `[v6]:port`), lower-cased,
    /// without brackets or port; nil when it is not one.
    public static func ofHostHeader(_ value: String) -> String? {
        let text = value.lowercased()
        if text.first == "[" {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && isPort(rest.dropFirst())) else { return nil }
            let inside = String(text[text.index(after: text.startIndex)..<close])
            return IPAddress(inside).map { _ in inside }
        }
        var name = Substring(text)
        if let colon = text.firstIndex(of: ":") {
            guard isPort(text[text.index(after: colon)...]) else { return nil }
            name = text[..<colon]
        }
        let host = String(name)
        return isValid(host) ? host : nil
    }

    /// The host of an origin (`scheme://host[:port]`); nil for `null` or anything else.
    public static func ofOrigin(_ origin: String) -> String? {
        let lowered = origin.lowercased()
        let authority: String
        if lowered.hasPrefix("http://") {
            authority = String(lowered.dropFirst("http://".count))
        } else if lowered.hasPrefix("https://") {
            authority = String(lowered.dropFirst("https://".count))
        } else {
            return nil
        }
        guard !authority.contains("/"), !authority.contains("@") else { return nil }
        return ofHostHeader(authority)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isPort(_ text: Substring) -> Bool {
        (1...5).contains(text.count) && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            && Int(text)! <= 65535
    }
}
