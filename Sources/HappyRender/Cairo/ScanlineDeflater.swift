import CDeflate

/// A zlib stream (RFC 1950/1951) of PNG scanlines, made for flat-colour frames.
///
/// In a frame about 97 % of the pixels repeat the pixel to their left, and
/// most of the rest repeat the row above. So the only matches looked for are
/// at those two distances (one pixel back, one row back), compared eight
/// bytes at a time: no hash tables. A first pass records the literals and
/// matches and counts their symbols; the frame then goes in one block with
/// Huffman codes built from those counts (a dynamic block), or with deflate's
/// fixed codes when those come out smaller (tiny or noisy inputs). About a
/// fifth of the time of libdeflate's fastest level, for files about 2 %
/// larger (figures in docs/performance.md).
enum ScanlineDeflater {
    /// Shortest match looked for: with fixed codes a 3-byte match costs at most 31 bits, nine-bit literals up to 27.
    static let minimumMatch = 3
    static let maximumMatch = 258
    /// Deflate's window: the row above must lie within it (rows up to 8 191 RGBA pixels).
    static let maximumDistance = 32768

    /// An upper bound on the stream's size for `count` input bytes. With the
    /// fixed codes literals take at most 9 bits a byte and matches at most
    /// 31 bits per 3 bytes; plus the zlib header, the block header, the
    /// end-of-block code and the Adler-32. It holds for dynamic blocks too:
    /// one is written only when its bits, header included, are no more than
    /// the fixed block's for the same literals and matches.
    static func bound(_ count: Int) -> Int { count + count / 2 + 16 }

    /// Writes the zlib stream of `input` (`rowBytes` bytes a row, `pixelBytes`
    /// a pixel) to `output`, which holds `bound(count)` bytes; returns its length.
    /// `scratch` is reused from frame to frame by the PNG writer's workspace;
    /// `fixedCodesOnly` writes the fixed block whatever its size (for comparisons).
    static func zlib(_ input: UnsafePointer<UInt8>, count: Int, rowBytes: Int, pixelBytes: Int,
                     into output: UnsafeMutablePointer<UInt8>, scratch: Scratch = Scratch(),
                     fixedCodesOnly: Bool = false) -> Int {
        precondition(rowBytes <= maximumDistance && pixelBytes >= 1, "distances past deflate's 32 KB window")
        let left = distanceSymbol(pixelBytes), above = distanceSymbol(rowBytes)
        let tokenCount = tokenize(input, count: count, rowBytes: rowBytes, pixelBytes: pixelBytes,
                                  leftSymbol: left.symbol, aboveSymbol: above.symbol, into: scratch)

        output[0] = 0x78  // deflate, 32 KB window
        output[1] = 0x01  // no dictionary, fastest; (0x7801 % 31 == 0)
        var bits = BitWriter(output + 2)
        let dynamic = DynamicCodes(scratch)
        if !fixedCodesOnly, dynamic.bitCount < fixedBitCount(scratch) {
            dynamic.writeHeader(&bits, scratch)
            let literals = UnsafePointer(scratch.literalCodes), lengths = UnsafePointer(scratch.matchLengthCodes)
            let distances = UnsafePointer(scratch.distanceCodes)
            writeTokens(scratch.tokens, count: tokenCount, literals: literals, lengths: lengths,
                        left: distanceCode(left, distances), above: distanceCode(above, distances),
                        into: &bits)
        } else {
            bits.put(0b011, count: 3)  // final block, fixed Huffman codes
            FixedCodes.literal.withUnsafeBufferPointer { literals in
                FixedCodes.length.withUnsafeBufferPointer { lengths in
                    FixedCodes.distance.withUnsafeBufferPointer { distances in
                        writeTokens(scratch.tokens, count: tokenCount, literals: literals.baseAddress!,
                                    lengths: lengths.baseAddress!,
                                    left: distanceCode(left, distances.baseAddress!),
                                    above: distanceCode(above, distances.baseAddress!), into: &bits)
                    }
                }
            }
        }
        var written = 2 + bits.finish()
        let adler = libdeflate_adler32(1, input, count)
        for shift in [24, 16, 8, 0] as [UInt32] {
            output[written] = UInt8(truncatingIfNeeded: adler >> shift)
            written += 1
        }
        return written
    }

    /// A token: a literal byte (0...255), or `matchFlag | length << 1 | 1 if from the row above`.
    private static let matchFlag: UInt16 = 0x8000

