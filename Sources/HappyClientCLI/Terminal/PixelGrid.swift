/// An opaque 24-bit colour.
struct RGB: Equatable, Hashable, Sendable {
    var red: UInt8
    var green: UInt8
    var blue: UInt8

    static let white = RGB(red: 255, green: 255, blue: 255)
    static let black = RGB(red: 0, green: 0, blue: 0)

    /// Perceived brightness, 0...1.
    var luminance: Double {
        (0.2126 * Double(red) + 0.7152 * Double(green) + 0.0722 * Double(blue)) / 255
    }

    /// `self` over `background` with `alpha` (0...255).
    func over(_ background: RGB, alpha: UInt8) -> RGB {
        let a = Int(alpha)
        func mix(_ top: UInt8, _ bottom: UInt8) -> UInt8 { UInt8((Int(top) * a + Int(bottom) * (255 - a) + 127) / 255) }
        return RGB(red: mix(red, background.red), green: mix(green, background.green), blue: mix(blue, background.blue))
    }
}

/// A picture of `width`×`height` pixels, row by row from the top left;
/// nil pixels are transparent (the terminal's own background shows).
struct PixelGrid: Equatable {
    let width: Int
    let height: Int
    private(set) var pixels: [RGB?]

    init(width: Int, height: Int, fill: RGB? = nil) {
        self.width = width
        self.height = height
        pixels = Array(repeating: fill, count: width * height)
    }

    subscript(x: Int, y: Int) -> RGB? {
        get { pixels[y * width + x] }
        set { pixels[y * width + x] = newValue }
    }

    /// Copies `other` with its top-left corner at (`x`, `y`), clipped.
    mutating func draw(_ other: PixelGrid, atX x: Int, y: Int) {
        for row in 0..<other.height where (0..<height).contains(y + row) {
            for column in 0..<other.width where (0..<width).contains(x + column) {
                self[x + column, y + row] = other[column, row]
            }
        }
    }
}
