import Foundation
import XCTest
import HappyCore

/// The files that follow the action table: the page's protocol.js and the fuzzer's dictionary
/// (written from it by `make protocol-js`), the protocol's own tables (PROTOCOL.md sections 3
/// and 4, kept by hand), and the sources, which name each action only through the table.
final class ActionTableFilesTests: XCTestCase {
    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func read(_ path: String) throws -> String {
        try String(contentsOf: Self.repository.appendingPathComponent(path), encoding: .utf8)
    }

    // MARK: written from the table

    func testProtocolScriptIsTheTables() throws {
        let file = try read("web/js/protocol.js")
        let table = ProtocolScript.render()
        guard file != table else { return }
        let fileLines = file.split(separator: "\n", omittingEmptySubsequences: false)
        let tableLines = table.split(separator: "\n", omittingEmptySubsequences: false)
        let first = zip(fileLines, tableLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(fileLines.count, tableLines.count)
        XCTFail("""
            web/js/protocol.js is not what the action table gives: run `make protocol-js`.
            First difference, line \(first + 1):
              file:  \(first < fileLines.count ? String(fileLines[first]) : "(end of file)")
              table: \(first < tableLines.count ? String(tableLines[first]) : "(end of file)")
            """)
    }

    func testFuzzDictionaryHasTheTablesActions() throws {
        let file = try read("Fuzz/protocol.dict")
        guard let expected = ProtocolScript.fuzzDictionary(updating: file) else {
            return XCTFail("Fuzz/protocol.dict lacks the lines that mark the action table's part: \(ProtocolScript.fuzzDictionaryMarkers)")
        }
        XCTAssertEqual(file, expected, "Fuzz/protocol.dict does not list the action table's names: run `make protocol-js`")
    }

    // MARK: the sources

    /// Each action's wire name is written once in Sources, in the table: everything else reads it there.
    func testEachWireNameIsWrittenOnceInTheSources() throws {
        let sources = Self.repository.appendingPathComponent("Sources")
        guard let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else {
            return XCTFail("cannot list \(sources.path)")
        }
        var places: [String: [String]] = Dictionary(uniqueKeysWithValues: Action.wireNames.map { ($0, []) })
        for case let file as URL in files where file.pathExtension == "swift" {
            let path = String(file.path.dropFirst(Self.repository.path.count + 1))
            for literal in SwiftStringLiterals.strings(in: try String(contentsOf: file, encoding: .utf8)) {
                for name in Action.wireNames where Self.occurrences(of: name, in: literal) > 0 {
                    places[name, default: []].append(path)
                }
            }
        }
        let table = "Sources/HappyCore/Scene/ActionTable.swift"
        for name in Action.wireNames {
            XCTAssertEqual(places[name], [table], "\"\(name)\" must be written once, in \(table), and read from there elsewhere")
        }
    }

    func testTheSourceScannerFindsLiteralsOnly() {
        let source = ##"""
            // "face.pinch" in a comment
            /* "face.pinch" /* nested */ still a comment */
            let a = "x\(f("in"))y \"q\"", b = #"raw "\#(g)" r"#
            let c = """
                multi
                line
                """
            """##
        XCTAssertEqual(SwiftStringLiterals.strings(in: source), ["in", "xy \"q\"", "raw \"\" r", "    multi\n    line\n    "])
        XCTAssertEqual(Self.occurrences(of: "dragon.back", in: #""action":"dragon.back","#), 1)
        XCTAssertEqual(Self.occurrences(of: "dragon.back", in: "dragon.backward dragon.back2"), 0)
    }

    /// How often `name` stands in `text` as a whole name (not as part of a longer one).
    private static func occurrences(of name: String, in text: String) -> Int {
        let bytes = Array(text.utf8), target = Array(name.utf8)
        func isNamePart(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        var count = 0
        var index = 0
        while index + target.count <= bytes.count {
            if bytes[index..<index + target.count].elementsEqual(target),
               index == 0 || !isNamePart(bytes[index - 1]),
               index + target.count == bytes.count || !isNamePart(bytes[index + target.count]) {
                count += 1
            }
            index += 1
        }
        return count
    }

    // MARK: the protocol's tables

    /// The rows of the first Markdown table after `heading` in PROTOCOL.md's section `section`,
    /// header and rule left out, cells trimmed.
    private func protocolTable(section: String, after heading: String? = nil) throws -> [[String]] {
        let text = try read("docs/PROTOCOL.md")
        guard let start = text.range(of: "\n## \(section) ") else { throw TableError("no section \(section)") }
        var body = text[start.upperBound...]
        if let end = body.range(of: "\n## ") { body = body[..<end.lowerBound] }
        if let heading {
            guard let found = body.range(of: heading) else { throw TableError("no \(heading) in section \(section)") }
            body = body[found.upperBound...]
        }
        var rows: [[String]] = []
        for line in body.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("|") else {
                if rows.isEmpty { continue } else { break }
            }
            let cells = trimmed.dropFirst().dropLast().split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            rows.append(cells)
        }
        return Array(rows.dropFirst(2))
    }

    private struct TableError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Section 4's table of actions names every action of the table, with its parameters, and no other.
    func testProtocolDocumentListsTheTablesActions() throws {
        let rows = try protocolTable(section: "4.")
        let documented = rows.map { $0[0] }
        XCTAssertEqual(Set(documented).subtracting(Action.wireNames), [], "PROTOCOL.md section 4 lists actions the table lacks")
        for kind in Action.Kind.allCases {
            let spec = kind.spec
            guard let row = rows.first(where: { $0[0] == spec.wireName }), row.count >= 3 else {
                XCTFail("PROTOCOL.md section 4 does not list \(spec.wireName)")
                continue
            }
            let parameters = row[1].replacingOccurrences(of: "−", with: "-"), effect = row[2]
            if spec.parameters.isEmpty {
                XCTAssertEqual(parameters, "—", "\(spec.wireName) takes no parameters")
            }
            for parameter in spec.parameters {
                XCTAssertTrue(parameters.contains("`\(parameter.name)`"), "\(spec.wireName): \(parameter.name) in \(parameters)")
                let kindWord: String
                switch parameter.type {
                case .integer: kindWord = "integer"
                case .number: kindWord = parameter.range == nil ? "number" : ".."
                case .positiveNumber: kindWord = "number > 0"
                case .boolean: kindWord = "boolean"
                case .color: kindWord = "`#rgb`"
                }
                XCTAssertTrue(parameters.contains(kindWord), "\(spec.wireName): \(parameter.name) is \(parameter.type), says \(parameters)")
                if let range = parameter.range {
                    let bounds = "\(Int(range.lowerBound))..\(Int(range.upperBound))"
                    XCTAssertTrue(parameters.contains(bounds), "\(spec.wireName): \(parameter.name) within \(bounds), says \(parameters)")
                }
            }
            XCTAssertEqual(parameters.contains("at least one of"), spec.needsOneParameter, "\(spec.wireName): \(parameters)")
            XCTAssertEqual(effect.contains("`admin`"), spec.requiresAdmin, "\(spec.wireName) and the admin role: \(effect)")
        }
    }

    /// Section 3's table of events names each action under the event the table gives it.
    func testProtocolDocumentNamesEachActionsEvent() throws {
        let rows = try protocolTable(section: "3.", after: "Delegate-style event names")
        var documented: [String: String] = [:]
        for row in rows where row.count >= 2 {
            let names = row[0].split(separator: "/").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["`"]) }
            let causes = (row[1].components(separatedBy: " — ").first ?? "").split(separator: "/")
                .map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            XCTAssertTrue(names.count == 1 || names.count == causes.count, "PROTOCOL.md section 3: \(row)")
            for (index, name) in names.enumerated() {
                XCTAssertNotNil(EventName(rawValue: name), "PROTOCOL.md section 3 names an event HappyCore lacks: \(name)")
                for action in names.count == 1 ? causes.flatMap({ $0 }) : causes[index] { documented[action] = name }
            }
        }
        for kind in Action.Kind.allCases {
            XCTAssertEqual(documented[kind.spec.wireName], kind.spec.event.rawValue,
                           "PROTOCOL.md section 3: the event of \(kind.spec.wireName)")
        }
        XCTAssertEqual(Set(documented.keys).subtracting(Action.wireNames), [], "PROTOCOL.md section 3 names unknown actions")
    }
}

/// The string literals of Swift source text, for the test above: their text without
/// interpolations (whose own literals are listed too); comments are skipped.
enum SwiftStringLiterals {
    static func strings(in source: String) -> [String] {
        var scanner = Scanner(bytes: Array(source.utf8))
        scanner.code(untilUnbalancedParenthesis: false)
        return scanner.found
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var found: [String] = []

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        private func byte(at offset: Int) -> UInt8? {
            index + offset < bytes.count ? bytes[index + offset] : nil
        }

        /// Reads code up to the end, or up to the `)` closing an interpolation.
        mutating func code(untilUnbalancedParenthesis: Bool) {
            var depth = 0
            while index < bytes.count {
                switch (bytes[index], byte(at: 1)) {
                case (UInt8(ascii: "/"), UInt8(ascii: "/")?):
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                case (UInt8(ascii: "/"), UInt8(ascii: "*")?):
                    blockComment()
                case (UInt8(ascii: "#"), _), (UInt8(ascii: "\""), _):
                    var hashes = 0
                    while byte(at: hashes) == UInt8(ascii: "#") { hashes += 1 }
                    if byte(at: hashes) == UInt8(ascii: "\"") {
                        index += hashes
                        string(hashes: hashes)
                    } else {
                        index += max(1, hashes)
                    }
                case (UInt8(ascii: "("), _):
                    depth += 1
                    index += 1
                case (UInt8(ascii: ")"), _):
                    index += 1
                    if depth == 0 && untilUnbalancedParenthesis { return }
                    depth -= 1
                default:
                    index += 1
                }
            }
        }

        private mutating func blockComment() {
            var depth = 0
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "/"), byte(at: 1) == UInt8(ascii: "*") {
                    depth += 1
                    index += 2
                } else if bytes[index] == UInt8(ascii: "*"), byte(at: 1) == UInt8(ascii: "/") {
                    depth -= 1
                    index += 2
                    if depth == 0 { return }
                } else {
                    index += 1
                }
            }
        }

        /// Reads a literal from its opening quote, `hashes` `#` around it.
        private mutating func string(hashes: Int) {
            let quote = UInt8(ascii: "\"")
            let multiline = byte(at: 1) == quote && byte(at: 2) == quote
            let quotes = multiline ? 3 : 1
            index += quotes
            if multiline {
                // The text starts on the line after the opening quotes.
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                index += 1
            }
            var text: [UInt8] = []
            func closes(_ scanner: Scanner) -> Bool {
                (0..<quotes).allSatisfy { scanner.byte(at: $0) == quote }
                    && (0..<hashes).allSatisfy { scanner.byte(at: quotes + $0) == UInt8(ascii: "#") }
            }
            while index < bytes.count {
                if closes(self) {
                    index += quotes + hashes
                    found.append(String(decoding: text, as: UTF8.self))
                    return
                }
                if bytes[index] == UInt8(ascii: "\\"), (0..<hashes).allSatisfy({ byte(at: 1 + $0) == UInt8(ascii: "#") }),
                   let escaped = byte(at: 1 + hashes) {
                    index += 2 + hashes
                    if escaped == UInt8(ascii: "(") {
                        code(untilUnbalancedParenthesis: true)
                    } else {
                        text.append(escaped)
                    }
                    continue
                }
                text.append(bytes[index])
                index += 1
            }
        }
    }
}
