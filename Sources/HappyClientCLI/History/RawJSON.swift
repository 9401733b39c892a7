/// The exact bytes of parts of a JSON document, for output that must be
/// the server's text and not a re-encoding of it (`history --json` prints
/// each event exactly as it was broadcast).
enum RawJSON {
    /// The text of each element of the array that is the value of `key` in
    /// the top-level object; nil when there is no such array. Expects a
    /// document the parser accepted; stops (nil) at anything unexpected.
    static func arrayElements(ofKey key: String, in bytes: [UInt8]) -> [ArraySlice<UInt8>]? {
        var scanner = Scanner(bytes: bytes)
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        let wanted = Array(key.utf8)
        while true {
            guard let name = scanner.string(), scanner.take(UInt8(ascii: ":")) else { return nil }
            if Array(name.dropFirst().dropLast()) == wanted {
                return scanner.arrayElements()
            }
            guard scanner.value() != nil else { return nil }
            guard scanner.take(UInt8(ascii: ",")) else { return nil }
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        /// Takes `byte` (after white space) when it comes next.
        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// The elements of the array that comes next.
        mutating func arrayElements() -> [ArraySlice<UInt8>]? {
            guard take(UInt8(ascii: "[")) else { return nil }
            var elements: [ArraySlice<UInt8>] = []
            if take(UInt8(ascii: "]")) { return elements }
            while true {
                guard let element = value() else { return nil }
                elements.append(element)
                if take(UInt8(ascii: "]")) { return elements }
                guard take(UInt8(ascii: ",")) else { return nil }
            }
        }

        /// A string with its quotes.
        mutating func string() -> ArraySlice<UInt8>? {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let start = index
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    index += 1
                    return bytes[start..<index]
                default: index += 1
                }
            }
            return nil
        }

        /// Any value: a string, an object or array (to its matching end), or a literal.
        mutating func value() -> ArraySlice<UInt8>? {
            skipSpace()
            guard index < bytes.count else { return nil }
            let start = index
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return string()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        guard string() != nil else { return nil }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            index += 1
                            return bytes[start..<index]
                        }
                    default: break
                    }
                    index += 1
                }
                return nil
            default:
                let ends: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
                while index < bytes.count, !ends.contains(bytes[index]) { index += 1 }
                return index > start ? bytes[start..<index] : nil
            }
        }
    }
}
