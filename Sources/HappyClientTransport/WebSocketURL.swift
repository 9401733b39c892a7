/// A `ws://` or `wss://` URL taken apart: scheme, host, port, path and query.
public struct WebSocketURL: Equatable, Sendable, CustomStringConvertible {
    /// True for `wss://` (TLS), false for `ws://`.
    public var secure: Bool
    /// The host name or address (an IPv6 address without its brackets).
    public var host: String
    /// The TCP port (443 or 80 when the URL named none).
    public var port: Int
    /// Path and query, starting with `/`.
    public var path: String

    /// Creates a URL from its parts; `path` holds the path and query, starting with `/`.
    public init(secure: Bool, host: String, port: Int, path: String) {
        self.secure = secure
        self.host = host
        self.port = port
        self.path = path
    }

    /// Parses `ws://host[:port][/path][?query]`; `http(s)://` is accepted as `ws(s)://`.
    public init?(_ text: String) {
        let schemes: [(String, Bool)] = [("ws://", false), ("wss://", true), ("http://", false), ("https://", true)]
        guard let (prefix, secure) = schemes.first(where: { text.lowercased().hasPrefix($0.0) }) else { return nil }
        let rest = text.dropFirst(prefix.count)
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = String(rest[authorityEnd...])
        if path.isEmpty { path = "/" } else if path.hasPrefix("?") { path = "/" + path }
        var host = Substring(authority)
        var port = secure ? 443 : 80
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if after.hasPrefix(":") {
                guard let p = Int(after.dropFirst()), (1...65535).contains(p) else { return nil }
                port = p
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let p = Int(host[host.index(after: colon)...]), (1...65535).contains(p) else { return nil }
            port = p
            host = host[..<colon]
        }
        guard !host.isEmpty else { return nil }
        self.init(secure: secure, host: String(host), port: port, path: path)
    }

    /// `ws://host:port/path`, the port always included (an IPv6 address in brackets).
    public var description: String { "\(secure ? "wss" : "ws")://\(authority)\(path)" }

    /// `host:port`, with an IPv6 address in brackets (`[::1]:8080`).
    public var authority: String { "\(hostForURL):\(port)" }

    /// The host as a URL or `Host` header writes it: an IPv6 address in brackets.
    public var hostForURL: String { host.contains(":") ? "[\(host)]" : host }

    /// The same server with another path and query.
    public func with(path: String) -> WebSocketURL {
        WebSocketURL(secure: secure, host: host, port: port, path: path)
    }

    /// The matching `http(s)://` base, for the HTTP API.
    public var httpBase: String { "\(secure ? "https" : "http")://\(authority)" }
}

/// Percent-encoding for query values.
public enum QueryEncoding {
    /// Percent-encodes every UTF-8 byte of `value` but ASCII letters, digits and `-_.~`.
    public static func encode(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(Unicode.Scalar(byte)))
            default:
                let hex = Array("0123456789ABCDEF")
                out.append("%")
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 15)])
            }
        }
        return out
    }

    /// `?a=1&b=2` from ordered pairs (nil values are left out).
    public static func query(_ pairs: [(String, String?)]) -> String {
        let parts = pairs.compactMap { pair in pair.1.map { "\(pair.0)=\(encode($0))" } }
        return parts.isEmpty ? "" : "?" + parts.joined(separator: "&")
    }
}
