import XCTest
import HappyCore

final class JSONParserTests: XCTestCase {
    private func parse(_ text: String, maxDepth: Int = JSONParser.defaultMaxDepth) -> JSONValue? {
        try? JSONParser.parse(text, maxDepth: maxDepth)
    }

    private func failure(_ text: String) -> JSONParseError? {
        failure(Array(text.utf8))
    }

    private func failure(_ bytes: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) -> JSONParseError? {
        do {
            let value = try JSONParser.parse(bytes, maxDepth: maxDepth)
            XCTFail("expected a parse error, got \(value)")
            return nil
        } catch {
            return error
        }
    }

    private func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    // MARK: values

    func testScalars() {
        XCTAssertEqual(parse("null"), .null)
        XCTAssertEqual(parse("true"), .bool(true))
        XCTAssertEqual(parse("false"), .bool(false))
        XCTAssertEqual(parse("42"), .number(42))
        XCTAssertEqual(parse("\"hi\""), .string("hi"))
    }

    func testObjectKeepsDocumentOrderAndLastDuplicateWins() throws {
        let value = try XCTUnwrap(parse(#"{"b":1,"a":[true,null],"b":2}"#))
        guard case .object(let members) = value else { return XCTFail("not an object: \(value)") }
        XCTAssertEqual(members.map(\.key), ["b", "a", "b"])
        XCTAssertEqual(value["b"], .number(2))
        XCTAssertEqual(value["a"], .array([.bool(true), .null]))
        XCTAssertNil(value["missing"])
        XCTAssertNil(JSONValue.array([])["a"])
    }

    func testWhitespaceAroundAndInsideValues() {
        let text = " \t\r\n{ \"a\" :\n[ 1 ,\t2 ] , \"b\"\r: \"x y\" }\n\t "
        XCTAssertEqual(parse(text), .object([("a", .array([.number(1), .number(2)])), ("b", .string("x y"))]))
    }

    func testNonJSONWhitespaceIsRejected() {
        XCTAssertNotNil(failure("\u{0C}1"))
        XCTAssertNotNil(failure("\u{A0}1"))
        XCTAssertNotNil(failure("[1,\u{0B}2]"))
    }

    func testEmptyAndWhitespaceOnlyTextIsRejected() {
        XCTAssertEqual(failure("")?.message, "unexpected end of text")
        XCTAssertEqual(failure(" \n ")?.message, "unexpected end of text")
    }

    func testTrailingTextIsRejected() {
        XCTAssertEqual(failure("1 2")?.message, "unexpected text after the JSON value")
        XCTAssertEqual(failure("{} x")?.offset, 3)
    }

    func testTrailingAndMisplacedCommasAreRejected() {
        XCTAssertEqual(failure("[1,]")?.offset, 3)
        XCTAssertNotNil(failure(#"{"a":1,}"#))
        XCTAssertNotNil(failure("[,1]"))
        XCTAssertNotNil(failure("{,}"))
        XCTAssertNotNil(failure("[1 2]"))
        XCTAssertNotNil(failure(#"{"a":1 "b":2}"#))
    }

    func testNonStandardLiteralsAreRejected() {
        for text in ["NaN", "Infinity", "-Infinity", "[NaN]", "undefined", "tru", "nul", "True", "'a'", "// c\n1", "/* c */1"] {
            XCTAssertNotNil(failure(text), text)
        }
    }

    func testTruncatedTextIsRejected() {
        for text in ["{", "[1", #"{"a""#, #"{"a":"#, #"{"a":1"#, #""abc"#, #""a\"#, #""\u12"#, "-", "1e", "1."] {
            XCTAssertNotNil(failure(text), text)
        }
    }

    // MARK: numbers

    func testNumberForms() {
        XCTAssertEqual(parse("0"), .number(0))
        XCTAssertEqual(parse("-7"), .number(-7))
        XCTAssertEqual(parse("0.5"), .number(0.5))
        XCTAssertEqual(parse("-0.25"), .number(-0.25))
        XCTAssertEqual(parse("1e3"), .number(1000))
        XCTAssertEqual(parse("1E+3"), .number(1000))
        XCTAssertEqual(parse("2.5e-1"), .number(0.25))
        XCTAssertEqual(parse("80.0"), .number(80))
        XCTAssertEqual(parse("123456789012345"), .number(123_456_789_012_345))
        XCTAssertEqual(parse("12345678901234567890"), .number(12_345_678_901_234_567_168))
    }

    func testLeadingZerosAreRejected() {
        XCTAssertNotNil(failure("01"))
        XCTAssertNotNil(failure("-01"))
        XCTAssertNotNil(failure("00"))
        XCTAssertNotNil(failure("[007]"))
        XCTAssertEqual(parse("0.01"), .number(0.01))
    }

    func testMalformedNumbersAreRejected() {
        for text in [".5", "+1", "1.e5", "1e+", "--1", "-a", "0x10", "1_000"] {
            XCTAssertNotNil(failure(text), text)
        }
    }

    func testHugeNumbersBecomeInfinity() {
        XCTAssertEqual(parse("1e400"), .number(.infinity))
        XCTAssertEqual(parse("-1e400"), .number(-.infinity))
        XCTAssertEqual(parse("1e-400"), .number(0))
    }

    // MARK: strings

    func testSimpleEscapes() {
        XCTAssertEqual(parse(#""\"\\\/\b\f\n\r\t""#), .string("\"\\/\u{08}\u{0C}\n\r\t"))
        XCTAssertEqual(parse(#""a\u0041\u00e9\u00E9""#), .string("aAéé"))
        XCTAssertEqual(parse(#""\u0000""#), .string("\u{0}"))
    }

    func testSurrogatePairEscapes() {
        XCTAssertEqual(parse(#""\uD83D\uDE00""#), .string("😀"))
        XCTAssertEqual(parse(#""x\ud834\udd1ey""#), .string("x𝄞y"))
    }

    func testLoneSurrogatesAreRejected() {
        XCTAssertEqual(failure(#""\uD83D""#)?.message, "unpaired surrogate in \\u escape")
        XCTAssertEqual(failure(#""\uDE00""#)?.message, "unpaired surrogate in \\u escape")
        XCTAssertNotNil(failure(#""\uD83Dx""#))
        XCTAssertNotNil(failure(#""\uD83D\u0041""#))
        XCTAssertNotNil(failure(#""\uD83D\uD83D""#))
        XCTAssertNotNil(failure(#""\uD83D\n""#))
    }

    func testInvalidEscapesAreRejected() {
        XCTAssertEqual(failure(#""\x""#)?.message, "invalid escape")
        XCTAssertEqual(failure(#""\u00G0""#)?.message, "invalid \\u escape")
        XCTAssertNotNil(failure(#""\U0041""#))
    }

    func testRawControlCharactersAreRejected() {
        XCTAssertEqual(failure("\"a\nb\"")?.message, "control character in string")
        XCTAssertEqual(failure("\"\\n\tb\"")?.message, "control character in string")
        XCTAssertEqual(parse("\"\u{7F}\""), .string("\u{7F}"))
    }

    func testRawUTF8IsAccepted() {
        XCTAssertEqual(parse("\"héllo wörld 😀 你好\""), .string("héllo wörld 😀 你好"))
        XCTAssertEqual(parse("\"\\t😀\""), .string("\t😀"))
    }

    func testInvalidUTF8IsRejected() {
        let quote = UInt8(ascii: "\"")
        XCTAssertEqual(failure([quote, 0xFF, quote])?.message, "invalid UTF-8 in string")
        XCTAssertNotNil(failure([quote, 0xC0, 0x80, quote]), "overlong encoding")
        XCTAssertNotNil(failure([quote, 0xED, 0xA0, 0x80, quote]), "encoded surrogate")
        XCTAssertNotNil(failure([quote, 0xE2, 0x82, quote]), "truncated sequence")
        XCTAssertNotNil(failure([quote, UInt8(ascii: "\\"), UInt8(ascii: "n"), 0xFF, quote]), "after an escape")
        XCTAssertNotNil(failure([0xEF, 0xBB, 0xBF, UInt8(ascii: "1")]), "byte order mark")
    }

    // MARK: depth

    func testDefaultDepthLimitIs32() {
        XCTAssertEqual(JSONParser.defaultMaxDepth, 32)
        XCTAssertNotNil(parse(nested(32)))
        XCTAssertEqual(failure(nested(33))?.message, "nesting deeper than 32")
        XCTAssertNotNil(parse(String(repeating: #"{"a":"#, count: 32) + "1" + String(repeating: "}", count: 32)))
        XCTAssertNotNil(failure(String(repeating: #"{"a":"#, count: 33) + "1" + String(repeating: "}", count: 33)))
    }

    func testMixedNestingCountsEveryLevel() {
        let sixteenPairs = String(repeating: #"{"a":["#, count: 16) + String(repeating: "]}", count: 16)
        XCTAssertNotNil(parse(sixteenPairs))
        XCTAssertNotNil(failure("[" + sixteenPairs + "]"))
    }

    func testCustomDepthLimit() {
        XCTAssertEqual(parse("[]", maxDepth: 1), .array([]))
        XCTAssertEqual(parse("1", maxDepth: 0), .number(1))
        XCTAssertNil(parse("[[]]", maxDepth: 1))
        XCTAssertNotNil(failure(Array("[[[1]]]".utf8), maxDepth: 2))
    }

    func testDeepHostileInputFailsWithoutCrashing() {
        XCTAssertNotNil(failure(String(repeating: "[", count: 100_000)))
    }
}