    /// The match search: records the tokens in `scratch.tokens` and counts
    /// their literal/length symbols (end-of-block included) and distance
    /// symbols; returns the number of tokens.
    private static func tokenize(_ input: UnsafePointer<UInt8>, count: Int, rowBytes: Int, pixelBytes: Int,
                                 leftSymbol: Int, aboveSymbol: Int, into scratch: Scratch) -> Int {
        let literalFrequencies = scratch.literalFrequencies, distanceFrequencies = scratch.distanceFrequencies
        literalFrequencies.update(repeating: 0, count: literalSymbolCount)
        distanceFrequencies.update(repeating: 0, count: distanceSymbolCount)
        literalFrequencies[256] = 1  // end of block
        var tokens = scratch.tokens, capacity = scratch.tokenCapacity
        var tokenCount = 0
        // A local copy: a static's every use would check that it is initialised.
        let lengthSymbols = FixedCodes.lengthSymbol
        var position = 0
        while position < count {
            let limit = min(maximumMatch, count - position)
            var length = 0
            var fromAbove = false
            if position >= pixelBytes {
                length = matchLength(input + position, input + position - pixelBytes, limit: limit)
            }
            if length < limit, position >= rowBytes {
                let lengthAbove = matchLength(input + position, input + position - rowBytes, limit: limit)
                if lengthAbove > length {
                    length = lengthAbove
                    fromAbove = true
                }
            }
            if tokenCount == capacity {
                scratch.growTokens()
                tokens = scratch.tokens
                capacity = scratch.tokenCapacity
            }
            if length >= minimumMatch {
                tokens[tokenCount] = matchFlag | UInt16(truncatingIfNeeded: length) << 1 | (fromAbove ? 1 : 0)
                literalFrequencies[Int(lengthSymbols[length])] += 1
                distanceFrequencies[fromAbove ? aboveSymbol : leftSymbol] += 1
                position += length
            } else {
                let byte = input[position]
                tokens[tokenCount] = UInt16(byte)
                literalFrequencies[Int(byte)] += 1
                position += 1
            }
            tokenCount += 1
        }
        return tokenCount
    }

    /// The tokens in the given codes, then the end-of-block code.
    @inline(__always)
    private static func writeTokens(_ tokens: UnsafePointer<UInt16>, count: Int, literals: UnsafePointer<Code>,
                                    lengths: UnsafePointer<Code>, left: Code, above: Code,
                                    into bits: inout BitWriter) {
        for index in 0..<count {
            let token = tokens[index]
            if token & matchFlag != 0 {
                let code = lengths[Int(token >> 1 & 0x1FF)]
                bits.put(code.bits, count: code.count)
                let distance = token & 1 != 0 ? above : left
                bits.put(distance.bits, count: distance.count)
            } else {
                let code = literals[Int(token)]
                bits.put(code.bits, count: code.count)
            }
        }
        let end = literals[256]
        bits.put(end.bits, count: end.count)
    }

