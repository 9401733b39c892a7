import CDeflate
@testable import HappyRender
import XCTest

/// The scanline deflater's streams inflate (libdeflate) back to their input,
/// within the bound, for runs, repeated rows, noise (all literals) and mixes.
final class ScanlineDeflaterTests: XCTestCase {
    func testStreamsInflateToTheirInputWithinTheBound() throws {
        var random = SystemRandomNumberGenerator()
        let cases: [(name: String, rowBytes: Int, pixelBytes: Int, rows: Int, fill: (Int) -> UInt8)] = [
            ("zeros", 1201, 4, 300, { _ in 0 }),
            ("one colour", 901, 3, 50, { [0x10, 0xF0, 0x80][$0 % 3] }),
            ("noise", 257, 4, 40, { _ in UInt8.random(in: 0...255, using: &random) }),
            ("bytes 144-255 (nine-bit literals)", 97, 3, 31, { _ in UInt8.random(in: 144...255, using: &random) }),
            ("stripes", 16385, 4, 3, { ($0 / 4) % 7 == 0 ? UInt8(truncatingIfNeeded: $0) : 9 }),
            ("one byte", 1, 1, 1, { _ in 42 }),
        ]
        for example in cases {
            let count = example.rowBytes * example.rows
            let input = (0..<count).map(example.fill)
            // Repeat the first row below, for matches one row back.
            let rows = input.enumerated().map { index, byte in index % 5 == 0 && index >= example.rowBytes ? input[index - example.rowBytes] : byte }
            var stream = [UInt8](repeating: 0, count: ScanlineDeflater.bound(count))
            let written = rows.withUnsafeBufferPointer { source in
                stream.withUnsafeMutableBufferPointer { output in
                    ScanlineDeflater.zlib(source.baseAddress!, count: count, rowBytes: example.rowBytes,
                                          pixelBytes: example.pixelBytes, into: output.baseAddress!)
                }
            }
            XCTAssertLessThanOrEqual(written, ScanlineDeflater.bound(count), example.name)
            XCTAssertEqual(try DeflaterCheck.inflate(Array(stream.prefix(written)), count: count), rows, example.name)
        }
    }
}
