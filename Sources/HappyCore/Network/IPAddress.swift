/// An IPv4 or IPv6 address read from text (no host names, ports, ranges or
/// zone ids). An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, as a
/// dual-stack socket reports an IPv4 peer) is that IPv4 address, so both
/// spellings name one client.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    public let bytes: [UInt8]

    /// Reads an IPv4 address (dotted quad, no leading zeros) or an IPv6 address; nil for anything else.
    public init?<S: StringProtocol>(_ text: S) {
        let scalars = Array(text.utf8)
        if scalars.contains(UInt8(ascii: ":")) {
            guard let bytes = Self.parseIPv6(scalars[...]) else { return nil }
            let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
            self.bytes = Array(bytes.prefix(12)) == mappedPrefix ? Array(bytes.suffix(4)) : bytes
        } else {
            guard let bytes = Self.parseIPv4(scalars[...]) else { return nil }
            self.bytes = bytes
        }
    }

    /// Whether this is an IPv4 address (an IPv4-mapped IPv6 address included).
    public var isIPv4: Bool { bytes.count == 4 }

    /// 127.0.0.0/8 or ::1.
    public var isLoopback: Bool {
        isIPv4 ? bytes[0] == 127 : bytes == Array(repeating: 0, count: 15) + [1]
    }

    /// Dotted quad, or RFC 5952 text (lower case, longest zero run as `::`).
    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        var best = (start: -1, length: 0)
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else { index += 1; continue }
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index > best.length { best = (index, end - index) }
            index = end
        }
        func hex(_ range: Range<Int>) -> String {
            groups[range].map { String($0, radix: 16) }.joined(separator: ":")
        }
        guard best.length >= 2 else { return hex(0..<8) }
        return hex(0..<best.start) + "::" + hex((best.start + best.length)..<8)
    }

    // MARK: parsing

    /// Four decimal parts 0-255 without leading zeros (`010` could mean octal).
    private static func parseIPv4(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(isDigit),
                  part.count == 1 || part.first != UInt8(ascii: "0") else { return nil }
            let value = part.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            guard value <= 255 else { return nil }
            bytes.append(UInt8(value))
        }
        return bytes
    }

    /// Up to eight groups of 1-4 hex digits, at most one `::`, and an IPv4
    /// address in the last 32 bits if wanted.
    private static func parseIPv6(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard let gap = doubleColon(in: text) else {
            guard let bytes = groups(text, allowIPv4: true), bytes.count == 16 else { return nil }
            return bytes
        }
        let tail = text[(gap + 2)...]
        guard doubleColon(in: tail) == nil,
              let front = groups(text[..<gap], allowIPv4: false),
              let back = groups(tail, allowIPv4: true),
              front.count + back.count <= 14 else { return nil }
        return front + Array(repeating: 0, count: 16 - front.count - back.count) + back
    }

    private static func doubleColon(in text: ArraySlice<UInt8>) -> Int? {
        let colon = UInt8(ascii: ":")
        return text.indices.first { text[$0] == colon && $0 + 1 < text.endIndex && text[$0 + 1] == colon }
    }

    /// The bytes of colon-separated groups; empty text is no groups.
    private static func groups(_ text: ArraySlice<UInt8>, allowIPv4: Bool) -> [UInt8]? {
        guard !text.isEmpty else { return [] }
        let parts = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var bytes: [UInt8] = []
        for (index, part) in parts.enumerated() {
            if allowIPv4 && index == parts.count - 1 && part.contains(UInt8(ascii: ".")) {
                guard let v4 = parseIPv4(part) else { return nil }
                bytes += v4
                continue
            }
            guard (1...4).contains(part.count) else { return nil }
            var value: UInt16 = 0
            for scalar in part {
                guard let digit = hexValue(scalar) else { return nil }
                value = value << 4 | UInt16(digit)
            }
            bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
        }
        return bytes
    }

    private static func isDigit(_ scalar: UInt8) -> Bool {
        scalar >= UInt8(ascii: "0") && scalar <= UInt8(ascii: "9")
    }

    private static func hexValue(_ scalar: UInt8) -> UInt8? {
        switch scalar {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return scalar - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return scalar - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return scalar - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
