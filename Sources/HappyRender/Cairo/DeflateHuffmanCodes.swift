/// The Huffman codes of `ScanlineDeflater`: length-limited canonical codes
/// built from a frame's symbol counts, and deflate's fixed codes.
extension ScanlineDeflater {
    /// Length-limited canonical Huffman codes.
    enum Huffman {
        /// Code lengths of at most `maxLength` bits for the `count` symbols of
        /// `frequencies` (0 for the unused ones) into `lengths`; `work` holds
        /// 2 × count + 16 integers. The code is complete (Kraft sum exactly
        /// one): with fewer than two symbols used, two get one-bit codes, as
        /// zlib refuses incomplete code-length codes and some decoders
        /// incomplete distance codes.
        static func buildLengths(_ frequencies: UnsafePointer<Int>, count: Int, maxLength: Int,
                                 into lengths: UnsafeMutablePointer<UInt8>, work: UnsafeMutablePointer<Int>) {
            lengths.update(repeating: 0, count: count)
            // The used symbols, least frequent first: frequency above the symbol's 9 bits.
            let keys = work, symbols = work + count, lengthCounts = work + 2 * count
            var used = 0
            for symbol in 0..<count where frequencies[symbol] > 0 {
                keys[used] = frequencies[symbol] << 9 | symbol
                used += 1
            }
            if used < 2 {
                let symbol = used == 1 ? keys[0] & 0x1FF : 0
                lengths[0] = 1
                lengths[symbol == 0 ? 1 : symbol] = 1
                return
            }
            var sorted = UnsafeMutableBufferPointer(start: keys, count: used)
            sorted.sort()
            for index in 0..<used {
                symbols[index] = keys[index] & 0x1FF
                keys[index] >>= 9
            }
            minimumRedundancyLengths(keys, count: used)

            // Lengths over the limit are cut to it, which oversubscribes the
            // code; then, while it is, one code at the limit goes and a
            // shorter one splits in two a bit longer: each step takes one
            // unit of 2^-maxLength off the Kraft sum and keeps the count.
            for length in 0...maxLength { lengthCounts[length] = 0 }
            for index in 0..<used { lengthCounts[min(keys[index], maxLength)] += 1 }
            var kraft = 0
            for length in 1...maxLength { kraft += lengthCounts[length] << (maxLength - length) }
            while kraft > 1 << maxLength {
                lengthCounts[maxLength] -= 1
                for length in stride(from: maxLength - 1, through: 1, by: -1) where lengthCounts[length] > 0 {
                    lengthCounts[length] -= 1
                    lengthCounts[length + 1] += 2
                    break
                }
                kraft -= 1
            }
            // The most frequent symbols take the shortest codes.
            var next = used
            for length in 1...maxLength {
                for _ in 0..<lengthCounts[length] {
                    next -= 1
                    lengths[symbols[next]] = UInt8(length)
                }
            }
        }

        /// Huffman code lengths, in place, for `count` ≥ 2 frequencies in
        /// ascending order (Moffat and Katajainen's in-place algorithm, as in
        /// miniz): the result is in descending order of length.
        private static func minimumRedundancyLengths(_ a: UnsafeMutablePointer<Int>, count n: Int) {
            // Internal nodes' weights, then their parents' indices.
            a[0] += a[1]
            var root = 0, leaf = 2
            for next in 1..<(n - 1) {
                if leaf >= n || a[root] < a[leaf] {
                    a[next] = a[root]
                    a[root] = next
                    root += 1
                } else {
                    a[next] = a[leaf]
                    leaf += 1
                }
                if leaf >= n || (root < next && a[root] < a[leaf]) {
                    a[next] += a[root]
                    a[root] = next
                    root += 1
                } else {
                    a[next] += a[leaf]
                    leaf += 1
                }
            }
            // Internal nodes' depths.
            a[n - 2] = 0
            for next in stride(from: n - 3, through: 0, by: -1) { a[next] = a[a[next]] + 1 }
            // Leaves' depths.
            var available = 1, usedNodes = 0, depth = 0
            root = n - 2
            var next = n - 1
            while available > 0 {
                while root >= 0, a[root] == depth {
                    usedNodes += 1
                    root -= 1
                }
                while available > usedNodes {
                    a[next] = depth
                    next -= 1
                    available -= 1
                }
                available = 2 * usedNodes
                depth += 1
                usedNodes = 0
            }
        }

        /// Canonical codes for `lengths` (RFC 1951 section 3.2.2), bit-reversed for writing; unused symbols get none.
        static func assignCodes(_ lengths: UnsafePointer<UInt8>, count: Int, into codes: UnsafeMutablePointer<Code>) {
            var lengthCounts = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var nextCodes = lengthCounts
            withUnsafeMutableBytes(of: &lengthCounts) { countsBytes in
                withUnsafeMutableBytes(of: &nextCodes) { nextBytes in
                    let counts = countsBytes.bindMemory(to: Int.self), next = nextBytes.bindMemory(to: Int.self)
                    for symbol in 0..<count { counts[Int(lengths[symbol])] += 1 }
                    counts[0] = 0
                    var code = 0
                    for length in 1..<16 {
                        code = (code + counts[length - 1]) << 1
                        next[length] = code
                    }
                    for symbol in 0..<count {
                        let length = Int(lengths[symbol])
                        guard length > 0 else {
                            codes[symbol] = Code(bits: 0, count: 0)
                            continue
                        }
                        codes[symbol] = Code(bits: reversed(UInt32(next[length]), count: length), count: length)
                        next[length] += 1
                    }
                }
            }
        }
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

        /// A literal/length symbol's fixed code length.
        static func literalLength(_ symbol: Int) -> Int {
            switch symbol {
            case 0..<144: 8
            case 144..<256: 9
            case 256..<280: 7
            default: 8
            }
        }

        /// Literal/length symbols 0...287: 0-143 in 8 bits, 144-255 in 9, 256-279 in 7, 280-287 in 8.
        static let literal: [Code] = (0..<288).map { symbol in
            let code = switch symbol {
            case 0..<144: 0x30 + symbol
            case 144..<256: 0x190 + symbol - 144
            case 256..<280: symbol - 256
            default: 0xC0 + symbol - 280
            }
            let count = literalLength(symbol)
            return Code(bits: reversed(UInt32(code), count: count), count: count)
        }

        /// Distance symbols 0...29, all in 5 bits.
        static let distance: [Code] = (0..<distanceSymbolCount).map { Code(bits: reversed(UInt32($0), count: 5), count: 5) }

        /// For each match length 3...258, its literal/length symbol (257...285).
        static let lengthSymbol: [UInt16] = (0...maximumMatch).map { length in
            // 258 takes its own symbol (285, no extra bits), not 227 + 31.
            length < minimumMatch ? 0 : UInt16(257 + lengthBase.lastIndex { $0 <= length }!)
        }

        /// For each match length 3...258, its symbol's code followed by the extra bits.
        static let length: [Code] = (0...maximumMatch).map { length in
            length < minimumMatch ? Code(bits: 0, count: 0) : lengthCode(length, symbolCode: literal[Int(lengthSymbol[length])])
        }
    }

    /// A match length's code: `symbolCode`, the code of its literal/length
    /// symbol, followed by the length's extra bits.
    static func lengthCode(_ length: Int, symbolCode code: Code) -> Code {
        let index = Int(FixedCodes.lengthSymbol[length]) - 257
        return Code(bits: code.bits | UInt32(length - FixedCodes.lengthBase[index]) << code.count,
                    count: code.count + FixedCodes.lengthExtra[index])
    }
}
