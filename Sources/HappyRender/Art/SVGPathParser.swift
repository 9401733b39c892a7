/// Parses the subset of SVG path data the art uses: absolute `M L H V C Q Z`,
/// numbers separated by spaces or commas. Browsers draw the same string with
/// `new Path2D(d)`, so both sides read one definition.
enum SVGPathParser {
    static func parse(_ text: String) throws(SceneArtError) -> [PathCommand] {
        var scanner = Scanner(Array(text.utf8))
        var commands: [PathCommand] = []
        var current = (x: 0.0, y: 0.0)
        var hasStart = false
        while let letter = scanner.nextCommand() {
            func numbers(_ count: Int) throws(SceneArtError) -> [Double] {
                var values: [Double] = []
                for _ in 0..<count {
                    guard let value = scanner.nextNumber() else {
                        throw SceneArtError("path command \(Character(Unicode.Scalar(letter))) needs \(count) numbers")
                    }
                    values.append(value)
                }
                return values
            }
            if letter != UInt8(ascii: "M") && !hasStart {
                throw SceneArtError("a path must start with M")
            }
            // Like SVG, a command letter may be followed by several groups of
            // numbers; after M the further pairs are lines.
            var firstGroup = true
            repeat {
                defer { firstGroup = false }
                switch letter {
                case UInt8(ascii: "M"):
                    let p = try numbers(2)
                    commands.append(firstGroup ? .move(x: p[0], y: p[1]) : .line(x: p[0], y: p[1]))
                    hasStart = true
                    current = (p[0], p[1])
                case UInt8(ascii: "L"):
                    let p = try numbers(2)
                    commands.append(.line(x: p[0], y: p[1]))
                    current = (p[0], p[1])
                case UInt8(ascii: "H"):
                    let p = try numbers(1)
                    commands.append(.line(x: p[0], y: current.y))
                    current.x = p[0]
                case UInt8(ascii: "V"):
                    let p = try numbers(1)
                    commands.append(.line(x: current.x, y: p[0]))
                    current.y = p[0]
                case UInt8(ascii: "C"):
                    let p = try numbers(6)
                    commands.append(.cubic(x1: p[0], y1: p[1], x2: p[2], y2: p[3], x: p[4], y: p[5]))
                    current = (p[4], p[5])
                case UInt8(ascii: "Q"):
                    let p = try numbers(4)
                    commands.append(.quad(cx: p[0], cy: p[1], x: p[2], y: p[3]))
                    current = (p[2], p[3])
                case UInt8(ascii: "Z"):
                    commands.append(.close)
                default:
                    throw SceneArtError("unsupported path command \(Character(Unicode.Scalar(letter))) "
                        + "(use absolute M L H V C Q Z)")
                }
            } while letter != UInt8(ascii: "Z") && scanner.startsWithNumber()
        }
        guard scanner.isAtEnd else { throw SceneArtError("unexpected text in path at byte \(scanner.offset)") }
        guard !commands.isEmpty else { throw SceneArtError("empty path") }
        return commands
    }

    private struct Scanner {
        let bytes: [UInt8]
        var offset = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool {
            mutating get { skipSeparators(); return offset >= bytes.count }
        }

        mutating func skipSeparators() {
            while offset < bytes.count,
                  bytes[offset] == 0x20 || bytes[offset] == 0x2C || bytes[offset] == 0x0A
                    || bytes[offset] == 0x09 || bytes[offset] == 0x0D {
                offset += 1
            }
        }

        mutating func nextCommand() -> UInt8? {
            skipSeparators()
            guard offset < bytes.count else { return nil }
            let byte = bytes[offset]
            guard (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) else { return nil }
            offset += 1
            return byte
        }

        mutating func startsWithNumber() -> Bool {
            skipSeparators()
            guard offset < bytes.count else { return false }
            let byte = bytes[offset]
            return (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "+")
        }

        mutating func nextNumber() -> Double? {
            guard startsWithNumber() else { return nil }
            let start = offset
            offset += 1
            while offset < bytes.count {
                let byte = bytes[offset]
                let isExponentSign = (byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+"))
                    && (bytes[offset - 1] == UInt8(ascii: "e") || bytes[offset - 1] == UInt8(ascii: "E"))
                guard (0x30...0x39).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
                        || byte == UInt8(ascii: "E") || isExponentSign else { break }
                offset += 1
            }
            return Double(String(decoding: bytes[start..<offset], as: UTF8.self))
        }
    }
}
