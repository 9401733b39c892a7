import CCairo
import HappyCore
import HappyRender
import XCTest

/// The PNG writer is lossless: Cairo's PNG reader (libpng) decodes its output
/// back to every pixel of the rendered image, and to exactly the pixels that
/// Cairo's own writer, the encoder frames used before, gives for the same image.
final class PNGRoundTripTests: XCTestCase {
    func testTranslucentFrameDecodesToEveryRenderedPixel() throws {
        // The heart on a transparent ground: clear, opaque and antialiased (translucent) pixels.
        let image = try RenderFixtures.render(.heart, width: 300, height: 300)
        let png = try image.pngBytes()
        XCTAssertEqual(PNGRoundTrip.colourType(png), 6, "RGBA when some pixel is not opaque")
        let decoded = try PNGRoundTrip.decode(png)
        let alphas = Set(decoded.words.map { $0 >> 24 })
        XCTAssertTrue(alphas.contains(0) && alphas.contains(255), "clear and opaque pixels")
        XCTAssertGreaterThan(alphas.count, 10, "translucent edge pixels of many alphas")
        PNGRoundTrip.assertSamePixels(decoded, image)
        PNGRoundTrip.assertSameWords(decoded, try PNGRoundTrip.decode(image.cairoPNGBytes()), "as Cairo's writer")
    }
}

final class PNGOpaqueRoundTripTests: XCTestCase {
    func testOpaqueFrameIsRGBAndDecodesToEveryRenderedPixel() throws {
        // The scene at its own size: the background covers every pixel.
        let size = RenderFixtures.renderer.defaultSize(of: .scene)
        let image = try RenderFixtures.render(.scene, width: size.width, height: size.height) {
            $0.scene.dragon.x = 120
            $0.step = 25
        }
        let png = try image.pngBytes()
        XCTAssertEqual(PNGRoundTrip.colourType(png), 2, "RGB when every pixel is opaque")
        let decoded = try PNGRoundTrip.decode(png)
        XCTAssertTrue(decoded.words.allSatisfy { $0 >> 24 == 255 })
        PNGRoundTrip.assertSamePixels(decoded, image)
        PNGRoundTrip.assertSameWords(decoded, try PNGRoundTrip.decode(image.cairoPNGBytes()), "as Cairo's writer")
    }
}

final class PNGEveryViewRoundTripTests: XCTestCase {
    func testEveryViewAtOddSizesDecodesToTheSamePixelsAsCairosWriter() throws {
        // Odd widths (row lengths not a multiple of 8 bytes), one-pixel-wide and tall images.
        for view in FrameView.allCases {
            for (width, height) in [(17, 16), (301, 123), (16, 2048), (1, 1)] {
                let image = try RenderFixtures.renderer.render(view, RenderFixtures.state { $0.step = 60 },
                                                               width: width, height: height)
                let decoded = try PNGRoundTrip.decode(image.pngBytes())
                XCTAssertEqual(decoded.width, width, "\(view)")
                XCTAssertEqual(decoded.height, height, "\(view)")
                PNGRoundTrip.assertSameWords(decoded, try PNGRoundTrip.decode(image.cairoPNGBytes()),
                                             "\(view) \(width)x\(height) as Cairo's writer")
            }
        }
    }
}

/// Decoding through Cairo (libpng) into premultiplied ARGB words, as Cairo draws them.
enum PNGRoundTrip {
    struct Decoded {
        var width: Int
        var height: Int
        var words: [UInt32]
    }

    struct DecodeError: Error, CustomStringConvertible {
        var description: String
    }

    /// The IHDR colour type (2 RGB, 6 RGBA).
    static func colourType(_ png: [UInt8]) -> UInt8? {
        png.count > 25 ? png[25] : nil
    }

