import CDeflate
import Foundation

/// Writes Cairo ARGB32 pixels as a PNG: IHDR, one IDAT, IEND.
///
/// Cairo's own writer (libpng with zlib's defaults: level 6 and an adaptive
/// filter tried on every row) spent about 54 M instructions on a 300×300
/// frame. Here the scanlines keep filter None and go through
/// `ScanlineDeflater`, which only looks for repeats of the pixel to the left
/// and of the row above: the frames are flat colours with antialiased edges.
/// Measured against libdeflate and zlib at their fastest levels with each
/// filter in docs/performance.md.
///
/// The pixels are what Cairo's writer emitted: RGB when every pixel is
/// opaque, else RGBA un-premultiplied with the same rounding, and fully
/// transparent pixels as 0, 0, 0, 0.
enum PNGWriter {
    /// `pixels` are `height` rows of `stride` bytes, each row `width` native-endian
    /// premultiplied ARGB words (Cairo's `CAIRO_FORMAT_ARGB32`).
    static func png(pixels: UnsafeRawPointer, width: Int, height: Int, stride: Int) throws(RenderError) -> [UInt8] {
        guard width > 0, height > 0, stride >= width * 4 else {
            throw RenderError("PNG encoding: bad image layout \(width)x\(height), stride \(stride)")
        }
        let opaque = isOpaque(pixels, width: width, height: height, stride: stride)
        let channels = opaque ? 3 : 4
        let rowBytes = 1 + width * channels
        let scanlinesCount = rowBytes * height
        guard rowBytes <= ScanlineDeflater.maximumDistance else {
            throw RenderError("PNG encoding: \(width) pixels a row is wider than the encoder reaches back")
        }

        let workspace = Workspace.take()
        defer { Workspace.give(workspace) }
        let scanlines = workspace.scanlines(scanlinesCount)
        for y in 0..<height {
            let row = scanlines + y * rowBytes
            row[0] = 0  // filter type None
            let words = (pixels + y * stride).assumingMemoryBound(to: UInt32.self)
            if opaque {
                writeRGB(words, count: width, into: row + 1)
            } else {
                writeRGBA(words, count: width, into: row + 1)
            }
        }
        let compressed = workspace.compressed(ScanlineDeflater.bound(scanlinesCount))
        let compressedCount = ScanlineDeflater.zlib(scanlines, count: scanlinesCount, rowBytes: rowBytes,
                                                    pixelBytes: channels, into: compressed,
                                                    scratch: workspace.deflaterScratch)

        var header = [UInt8](repeating: 0, count: 13)
        put32(UInt32(width), into: &header, at: 0)
        put32(UInt32(height), into: &header, at: 4)
        header[8] = 8                    // bits per channel
        header[9] = opaque ? 2 : 6       // colour type: RGB or RGBA
        // compression 0 (deflate), filter method 0, no interlace

        var png: [UInt8] = []
        png.reserveCapacity(signature.count + 3 * 12 + header.count + compressedCount)
        png.append(contentsOf: signature)
        header.withUnsafeBufferPointer { appendChunk("IHDR", $0, to: &png) }
        appendChunk("IDAT", UnsafeBufferPointer(start: compressed, count: compressedCount), to: &png)
        appendChunk("IEND", UnsafeBufferPointer(start: nil, count: 0), to: &png)
        return png
    }

    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private static func isOpaque(_ pixels: UnsafeRawPointer, width: Int, height: Int, stride: Int) -> Bool {
        for y in 0..<height {
            let words = (pixels + y * stride).assumingMemoryBound(to: UInt32.self)
            var all: UInt32 = 0xFF00_0000
            for x in 0..<width { all &= words[x] }
            if all & 0xFF00_0000 != 0xFF00_0000 { return false }
        }
        return true
    }

    private static func writeRGB(_ words: UnsafePointer<UInt32>, count: Int, into out: UnsafeMutablePointer<UInt8>) {
        var o = out
        for x in 0..<count {
            let word = words[x]
            o[0] = UInt8(truncatingIfNeeded: word >> 16)
            o[1] = UInt8(truncatingIfNeeded: word >> 8)
            o[2] = UInt8(truncatingIfNeeded: word)
            o += 3
        }
    }

