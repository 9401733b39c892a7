import CDeflate
@testable import HappyRender
import XCTest

// The scanline deflater's dynamic Huffman blocks: each stream inflates
// (libdeflate) back to its input, stays within `bound`, and is the smaller of
// the dynamic and the fixed block for the same matches.

final class DeflaterEmptyInputTests: XCTestCase {
    func testEmptyInputRoundTrips() throws {
        let result = try DeflaterCheck.roundTrip([], rowBytes: 1, pixelBytes: 1)
        XCTAssertEqual(DeflaterCheck.blockType(result.stream), 1, "the fixed block is smaller than any dynamic header")
    }
}

final class DeflaterOneByteTests: XCTestCase {
    func testOneByteRoundTrips() throws {
        for byte: UInt8 in [0, 143, 144, 255] {
            try DeflaterCheck.roundTrip([byte], rowBytes: 1, pixelBytes: 1, "byte \(byte)")
        }
    }
}

final class DeflaterOneByteValueTests: XCTestCase {
    func testAllOneByteValueRoundTripsAsADynamicBlock() throws {
        let result = try DeflaterCheck.roundTrip([UInt8](repeating: 0xAB, count: 120_000), rowBytes: 1200, pixelBytes: 4)
        XCTAssertEqual(DeflaterCheck.blockType(result.stream), 2)
        XCTAssertLessThan(result.stream.count, result.fixed.count)
    }
}

final class DeflaterAllByteValuesTests: XCTestCase {
    func testAll256ByteValuesRoundTrip() throws {
        let values = (0...255).map { UInt8($0) }
        try DeflaterCheck.roundTrip(values, rowBytes: 256, pixelBytes: 4, "once")
        // Rows of every value in turn, then the same rows again: literals, and matches from the row above.
        let rows = (0..<40).flatMap { row in values.map { $0 &+ UInt8(row % 7) } }
        try DeflaterCheck.roundTrip(rows, rowBytes: 256, pixelBytes: 3, "rows")
    }
}

final class DeflaterRandomBytesTests: XCTestCase {
    func testSeededRandomBytesRoundTrip() throws {
        var random = SeededBytes(seed: 0x5EED)
        for (count, rowBytes, pixelBytes) in [(1, 1, 1), (7, 4, 3), (1000, 97, 3), (65_536, 1201, 4), (200_000, 32_768, 4)] {
            let input = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            try DeflaterCheck.roundTrip(input, rowBytes: rowBytes, pixelBytes: pixelBytes, "\(count) random bytes")
        }
        // Few values: many short matches, skewed literals.
        let skewed = (0..<50_000).map { _ in UInt8.random(in: 0...3, using: &random) * 85 }
        let result = try DeflaterCheck.roundTrip(skewed, rowBytes: 500, pixelBytes: 3, "four values")
        XCTAssertEqual(DeflaterCheck.blockType(result.stream), 2)
    }
}

final class DeflaterLongRunsTests: XCTestCase {
    func testRunsAroundTheLongestMatchRoundTrip() throws {
        // Runs of 255-261, 516-517 and 1 000 bytes: matches of 258 (its own symbol), then the rest.
        var input: [UInt8] = []
        for (index, run) in [255, 256, 257, 258, 259, 260, 261, 516, 517, 1000, 3, 2, 1].enumerated() {
            input += [UInt8](repeating: UInt8(index * 19), count: run)
        }
        for pixelBytes in [1, 3, 4] {
            try DeflaterCheck.roundTrip(input, rowBytes: input.count, pixelBytes: pixelBytes, "pixel \(pixelBytes)")
            try DeflaterCheck.roundTrip(input + input, rowBytes: input.count, pixelBytes: pixelBytes,
                                        "pixel \(pixelBytes), repeated row")
        }
    }
}

final class DeflaterRowAboveTests: XCTestCase {
    func testRepeatedNoisyRowsMatchTheRowAbove() throws {
        // Noise within a row (no match one pixel back), and every row like the one above.
        var random = SeededBytes(seed: 42)
        let rowBytes = 1000, rows = 50
        let row = (0..<rowBytes).map { _ in UInt8.random(in: 0...255, using: &random) }
        let input = (0..<rows).flatMap { _ in row }
        let result = try DeflaterCheck.roundTrip(input, rowBytes: rowBytes, pixelBytes: 4)
        // The first row as literals; each other row a few matches.
        XCTAssertLessThan(result.stream.count, rowBytes + 20 * rows)
    }
}

