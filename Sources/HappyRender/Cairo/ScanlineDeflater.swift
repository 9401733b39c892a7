import CDeflate

/// A zlib stream (RFC 1950/1951) of PNG scanlines, made for flat-colour frames.
///
/// In a frame about 97 % of the pixels repeat the pixel to their left, and
/// most of the rest repeat the row above. So the only matches looked for are
/// at those two distances (one pixel back, one row back), compared eight
/// bytes at a time, and everything goes in one block with deflate's fixed
/// Huffman codes: no hash tables, no code building, about a sixth of the time
/// of libdeflate's fastest level, for files about half as large again
/// (figures in docs/performance.md).
enum ScanlineDeflater {
    /// Shortest match emitted: a 3-byte match costs at most 31 bits, nine-bit literals up to 27.
    static let minimumMatch = 3
    static let maximumMatch = 258
    /// Deflate's window: the row above must lie within it (rows up to 8 191 RGBA pixels).
    static let maximumDistance = 32768

    /// An upper bound on the stream's size for `count` input bytes: literals
    /// take at most 9 bits a byte and matches at most 31 bits per 3 bytes;
    /// plus the zlib header, the end-of-block code and the Adler-32.
    static func bound(_ count: Int) -> Int { count + count / 2 + 16 }

    /// Writes the zlib stream of `input` (`rowBytes` bytes a row, `pixelBytes`
    /// a pixel) to `output`, which holds `bound(count)` bytes; returns its length.
    static func zlib(_ input: UnsafePointer<UInt8>, count: Int, rowBytes: Int, pixelBytes: Int,
                     into output: UnsafeMutablePointer<UInt8>) -> Int {
        precondition(rowBytes <= maximumDistance && pixelBytes >= 1, "distances past deflate's 32 KB window")
        output[0] = 0x78  // deflate, 32 KB window
        output[1] = 0x01  // no dictionary, fastest; (0x7801 % 31 == 0)
        var bits = BitWriter(output + 2)
        bits.put(0b011, count: 3)  // final block, fixed Huffman codes
        let left = distanceCode(pixelBytes), above = distanceCode(rowBytes)
        // Local copies: a static's every use would check that it is initialised.
        let literalCodes = FixedCodes.literal, lengthCodes = FixedCodes.length
        var position = 0
        while position < count {
            let limit = min(maximumMatch, count - position)
            var length = 0
            var distance = left
            if position >= pixelBytes {
                length = matchLength(input + position, input + position - pixelBytes, limit: limit)
            }
            if length < limit, position >= rowBytes {
                let fromAbove = matchLength(input + position, input + position - rowBytes, limit: limit)
                if fromAbove > length {
                    length = fromAbove
                    distance = above
                }
            }
            if length >= minimumMatch {
                let code = lengthCodes[length]
                bits.put(code.bits, count: code.count)
                bits.put(distance.bits, count: distance.count)
                position += length
            } else {
                let code = literalCodes[Int(input[position])]
                bits.put(code.bits, count: code.count)
                position += 1
            }
        }
        let end = literalCodes[256]
        bits.put(end.bits, count: end.count)
        var written = 2 + bits.finish()
        let adler = libdeflate_adler32(1, input, count)
        for shift in [24, 16, 8, 0] as [UInt32] {
            output[written] = UInt8(truncatingIfNeeded: adler >> shift)
            written += 1
        }
        return written
    }

    /// How many bytes from `a` equal those from `b`, up to `limit` (`b` before `a`; they may overlap).
    @inline(__always)
    private static func matchLength(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, limit: Int) -> Int {
        var length = 0
        while length + 8 <= limit {
            let x = UnsafeRawPointer(a + length).loadUnaligned(as: UInt64.self)
            let y = UnsafeRawPointer(b + length).loadUnaligned(as: UInt64.self)
            if x != y { return length + (x ^ y).littleEndian.trailingZeroBitCount / 8 }
            length += 8
        }
        while length < limit, a[length] == b[length] { length += 1 }
        return length
    }

    /// A Huffman code or a code with its extra bits, least significant bit first, as deflate writes them.
    struct Code {
        var bits: UInt32
        var count: Int
    }

    /// The distance code (5 bits, fixed) and its extra bits for one distance.
    private static func distanceCode(_ distance: Int) -> Code {
        var symbol = 0
        while symbol + 1 < FixedCodes.distanceBase.count, FixedCodes.distanceBase[symbol + 1] <= distance { symbol += 1 }
        let extra = FixedCodes.distanceExtra[symbol]
        return Code(bits: reversed(UInt32(symbol), count: 5) | UInt32(distance - FixedCodes.distanceBase[symbol]) << 5,
                    count: 5 + extra)
    }

    static func reversed(_ code: UInt32, count: Int) -> UInt32 {
        var value = code, result: UInt32 = 0
        for _ in 0..<count {
            result = result << 1 | value & 1
            value >>= 1
        }
        return result
    }

    /// Deflate's fixed Huffman codes (RFC 1951 section 3.2.6), bit-reversed for writing.
    enum FixedCodes {
        static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
        static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
        static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769,
                                   1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
        static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8,
                                    9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

        /// Literal/length symbols 0...287: 0-143 in 8 bits, 144-255 in 9, 256-279 in 7, 280-287 in 8.
        static let literal: [Code] = (0..<288).map { symbol in
            let (code, count): (Int, Int)
            switch symbol {
            case 0..<144: (code, count) = (0x30 + symbol, 8)
            case 144..<256: (code, count) = (0x190 + symbol - 144, 9)
            case 256..<280: (code, count) = (symbol - 256, 7)
            default: (code, count) = (0xC0 + symbol - 280, 8)
            }
            return Code(bits: reversed(UInt32(code), count: count), count: count)
        }

        /// For each match length 3...258, its symbol's code followed by the extra bits.
        static let length: [Code] = (0...maximumMatch).map { length in
            guard length >= 3 else { return Code(bits: 0, count: 0) }
            // 258 takes its own symbol (285, no extra bits), not 227 + 31.
            let index = lengthBase.lastIndex { $0 <= length }!
            let symbol = literal[257 + index]
            return Code(bits: symbol.bits | UInt32(length - lengthBase[index]) << symbol.count,
                        count: symbol.count + lengthExtra[index])
        }
    }

    /// Bits packed least significant first into bytes, 32 at a time.
    private struct BitWriter {
        private let base: UnsafeMutablePointer<UInt8>
        private var next: UnsafeMutablePointer<UInt8>
        private var pending: UInt64 = 0
        private var pendingCount = 0

        init(_ output: UnsafeMutablePointer<UInt8>) {
            base = output
            next = output
        }

        /// `count` ≤ 32 bits.
        @inline(__always)
        mutating func put(_ value: UInt32, count: Int) {
            pending |= UInt64(value) << UInt64(pendingCount)
            pendingCount += count
            if pendingCount >= 32 {
                UnsafeMutableRawPointer(next).storeBytes(of: UInt32(truncatingIfNeeded: pending).littleEndian,
                                                         as: UInt32.self)
                next += 4
                pending >>= 32
                pendingCount -= 32
            }
        }

        /// Writes what is left, padded to a byte; returns the bytes written in all.
        mutating func finish() -> Int {
            while pendingCount > 0 {
                next.pointee = UInt8(truncatingIfNeeded: pending)
                next += 1
                pending >>= 8
                pendingCount -= 8
            }
            return next - base
        }
    }
}