    /// The fixed block's size in bits, leaving out the extra bits (the same in both kinds of block).
    private static func fixedBitCount(_ scratch: Scratch) -> Int {
        var total = 3
        for symbol in 0..<literalSymbolCount {
            total += scratch.literalFrequencies[symbol] * FixedCodes.literalLength(symbol)
        }
        for symbol in 0..<distanceSymbolCount {
            total += scratch.distanceFrequencies[symbol] * 5
        }
        return total
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

    static let literalSymbolCount = 286  // 0...285: literals, end of block, lengths
    static let distanceSymbolCount = 30
    static let codeLengthSymbolCount = 19

    /// A distance's symbol, and its extra bits' value and count.
    private static func distanceSymbol(_ distance: Int) -> (symbol: Int, extra: UInt32, extraCount: Int) {
        var symbol = 0
        while symbol + 1 < FixedCodes.distanceBase.count, FixedCodes.distanceBase[symbol + 1] <= distance { symbol += 1 }
        return (symbol, UInt32(distance - FixedCodes.distanceBase[symbol]), FixedCodes.distanceExtra[symbol])
    }

    /// A distance's code followed by its extra bits, in the given distance codes.
    private static func distanceCode(_ distance: (symbol: Int, extra: UInt32, extraCount: Int),
                                     _ codes: UnsafePointer<Code>) -> Code {
        let code = codes[distance.symbol]
        return Code(bits: code.bits | distance.extra << code.count, count: code.count + distance.extraCount)
    }

    static func reversed(_ code: UInt32, count: Int) -> UInt32 {
        var value = code, result: UInt32 = 0
        for _ in 0..<count {
            result = result << 1 | value & 1
            value >>= 1
        }
        return result
    }

    /// Huffman codes built from one frame's symbol counts, and the block
    /// header that describes them (RFC 1951 section 3.2.7), in `scratch`.
    private struct DynamicCodes {
        /// HLIT + 257, HDIST + 1, HCLEN + 4: the code lengths the header lists.
        let literalCount: Int, distanceCount: Int, codeLengthCount: Int
        /// Code-length symbols in `scratch.runs`.
        let runCount: Int
        /// The block's size in bits, leaving out the matches' extra bits (as `fixedBitCount` does).
        let bitCount: Int

        /// The order of the code-length code's lengths in the header.
        static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

        init(_ scratch: Scratch) {
            let literalLengths = scratch.literalLengths, distanceLengths = scratch.distanceLengths
            Huffman.buildLengths(scratch.literalFrequencies, count: literalSymbolCount, maxLength: 15,
                                 into: literalLengths, work: scratch.work)
            Huffman.buildLengths(scratch.distanceFrequencies, count: distanceSymbolCount, maxLength: 15,
                                 into: distanceLengths, work: scratch.work)
            var literalCount = literalSymbolCount
            while literalLengths[literalCount - 1] == 0 { literalCount -= 1 }  // stops at 256, end of block, or above
            var distanceCount = distanceSymbolCount
            while distanceLengths[distanceCount - 1] == 0 { distanceCount -= 1 }  // at least two have a code

            // Both lists of lengths form one sequence, run-length coded.
            scratch.sequence.update(from: literalLengths, count: literalCount)
            (scratch.sequence + literalCount).update(from: distanceLengths, count: distanceCount)
            runCount = Self.runLengthCode(scratch.sequence, count: literalCount + distanceCount,
                                          into: scratch.runs, frequencies: scratch.codeLengthFrequencies)
            let codeLengthLengths = scratch.codeLengthLengths
            Huffman.buildLengths(scratch.codeLengthFrequencies, count: codeLengthSymbolCount, maxLength: 7,
                                 into: codeLengthLengths, work: scratch.work)
            let order = Self.codeLengthOrder
            var codeLengthCount = codeLengthSymbolCount
            while codeLengthCount > 4, codeLengthLengths[order[codeLengthCount - 1]] == 0 { codeLengthCount -= 1 }
            self.literalCount = literalCount
            self.distanceCount = distanceCount
            self.codeLengthCount = codeLengthCount

            var total = 3 + 5 + 5 + 4 + 3 * codeLengthCount
            for index in 0..<runCount {
                let symbol = Int(scratch.runs[index] & 31)
                total += Int(codeLengthLengths[symbol]) + Self.runExtraBits(symbol)
            }
            for symbol in 0..<literalSymbolCount {
                total += scratch.literalFrequencies[symbol] * Int(literalLengths[symbol])
            }
            for symbol in 0..<distanceSymbolCount {
                total += scratch.distanceFrequencies[symbol] * Int(distanceLengths[symbol])
            }
            bitCount = total
        }

        /// Extra bits after a code-length symbol: 16 repeats the last length 3-6 times, 17 and 18 are runs of zeros.
        static func runExtraBits(_ symbol: Int) -> Int {
            switch symbol {
            case 16: 2
            case 17: 3
            case 18: 7
            default: 0
            }
        }

        /// Run-length codes `count` code lengths as code-length symbols (each
        /// `symbol | extra << 5`) into `runs`, counting the symbols; returns how many.
        private static func runLengthCode(_ lengths: UnsafePointer<UInt8>, count: Int,
                                          into runs: UnsafeMutablePointer<UInt16>,
                                          frequencies: UnsafeMutablePointer<Int>) -> Int {
            frequencies.update(repeating: 0, count: codeLengthSymbolCount)
            var runCount = 0
            func emit(_ symbol: Int, extra: Int = 0) {
                runs[runCount] = UInt16(symbol | extra << 5)
                frequencies[symbol] += 1
                runCount += 1
            }
            var index = 0
            while index < count {
                let length = Int(lengths[index])
                var run = 1
                while index + run < count, Int(lengths[index + run]) == length { run += 1 }
                index += run
                if length == 0 {
                    while run >= 11 {
                        let zeros = min(run, 138)
                        emit(18, extra: zeros - 11)
                        run -= zeros
                    }
                    if run >= 3 {
                        emit(17, extra: run - 3)
                        run = 0
                    }
                } else if run >= 4 {
                    emit(length)
                    run -= 1
                    while run >= 3 {
                        let repeats = min(run, 6)
                        emit(16, extra: repeats - 3)
                        run -= repeats
                    }
                }
                while run > 0 {
                    emit(length)
                    run -= 1
                }
            }
            return runCount
        }

        /// Assigns the canonical codes to the lengths built, and writes the block header.
        func writeHeader(_ bits: inout BitWriter, _ scratch: Scratch) {
            Huffman.assignCodes(scratch.literalLengths, count: literalSymbolCount, into: scratch.literalCodes)
            Huffman.assignCodes(scratch.distanceLengths, count: distanceSymbolCount, into: scratch.distanceCodes)
            Huffman.assignCodes(scratch.codeLengthLengths, count: codeLengthSymbolCount, into: scratch.codeLengthCodes)
            // Each match length's code followed by its extra bits, as FixedCodes.length.
            let lengthSymbols = FixedCodes.lengthSymbol
            for length in minimumMatch...maximumMatch {
                scratch.matchLengthCodes[length] = lengthCode(length, symbolCode: scratch.literalCodes[Int(lengthSymbols[length])])
            }

            bits.put(0b101, count: 3)  // final block, dynamic Huffman codes
            bits.put(UInt32(literalCount - 257), count: 5)
            bits.put(UInt32(distanceCount - 1), count: 5)
            bits.put(UInt32(codeLengthCount - 4), count: 4)
            let order = Self.codeLengthOrder
            for index in 0..<codeLengthCount {
                bits.put(UInt32(scratch.codeLengthLengths[order[index]]), count: 3)
            }
            for index in 0..<runCount {
                let run = scratch.runs[index]
                let symbol = Int(run & 31)
                let code = scratch.codeLengthCodes[symbol]
                bits.put(code.bits, count: code.count)
                bits.put(UInt32(run >> 5), count: Self.runExtraBits(symbol))
            }
        }
    }

    /// The buffers one encoding needs. Keep one per thread and reuse it (a
    /// fresh token buffer costs page faults); call `releaseGrownTokens()`
    /// between frames to free a token buffer grown past `maxKeptTokens`.
    final class Scratch {
        private static let maxKeptTokens = 1 << 20
        private static let initialTokens = 1 << 14

        init() {}

        private(set) var tokens = UnsafeMutablePointer<UInt16>.allocate(capacity: initialTokens)
        private(set) var tokenCapacity = initialTokens
        let literalFrequencies = UnsafeMutablePointer<Int>.allocate(capacity: literalSymbolCount)
        let distanceFrequencies = UnsafeMutablePointer<Int>.allocate(capacity: distanceSymbolCount)
        let codeLengthFrequencies = UnsafeMutablePointer<Int>.allocate(capacity: codeLengthSymbolCount)
        let literalLengths = UnsafeMutablePointer<UInt8>.allocate(capacity: literalSymbolCount)
        let distanceLengths = UnsafeMutablePointer<UInt8>.allocate(capacity: distanceSymbolCount)
        let codeLengthLengths = UnsafeMutablePointer<UInt8>.allocate(capacity: codeLengthSymbolCount)
        let literalCodes = UnsafeMutablePointer<Code>.allocate(capacity: literalSymbolCount)
        let distanceCodes = UnsafeMutablePointer<Code>.allocate(capacity: distanceSymbolCount)
        let codeLengthCodes = UnsafeMutablePointer<Code>.allocate(capacity: codeLengthSymbolCount)
        let matchLengthCodes = UnsafeMutablePointer<Code>.allocate(capacity: maximumMatch + 1)
        /// Both alphabets' code lengths in a row, and their run-length coding.
        let sequence = UnsafeMutablePointer<UInt8>.allocate(capacity: literalSymbolCount + distanceSymbolCount)
        let runs = UnsafeMutablePointer<UInt16>.allocate(capacity: literalSymbolCount + distanceSymbolCount)
        /// Room for `Huffman.buildLengths` on the largest alphabet.
        let work = UnsafeMutablePointer<Int>.allocate(capacity: 2 * literalSymbolCount + 16)

        /// Doubles the token buffer, keeping its tokens.
        func growTokens() {
            let grown = UnsafeMutablePointer<UInt16>.allocate(capacity: 2 * tokenCapacity)
            grown.moveInitialize(from: tokens, count: tokenCapacity)
            tokens.deallocate()
            tokens = grown
            tokenCapacity *= 2
        }

        func releaseGrownTokens() {
            guard tokenCapacity > Self.maxKeptTokens else { return }
            tokens.deallocate()
            tokens = .allocate(capacity: Self.initialTokens)
            tokenCapacity = Self.initialTokens
        }

        deinit {
            tokens.deallocate()
            for pointer in [UnsafeMutableRawPointer(literalFrequencies), UnsafeMutableRawPointer(distanceFrequencies),
                            UnsafeMutableRawPointer(codeLengthFrequencies), UnsafeMutableRawPointer(literalLengths),
                            UnsafeMutableRawPointer(distanceLengths), UnsafeMutableRawPointer(codeLengthLengths),
                            UnsafeMutableRawPointer(literalCodes), UnsafeMutableRawPointer(distanceCodes),
                            UnsafeMutableRawPointer(codeLengthCodes), UnsafeMutableRawPointer(matchLengthCodes),
                            UnsafeMutableRawPointer(sequence), UnsafeMutableRawPointer(runs),
                            UnsafeMutableRawPointer(work)] {
                pointer.deallocate()
            }
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