final class DeflaterSingleDistanceTests: XCTestCase {
    func testOneDistanceCodeUsedRoundTrips() throws {
        // One row: only matches one pixel back. Runs of a few colours, so the dynamic block wins.
        var random = SeededBytes(seed: 7)
        let colours: [[UInt8]] = [[200, 10, 10], [10, 200, 10], [255, 255, 255], [0, 0, 0]]
        var input: [UInt8] = []
        while input.count < 30_000 {  // one row within the 32 KB window
            let colour: [UInt8] = colours[Int.random(in: 0...3, using: &random)]
            for _ in 0..<Int.random(in: 1...30, using: &random) { input += colour }
        }
        let result = try DeflaterCheck.roundTrip(input, rowBytes: input.count, pixelBytes: 3, "one row")
        XCTAssertEqual(DeflaterCheck.blockType(result.stream), 2)
        XCTAssertLessThan(result.stream.count, result.fixed.count)
        // Pixel and row distances of one symbol (5 and 6 both take distance code 4, with an extra bit).
        let shared = try DeflaterCheck.roundTrip(input, rowBytes: 6, pixelBytes: 5, "distances 5 and 6")
        XCTAssertEqual(DeflaterCheck.blockType(shared.stream), 2)
        // No match at all: no distance code used.
        let literals = (0..<5000).map { (index: Int) -> UInt8 in UInt8((index * 7 + index / 256) % 256) }
        try DeflaterCheck.roundTrip(literals, rowBytes: literals.count, pixelBytes: 4, "literals only")
    }
}

final class DeflaterRenderedFrameTests: XCTestCase {
    func testRenderedFramesRoundTripSmallerThanWithFixedCodes() throws {
        for view in FrameView.allCases {
            let png = try RenderFixtures.render(view, width: 300, height: 300).pngBytes()
            let scanlines = try DeflaterCheck.scanlines(ofPNG: png)
            let result = try DeflaterCheck.roundTrip(scanlines.bytes, rowBytes: scanlines.rowBytes,
                                                     pixelBytes: scanlines.pixelBytes, "\(view)")
            XCTAssertEqual(DeflaterCheck.blockType(result.stream), 2, "\(view)")
            // A quarter to a third smaller than the fixed block; a tenth is asked here.
            XCTAssertLessThan(Double(result.stream.count), 0.9 * Double(result.fixed.count), "\(view)")
        }
    }
}

final class HuffmanLengthLimitTests: XCTestCase {
    func testSkewedCountsGiveCompleteCodesWithinTheLimit() {
        for (symbolCount, maxLength) in [(286, 15), (30, 15), (19, 7)] {
            // Fibonacci counts (in a shuffled order) give a Huffman tree far deeper than the limit.
            var fibonacci = [1, 1]
            while fibonacci.count < 40 { fibonacci.append(fibonacci[fibonacci.count - 1] + fibonacci[fibonacci.count - 2]) }
            var random = SeededBytes(seed: UInt64(symbolCount))
            var frequencies = (0..<symbolCount).map { fibonacci[min($0, 39)] }
            frequencies.shuffle(using: &random)
            frequencies[0] = 0  // one unused symbol
            let lengths = HuffmanCheck.lengths(frequencies, maxLength: maxLength)
            XCTAssertEqual(lengths[0], 0, "unused")
            XCTAssertTrue(lengths.dropFirst().allSatisfy { (1...maxLength).contains(Int($0)) }, "\(symbolCount) symbols")
            XCTAssertEqual(HuffmanCheck.kraftSum(lengths, maxLength: maxLength), 1 << maxLength,
                           "\(symbolCount) symbols: complete code")
            // More frequent never longer.
            for a in 1..<symbolCount {
                for b in 1..<symbolCount where frequencies[a] > frequencies[b] {
                    XCTAssertLessThanOrEqual(lengths[a], lengths[b])
                }
            }
        }
    }
}

final class HuffmanFewSymbolsTests: XCTestCase {
    func testFewerThanTwoSymbolsGiveTwoOneBitCodes() {
        XCTAssertEqual(HuffmanCheck.lengths([0, 0, 0, 0], maxLength: 15), [1, 1, 0, 0])
        XCTAssertEqual(HuffmanCheck.lengths([0, 0, 9, 0], maxLength: 15), [1, 0, 1, 0])
        XCTAssertEqual(HuffmanCheck.lengths([5, 0, 0, 0], maxLength: 7), [1, 1, 0, 0])
        XCTAssertEqual(HuffmanCheck.lengths([5, 0, 3, 0], maxLength: 7), [1, 0, 1, 0])
        XCTAssertEqual(HuffmanCheck.lengths([4, 1, 1, 2], maxLength: 15), [1, 3, 3, 2])
    }
}

