/// A key press of `play`.
enum Key: Equatable {
    case left, right, up, down
    case character(Character)
    /// Ctrl-C read as a byte (when the terminal does not turn it into SIGINT).
    case interrupt
    case other
}

/// Turns the bytes read from a raw terminal into keys: arrow keys in both
/// forms (`ESC [ C` and `ESC O C`), printable characters, Ctrl-C. An escape
/// sequence cut off at the end of a read is kept for the next one.
struct KeyDecoder {
    private var pending: [UInt8] = []

    mutating func feed(_ bytes: [UInt8]) -> [Key] {
        pending += bytes
        var keys: [Key] = []
        var index = 0
        while index < pending.count {
            let byte = pending[index]
            if byte == 0x1B {
                guard index + 1 < pending.count else { break }
                let kind = pending[index + 1]
                guard kind == UInt8(ascii: "[") || kind == UInt8(ascii: "O") else {
                    keys.append(.other)
                    index += 1
                    continue
                }
                // CSI: parameters and intermediates, then a final byte 0x40...0x7E.
                var end = index + 2
                while end < pending.count, !(0x40...0x7E).contains(pending[end]) { end += 1 }
                guard end < pending.count else { break }
                keys.append(Self.arrow(pending[end]))
                index = end + 1
            } else if byte == 0x03 {
                keys.append(.interrupt)
                index += 1
            } else if byte >= 0x20 && byte < 0x7F {
                keys.append(.character(Character(Unicode.Scalar(byte))))
                index += 1
            } else {
                keys.append(.other)
                index += 1
            }
        }
        pending.removeFirst(index)
        return keys
    }

    private static func arrow(_ final: UInt8) -> Key {
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return .right
        case UInt8(ascii: "D"): return .left
        default: return .other
        }
    }
}
