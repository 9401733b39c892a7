/// Appends compact JSON to a byte buffer. Wire messages are built with it
/// directly (no intermediate dictionaries), optionally after `headroom` zero
/// bytes that a transport can fill with its own framing in place.
public struct JSONWriter {
    /// Everything written so far, the headroom included.
    public private(set) var bytes: [UInt8]
    /// How many zero bytes precede the JSON in `bytes`.
    public let headroom: Int
    private var needsComma = false

    /// Starts with `headroom` zero bytes, reserving room for `capacity` bytes of JSON after them.
    public init(headroom: Int = 0, capacity: Int = 256) {
        self.headroom = headroom
        bytes = []
        bytes.reserveCapacity(headroom + capacity)
        if headroom > 0 { bytes.append(contentsOf: repeatElement(0, count: headroom)) }
    }

    /// The JSON text written so far, without the headroom.
    public var payload: ArraySlice<UInt8> { bytes[headroom...] }
    /// The length of `payload` in bytes.
    public var payloadCount: Int { bytes.count - headroom }
    /// `payload` as a string.
    public var text: String { String(decoding: payload, as: UTF8.self) }

    // MARK: structure

    /// Writes `{`, after a comma when a value precedes it.
    public mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); needsComma = false }
    /// Writes `}`.
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")); needsComma = true }
    /// Writes `[`, after a comma when a value precedes it.
    public mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); needsComma = false }
    /// Writes `]`.
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")); needsComma = true }

    /// Writes `"name":`; the next value call completes the member.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes `"name":` with `name` escaped; the next value call completes the member.
    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: values

    /// Writes a string, escaping quotes, backslashes and control characters.
    public mutating func string(_ value: String) { separate(); appendQuoted(value); needsComma = true }

    /// Writes `value` verbatim as the next value (`true`, `null`, a quoted constant); it is not checked.
    public mutating func literal(_ value: StaticString) {
        separate()
        value.withUTF8Buffer { bytes.append(contentsOf: $0) }
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) { literal(value ? "true" : "false") }
    /// Writes `null`.
    public mutating func null() { literal("null") }

    /// Writes an integer.
    public mutating func int(_ value: Int) {
        separate()
        appendInteger(value)
        needsComma = true
    }

    /// Writes an unsigned integer, also one above `Int.max`.
    public mutating func uint(_ value: UInt64) {
        separate()
        if value <= UInt64(Int.max) { appendInteger(Int(value)) } else { bytes.append(contentsOf: Array(String(value).utf8)) }
        needsComma = true
    }

    /// Writes a finite number in its shortest round-tripping form; integral
    /// values print without a fraction (`10`, not `10.0`).
    public mutating func number(_ value: Double) {
        separate()
        appendNumber(value)
        needsComma = true
    }

    /// Writes a colour as the string `"#rrggbb"`.
    public mutating func color(_ value: RGBColor) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        value.withHexDigits { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Copies already-encoded JSON (a nested object, say) verbatim.
    public mutating func raw<C: Collection>(_ json: C) where C.Element == UInt8 {
        separate()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    /// Writes a parsed value as compact JSON, object members in their order; a
    /// non-finite number is written as `null`.
    public mutating func value(_ json: JSONValue) {
        switch json {
        case .null: null()
        case .bool(let b): bool(b)
        case .number(let d): number(d)
        case .string(let s): string(s)
        case .array(let elements):
            beginArray()
            for element in elements { value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for member in members { key(member.key); value(member.value) }
            endObject()
        }
    }

    // MARK: helpers

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func appendInteger(_ value: Int) {
        if value == 0 { bytes.append(UInt8(ascii: "0")); return }
        var magnitude = value.magnitude
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[i]) }
        }
    }

    private mutating func appendNumber(_ value: Double) {
        guard value.isFinite else { bytes.append(contentsOf: Array("null".utf8)); return }
        if value == value.rounded(), abs(value) < 9.0e15 {
            appendInteger(Int(value))
            return
        }
        bytes.append(contentsOf: Array(value.description.utf8))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escaping: copy them in one go.
        let plain = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if plain == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(0x5C); bytes.append(0x22)
            case UInt8(ascii: "\\"): bytes.append(0x5C); bytes.append(0x5C)
            case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
            case 0x00..<0x20, 0x7F:
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