    static func decode(_ png: [UInt8]) throws -> Decoded {
        final class Reader {
            let bytes: [UInt8]
            var offset = 0
            init(_ bytes: [UInt8]) { self.bytes = bytes }
        }
        let reader = Reader(png)
        let surface = withExtendedLifetime(reader) {
            cairo_image_surface_create_from_png_stream({ closure, data, length in
                guard let closure, let data else { return CAIRO_STATUS_READ_ERROR }
                let reader = Unmanaged<Reader>.fromOpaque(closure).takeUnretainedValue()
                let count = Int(length)
                guard reader.offset + count <= reader.bytes.count else { return CAIRO_STATUS_READ_ERROR }
                reader.bytes.withUnsafeBufferPointer { source in
                    data.update(from: source.baseAddress! + reader.offset, count: count)
                }
                reader.offset += count
                return CAIRO_STATUS_SUCCESS
            }, Unmanaged.passUnretained(reader).toOpaque())
        }
        guard let surface else { throw DecodeError(description: "no surface") }
        defer { cairo_surface_destroy(surface) }
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw DecodeError(description: String(cString: cairo_status_to_string(status)))
        }
        // Opaque PNGs decode to RGB24 (alpha byte unused); set it, as ARGB32 would.
        let opaque = cairo_image_surface_get_format(surface) == CAIRO_FORMAT_RGB24
        let width = Int(cairo_image_surface_get_width(surface))
        let height = Int(cairo_image_surface_get_height(surface))
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = UnsafeRawPointer(cairo_image_surface_get_data(surface)!)
        var words: [UInt32] = []
        words.reserveCapacity(width * height)
        for y in 0..<height {
            for x in 0..<width {
                let word = data.load(fromByteOffset: y * stride + x * 4, as: UInt32.self)
                words.append(opaque ? word | 0xFF00_0000 : word)
            }
        }
        return Decoded(width: width, height: height, words: words)
    }

    /// Two decodings have the same size and every pixel the same.
    static func assertSameWords(_ found: Decoded, _ expected: Decoded, _ message: String,
                                file: StaticString = #filePath, line: UInt = #line) {
        guard found.width == expected.width, found.height == expected.height else {
            return XCTFail("\(found.width)x\(found.height), expected \(expected.width)x\(expected.height) \(message)",
                           file: file, line: line)
        }
        let differing = found.words.indices.filter { found.words[$0] != expected.words[$0] }
        if let first = differing.first {
            XCTFail("\(differing.count) pixels differ \(message), the first at (\(first % found.width), \(first / found.width)): "
                + "0x\(String(found.words[first], radix: 16)), expected 0x\(String(expected.words[first], radix: 16))",
                file: file, line: line)
        }
    }

    /// Every decoded pixel, un-premultiplied, equals the rendered image's pixel.
    static func assertSamePixels(_ decoded: Decoded, _ image: RenderedImage,
                                 file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(decoded.width, image.width, file: file, line: line)
        XCTAssertEqual(decoded.height, image.height, file: file, line: line)
        var mismatches = 0
        for y in 0..<min(decoded.height, image.height) {
            for x in 0..<min(decoded.width, image.width) {
                let found = straight(decoded.words[y * decoded.width + x]), expected = image.pixel(x: x, y: y)
                if found != expected {
                    mismatches += 1
                    if mismatches <= 5 {
                        XCTFail("(\(x), \(y)) decodes to \(found), rendered \(expected)", file: file, line: line)
                    }
                }
            }
        }
        XCTAssertEqual(mismatches, 0, "pixels that differ", file: file, line: line)
    }

    private static func straight(_ word: UInt32) -> Pixel {
        let alpha = word >> 24
        func channel(_ shift: UInt32) -> UInt8 {
            guard alpha > 0 else { return 0 }
            return UInt8(min(255, (((word >> shift) & 0xFF) * 255 + alpha / 2) / alpha))
        }
        return Pixel(red: channel(16), green: channel(8), blue: channel(0), alpha: UInt8(alpha))
    }
}
