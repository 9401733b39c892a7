import XCTest
import HappyCore

final class JSONWriterTests: XCTestCase {
    private func written(_ build: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        build(&writer)
        return writer.text
    }

    private func numberText(_ value: Double) -> String {
        written { $0.number(value) }
    }

    private func stringText(_ value: String) -> String {
        written { $0.string(value) }
    }

    // MARK: structure

    func testCompactStructureWithCommasInTheRightPlaces() {
        let text = written { w in
            w.beginObject()
            w.key("a"); w.int(1)
            w.key("b")
            w.beginArray()
            w.int(1); w.string("x")
            w.beginObject(); w.endObject()
            w.beginArray(); w.endArray()
            w.endArray()
            w.key("c"); w.null()
            w.key("d"); w.bool(true)
            w.key("e"); w.bool(false)
            w.endObject()
        }
        XCTAssertEqual(text, #"{"a":1,"b":[1,"x",{},[]],"c":null,"d":true,"e":false}"#)
    }

    func testStringKeysAreEscaped() {
        let text = written { w in
            w.beginObject()
            w.key("we\"ird\\key" as String); w.int(0)
            w.endObject()
        }
        XCTAssertEqual(text, #"{"we\"ird\\key":0}"#)
    }

    func testRawIsCopiedVerbatimAndSeparated() {
        let text = written { w in
            w.beginArray()
            w.int(1)
            w.raw(Array(#"{"x":[2]}"#.utf8))
            w.int(3)
            w.endArray()
        }
        XCTAssertEqual(text, #"[1,{"x":[2]},3]"#)
    }

    func testValueWritesAParsedTreeBackInOrder() throws {
        let source = #"{"z":[1,2.5,"s",true,false,null,{}],"a":{"b":[]}}"#
        let value = try JSONParser.parse(source)
        XCTAssertEqual(written { $0.value(value) }, source)
    }

    // MARK: numbers

    func testIntegralNumbersPrintWithoutFraction() {
        XCTAssertEqual(numberText(10.0), "10")
        XCTAssertEqual(numberText(-3.0), "-3")
        XCTAssertEqual(numberText(0.0), "0")
        XCTAssertEqual(numberText(-0.0), "0")
        XCTAssertEqual(numberText(375), "375")
        XCTAssertEqual(numberText(8_999_999_999_999_998), "8999999999999998")
    }

    func testFractionsUseTheShortestRoundTrippingForm() {
        XCTAssertEqual(numberText(0.6), "0.6")
        XCTAssertEqual(numberText(0.9), "0.9")
        XCTAssertEqual(numberText(-0.25), "-0.25")
        XCTAssertEqual(numberText(0.1 + 0.2), "0.30000000000000004")
        XCTAssertEqual(numberText(2.5e-7), "2.5e-07")
    }

    func testLargeNumbersUseExponentForm() {
        XCTAssertEqual(numberText(1e16), "1e+16")
        XCTAssertEqual(numberText(-1e300), "-1e+300")
    }

    func testNonFiniteNumbersBecomeNull() {
        XCTAssertEqual(numberText(.infinity), "null")
        XCTAssertEqual(numberText(-.infinity), "null")
        XCTAssertEqual(numberText(.nan), "null")
    }

    func testIntegers() {
        XCTAssertEqual(written { $0.int(0) }, "0")
        XCTAssertEqual(written { $0.int(-42) }, "-42")
        XCTAssertEqual(written { $0.int(Int.max) }, "9223372036854775807")
        XCTAssertEqual(written { $0.int(Int.min) }, "-9223372036854775808")
        XCTAssertEqual(written { $0.uint(131) }, "131")
        XCTAssertEqual(written { $0.uint(UInt64.max) }, "18446744073709551615")
    }

    func testEveryPrintedNumberParsesBackToTheSameValue() throws {
        let values: [Double] = [0, 1, -1, 0.1, 0.6, 1.8, 2.7, 1e-7, 1e16, 123.456, -9e15, 8.5e15,
                                Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, 1.0 / 3.0]
        for value in values {
            let text = numberText(value)
            XCTAssertEqual(try JSONParser.parse(text), .number(value), text)
        }
    }

    // MARK: strings

    func testQuotesAndBackslashesAreEscaped() {
        XCTAssertEqual(stringText(#"a"b\c"#), #""a\"b\\c""#)
        XCTAssertEqual(stringText("/"), #""/""#)
    }

    func testControlCharactersAreEscaped() {
        XCTAssertEqual(stringText("\n\r\t"), #""\n\r\t""#)
        XCTAssertEqual(stringText("\u{0}\u{1}\u{8}\u{C}\u{1F}\u{7F}"), #""\u0000\u0001\u0008\u000c\u001f\u007f""#)
    }

    func testNonASCIIIsWrittenAsRawUTF8() {
        var writer = JSONWriter()
        writer.string("é😀")
        XCTAssertEqual(Array(writer.payload), [0x22, 0xC3, 0xA9, 0xF0, 0x9F, 0x98, 0x80, 0x22])
        XCTAssertEqual(writer.text, "\"é😀\"")
    }

    func testEveryASCIICharacterAndSomeUnicodeRoundTrip() throws {
        var text = String((0..<0x80).map { Character(Unicode.Scalar(UInt8($0))) })
        text += "é ü 😀 你好 \u{2028}\u{FEFF}"
        XCTAssertEqual(try JSONParser.parse(stringText(text)), .string(text))
    }

    // MARK: headroom

    func testHeadroomIsZeroFilledAndExcludedFromPayload() {
        var writer = JSONWriter(headroom: 10)
        writer.beginObject()
        writer.key("k"); writer.int(7)
        writer.endObject()
        XCTAssertEqual(writer.headroom, 10)
        XCTAssertEqual(writer.bytes.count, 10 + 7)
        XCTAssertEqual(Array(writer.bytes[0..<10]), [UInt8](repeating: 0, count: 10))
        XCTAssertEqual(Array(writer.payload), Array(#"{"k":7}"#.utf8))
        XCTAssertEqual(writer.payloadCount, 7)
        XCTAssertEqual(writer.text, #"{"k":7}"#)
    }

    func testNoHeadroomByDefault() {
        var writer = JSONWriter()
        writer.int(5)
        XCTAssertEqual(writer.headroom, 0)
        XCTAssertEqual(writer.bytes, [UInt8(ascii: "5")])
        XCTAssertEqual(writer.payloadCount, 1)
    }

    func testEmptyWriterHasEmptyPayload() {
        let writer = JSONWriter(headroom: 4)
        XCTAssertEqual(writer.bytes, [0, 0, 0, 0])
        XCTAssertTrue(writer.payload.isEmpty)
        XCTAssertEqual(writer.text, "")
    }
}