enum HuffmanCheck {
    static func lengths(_ frequencies: [Int], maxLength: Int) -> [UInt8] {
        var lengths = [UInt8](repeating: 0xFF, count: frequencies.count)
        var work = [Int](repeating: 0, count: 2 * frequencies.count + 16)
        frequencies.withUnsafeBufferPointer { counts in
            lengths.withUnsafeMutableBufferPointer { out in
                work.withUnsafeMutableBufferPointer { scratch in
                    ScanlineDeflater.Huffman.buildLengths(counts.baseAddress!, count: counts.count, maxLength: maxLength,
                                                          into: out.baseAddress!, work: scratch.baseAddress!)
                }
            }
        }
        return lengths
    }

    /// The Kraft sum in units of 2^-maxLength.
    static func kraftSum(_ lengths: [UInt8], maxLength: Int) -> Int {
        lengths.filter { $0 > 0 }.reduce(0) { $0 + 1 << (maxLength - Int($1)) }
    }
}

/// Deflating, inflating and picking PNG files apart for the tests above.
enum DeflaterCheck {
    /// Deflates `input` as chosen and with fixed codes only; checks the bound,
    /// both round trips, and that the stream chosen is the smaller.
    @discardableResult
    static func roundTrip(_ input: [UInt8], rowBytes: Int, pixelBytes: Int, _ name: String = "",
                          file: StaticString = #filePath, line: UInt = #line) throws -> (stream: [UInt8], fixed: [UInt8]) {
        let stream = deflate(input, rowBytes: rowBytes, pixelBytes: pixelBytes, fixedCodesOnly: false)
        let fixed = deflate(input, rowBytes: rowBytes, pixelBytes: pixelBytes, fixedCodesOnly: true)
        XCTAssertLessThanOrEqual(stream.count, ScanlineDeflater.bound(input.count), name, file: file, line: line)
        XCTAssertLessThanOrEqual(stream.count, fixed.count, name, file: file, line: line)
        XCTAssertEqual(blockType(fixed), 1, name, file: file, line: line)
        XCTAssertEqual(try inflate(stream, count: input.count), input, "\(name): chosen block", file: file, line: line)
        XCTAssertEqual(try inflate(fixed, count: input.count), input, "\(name): fixed block", file: file, line: line)
        return (stream, fixed)
    }

    static func deflate(_ input: [UInt8], rowBytes: Int, pixelBytes: Int, fixedCodesOnly: Bool) -> [UInt8] {
        var stream = [UInt8](repeating: 0, count: ScanlineDeflater.bound(input.count))
        // A non-null pointer even for no input.
        let source = input.isEmpty ? [0] : input
        let written = source.withUnsafeBufferPointer { source in
            stream.withUnsafeMutableBufferPointer { output in
                ScanlineDeflater.zlib(source.baseAddress!, count: input.count, rowBytes: rowBytes,
                                      pixelBytes: pixelBytes, into: output.baseAddress!, fixedCodesOnly: fixedCodesOnly)
            }
        }
        return Array(stream.prefix(written))
    }

    /// BTYPE of the stream's first (and only) block: 1 fixed, 2 dynamic.
    static func blockType(_ stream: [UInt8]) -> Int { Int(stream[2] >> 1 & 3) }

    static func inflate(_ stream: [UInt8], count: Int) throws -> [UInt8] {
        let decompressor = try XCTUnwrap(libdeflate_alloc_decompressor())
        defer { libdeflate_free_decompressor(decompressor) }
        var output = [UInt8](repeating: 0, count: count + 1)
        var produced = 0
        let result = output.withUnsafeMutableBytes { out in
            stream.withUnsafeBytes { input in
                libdeflate_zlib_decompress(decompressor, input.baseAddress, input.count, out.baseAddress, count, &produced)
            }
        }
        XCTAssertEqual(result, LIBDEFLATE_SUCCESS)
        XCTAssertEqual(produced, count)
        return Array(output.prefix(produced))
    }

    /// The scanlines of a PNG written by `PNGWriter`: its IDAT inflated.
    static func scanlines(ofPNG png: [UInt8]) throws -> (bytes: [UInt8], rowBytes: Int, pixelBytes: Int) {
        func be32(_ at: Int) -> Int { png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        var offset = 8, idat: [UInt8] = []
        var width = 0, height = 0, pixelBytes = 0
        while offset + 8 <= png.count {
            let length = be32(offset), type = String(decoding: png[offset + 4..<offset + 8], as: UTF8.self)
            let data = Array(png[offset + 8..<offset + 8 + length])
            if type == "IHDR" {
                width = be32(offset + 8)
                height = be32(offset + 12)
                pixelBytes = data[9] == 2 ? 3 : 4
            } else if type == "IDAT" {
                idat += data
            }
            offset += 12 + length
        }
        let rowBytes = 1 + width * pixelBytes
        return (try inflate(idat, count: rowBytes * height), rowBytes, pixelBytes)
    }
}

/// SplitMix64, seeded, so that a failure repeats.
struct SeededBytes: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