    /// Un-premultiplies as Cairo's writer does: (c × 255 + a / 2) / a. Each
    /// pixel is stored as one little-endian word of R, G, B, A; a pixel like
    /// the one before it (most are) reuses its bytes.
    private static func writeRGBA(_ words: UnsafePointer<UInt32>, count: Int, into out: UnsafeMutablePointer<UInt8>) {
        let output = UnsafeMutableRawPointer(out)
        var previousWord: UInt32 = 0, previousRGBA: UInt32 = 0  // transparent black is 0 either way
        for x in 0..<count {
            let word = words[x]
            if word != previousWord {
                previousWord = word
                previousRGBA = rgbaBytes(word)
            }
            output.storeBytes(of: previousRGBA.littleEndian, toByteOffset: x * 4, as: UInt32.self)
        }
    }

    /// Premultiplied ARGB to straight R, G, B, A in bytes 0...3 of the result.
    @inline(__always)
    private static func rgbaBytes(_ word: UInt32) -> UInt32 {
        let alpha = word >> 24
        if alpha == 255 {
            // ARGB to ABGR: the bytes swapped (BGRA), then rotated by one byte.
            let swapped = word.byteSwapped
            return swapped >> 8 | swapped << 24
        }
        if alpha == 0 { return 0 }
        let half = alpha / 2
        let red = (((word >> 16) & 0xFF) * 255 + half) / alpha
        let green = (((word >> 8) & 0xFF) * 255 + half) / alpha
        let blue = ((word & 0xFF) * 255 + half) / alpha
        return red | green << 8 | blue << 16 | alpha << 24
    }

    private static func put32(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: value)
    }

    /// Length, type, data, and the CRC-32 of type and data.
    private static func appendChunk(_ type: StaticString, _ data: UnsafeBufferPointer<UInt8>, to png: inout [UInt8]) {
        let typeBytes = UnsafeBufferPointer(start: type.utf8Start, count: 4)
        let length = UInt32(data.count)
        png.append(contentsOf: [UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16),
                                UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)])
        png.append(contentsOf: typeBytes)
        var crc = libdeflate_crc32(0, typeBytes.baseAddress, 4)
        if let base = data.baseAddress, !data.isEmpty {
            png.append(contentsOf: data)
            crc = libdeflate_crc32(crc, base, data.count)
        }
        png.append(contentsOf: [UInt8(truncatingIfNeeded: crc >> 24), UInt8(truncatingIfNeeded: crc >> 16),
                                UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)])
    }

    /// The buffers one encoding needs (scanlines, the stream, the deflater's
    /// scratch), reused from frame to frame: fresh ones cost a page fault per
    /// 4 KB touched, as much as encoding a small frame. One thread uses a
    /// workspace at a time; renders run on a few worker threads, so a few are
    /// kept, and buffers past `maxKeptBytes` (frames above about 700×700) are
    /// freed after use.
    private final class Workspace {
        private static let maxIdle = 8
        private static let maxKeptBytes = 2 * 1024 * 1024
        private static let lock = NSLock()
        nonisolated(unsafe) private static var idle: [Workspace] = []

        private var scanlineBuffer = Buffer()
        private var compressedBuffer = Buffer()
        let deflaterScratch = ScanlineDeflater.Scratch()

        static func take() -> Workspace {
            lock.lock()
            let reused = idle.popLast()
            lock.unlock()
            return reused ?? Workspace()
        }

        static func give(_ workspace: Workspace) {
            workspace.scanlineBuffer.shrink(to: maxKeptBytes)
            workspace.compressedBuffer.shrink(to: maxKeptBytes)
            workspace.deflaterScratch.releaseGrownTokens()
            lock.lock()
            if idle.count < maxIdle { idle.append(workspace) }
            lock.unlock()
        }

        func scanlines(_ count: Int) -> UnsafeMutablePointer<UInt8> { scanlineBuffer.pointer(count) }
        func compressed(_ count: Int) -> UnsafeMutablePointer<UInt8> { compressedBuffer.pointer(count) }

        /// Memory grown on demand and freed when a workspace is dropped.
        private struct Buffer: ~Copyable {
            private var base: UnsafeMutablePointer<UInt8>?
            private var capacity = 0

            mutating func pointer(_ count: Int) -> UnsafeMutablePointer<UInt8> {
                if let base, capacity >= count { return base }
                base?.deallocate()
                let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
                base = grown
                capacity = count
                return grown
            }

            mutating func shrink(to maxBytes: Int) {
                guard capacity > maxBytes else { return }
                base?.deallocate()
                base = nil
                capacity = 0
            }

            deinit { base?.deallocate() }
        }
    }
}
