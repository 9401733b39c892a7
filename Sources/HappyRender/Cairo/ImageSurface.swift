import CCairo

/// Why a frame could not be drawn or encoded.
public struct RenderError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }

    init(_ what: String, status: cairo_status_t) {
        let reason = cairo_status_to_string(status).map { String(cString: $0) } ?? "status \(status.rawValue)"
        self.init("\(what): \(reason)")
    }
}

/// A Cairo ARGB32 image surface: created (and checked) in `init`, destroyed
/// in `deinit`. The raw pointer never leaves this module.
final class ImageSurface {
    let pointer: OpaquePointer
    let width: Int
    let height: Int

    init(width: Int, height: Int) throws(RenderError) {
        guard width > 0, height > 0 else { throw RenderError("image size \(width)x\(height) is empty") }
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)) else {
            throw RenderError("cairo_image_surface_create returned nothing")
        }
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            throw RenderError("image surface \(width)x\(height)", status: status)
        }
        pointer = surface
        self.width = width
        self.height = height
    }

    deinit {
        cairo_surface_destroy(pointer)
    }

    /// The pixel at (x, y), un-premultiplied (after `DrawingContext.finish()` flushed the drawing).
    func pixel(x: Int, y: Int) -> Pixel {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)x\(height)")
        let stride = Int(cairo_image_surface_get_stride(pointer))
        let data = cairo_image_surface_get_data(pointer)!
        let word = UnsafeRawPointer(data + y * stride + x * 4).loadUnaligned(as: UInt32.self)
        return Pixel(premultipliedARGB: word)
    }

    /// The surface as PNG bytes (`PNGWriter`: libdeflate, filter None).
    func pngBytes() throws(RenderError) -> [UInt8] {
        cairo_surface_flush(pointer)
        guard let data = cairo_image_surface_get_data(pointer) else {
            throw RenderError("PNG encoding: the surface has no pixels")
        }
        return try PNGWriter.png(pixels: data, width: width, height: height,
                                 stride: Int(cairo_image_surface_get_stride(pointer)))
    }

    /// The surface as PNG bytes written by Cairo's own writer (libpng, zlib's
    /// default level and adaptive filter): several times slower than `pngBytes()`.
    func cairoPNGBytes() throws(RenderError) -> [UInt8] {
        let sink = PNGSink()
        sink.bytes.reserveCapacity(width * height / 4 + 1024)
        let status = cairo_surface_write_to_png_stream(pointer, { closure, data, length in
            guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
            let sink = Unmanaged<PNGSink>.fromOpaque(closure).takeUnretainedValue()
            sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
            return CAIRO_STATUS_SUCCESS
        }, Unmanaged.passUnretained(sink).toOpaque())
        guard status == CAIRO_STATUS_SUCCESS else { throw RenderError("PNG encoding", status: status) }
        return sink.bytes
    }

    /// Collects the chunks Cairo writes.
    private final class PNGSink {
        var bytes: [UInt8] = []
    }
}

/// One pixel of a rendered image, straight (not premultiplied) alpha.
public struct Pixel: Equatable, Sendable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    init(premultipliedARGB word: UInt32) {
        let alpha = UInt8(word >> 24)
        func straight(_ shift: UInt32) -> UInt8 {
            let value = UInt32((word >> shift) & 0xFF)
            guard alpha > 0 else { return 0 }
            return UInt8(min(255, (value * 255 + UInt32(alpha) / 2) / UInt32(alpha)))
        }
        self.init(red: straight(16), green: straight(8), blue: straight(0), alpha: alpha)
    }

    public var description: String { "rgba(\(red), \(green), \(blue), \(alpha))" }
}
