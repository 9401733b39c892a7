/// The peers whose `X-Forwarded-For` header is believed (`trustedProxies`),
/// and how a request's client address is chosen from that header.
///
/// Each proxy appends the address it received the request from, so the
/// header's rightmost entries were written by the proxies nearest to the
/// server, and anything to their left may have been written by the client
/// itself. The client is therefore the last hop that is not a trusted proxy,
/// read from the right.
public struct TrustedProxies: Equatable, Sendable {
    private let addresses: Set<IPAddress>

    /// Trusts the given proxy addresses (none by default).
    public init(_ addresses: [IPAddress] = []) {
        self.addresses = Set(addresses)
    }

    /// Nil when an entry is not an IP address.
    public init?(_ texts: [String]) {
        var addresses: [IPAddress] = []
        for text in texts {
            guard let address = IPAddress(text) else { return nil }
            addresses.append(address)
        }
        self.init(addresses)
    }

    /// The client address of a trusted proxy's request whose `X-Forwarded-For`
    /// is missing or cannot be read: an address that is no IP address, so that
    /// it is never loopback, never a proxy and never anyone's own.
    public static let unknownClient = "unknown"

    /// Whether no proxy is trusted (then `X-Forwarded-For` is never read).
    public var isEmpty: Bool { addresses.isEmpty }

    /// Whether `peer` is the address of a trusted proxy (false when it is not an IP address).
    public func trusts(_ peer: String) -> Bool {
        guard !addresses.isEmpty, let address = IPAddress(peer) else { return false }
        return addresses.contains(address)
    }

    /// The address a request came from. That is `peer` itself unless `peer`
    /// is a trusted proxy; then it is the rightmost `forwardedFor` entry that
    /// is not a trusted proxy, or the leftmost entry when all of them are.
    /// Entries left of the client are never read (the client may have written
    /// them). A missing or empty header, or one whose entries up to the client
    /// are not all addresses, gives `unknownClient`: never the proxy's own
    /// address, which may be loopback.
    public func clientAddress(peer: String, forwardedFor: String?) -> String {
        guard trusts(peer) else { return peer }
        guard let forwardedFor else { return Self.unknownClient }
        let entries = forwardedFor.split(separator: ",", omittingEmptySubsequences: false)
        var leftmost: IPAddress?
        for entry in entries.reversed() {
            guard let address = Self.hop(entry.trimmingSpaces) else { return Self.unknownClient }
            if !addresses.contains(address) { return address.description }
            leftmost = address
        }
        return leftmost?.description ?? Self.unknownClient
    }

    /// An entry: a plain address, or one of the forms some proxies write with
    /// a port, `192.0.2.1:4711` and `[2001:db8::1]:4711`.
    private static func hop(_ entry: Substring) -> IPAddress? {
        if entry.first == "[" {
            guard let close = entry.firstIndex(of: "]") else { return nil }
            let rest = entry[entry.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && isPort(rest.dropFirst())) else { return nil }
            return IPAddress(entry[entry.index(after: entry.startIndex)..<close])
        }
        let colons = entry.filter { $0 == ":" }.count
        if colons == 1, let colon = entry.firstIndex(of: ":") {
            guard isPort(entry[entry.index(after: colon)...]) else { return nil }
            return IPAddress(entry[..<colon])
        }
        return IPAddress(entry)
    }

    private static func isPort(_ text: Substring) -> Bool {
        (1...5).contains(text.count) && text.allSatisfy { $0.isASCII && $0.isNumber } && Int(text)! <= 65535
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
