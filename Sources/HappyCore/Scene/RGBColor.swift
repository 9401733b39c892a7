/// A heart colour. Accepts `#rgb` and `#rrggbb` in any case; prints `#rrggbb`
/// in lower case, as the protocol asks.
public struct RGBColor: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The red component, 0...255.
    public var red: UInt8
    /// The green component, 0...255.
    public var green: UInt8
    /// The blue component, 0...255.
    public var blue: UInt8

    /// Creates a colour from its components.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// Reads `#rgb` (each digit doubled: `#f00` is `#ff0000`) or `#rrggbb`, hex digits in
    /// any case; nil for anything else.
    public init?(hex text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.first == UInt8(ascii: "#") else { return nil }
        let digits = utf8.dropFirst().map(Self.hexValue)
        guard digits.allSatisfy({ $0 != nil }) else { return nil }
        let d = digits.map { $0! }
        switch d.count {
        case 3: self.init(red: d[0] * 17, green: d[1] * 17, blue: d[2] * 17)
        case 6: self.init(red: d[0] << 4 | d[1], green: d[2] << 4 | d[3], blue: d[4] << 4 | d[5])
        default: return nil
        }
    }

    /// The colour as `#rrggbb` in lower case, as the wire writes it.
    public var hex: String {
        withHexDigits { String(decoding: $0, as: UTF8.self) }
    }

    /// Lends `#rrggbb` as UTF-8 bytes, without making a string (the encoders write a colour per event).
    @inlinable
    public func withHexDigits<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        // "0123456789abcdef" as the ASCII of each nibble.
        func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }
        let text: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (
            UInt8(ascii: "#"), digit(red >> 4), digit(red & 0x0F), digit(green >> 4), digit(green & 0x0F),
            digit(blue >> 4), digit(blue & 0x0F))
        return try withUnsafeBytes(of: text) { try body($0.bindMemory(to: UInt8.self)) }
    }

    /// The same as `hex`.
    public var description: String { hex }

    /// Components in 0...1, for renderers.
    public var unitComponents: (red: Double, green: Double, blue: Double) {
        (Double(red) / 255, Double(green) / 255, Double(blue) / 255)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }
}
