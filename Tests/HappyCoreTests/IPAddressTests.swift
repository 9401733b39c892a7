import XCTest
import HappyCore

final class IPAddressTests: XCTestCase {
    func testIPv4IsReadAndWrittenAsADottedQuad() throws {
        XCTAssertEqual(try XCTUnwrap(IPAddress("192.0.2.1")).bytes, [192, 0, 2, 1])
        XCTAssertEqual(IPAddress("0.0.0.0")?.description, "0.0.0.0")
        XCTAssertEqual(IPAddress("255.255.255.255")?.description, "255.255.255.255")
        XCTAssertTrue(IPAddress("10.1.2.3")?.isIPv4 == true)
    }

    func testMalformedIPv4IsRefused() {
        for text in ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-4", "01.2.3.4", "1.2.3.4 ", " 1.2.3.4",
                     "1..3.4", "1.2.3.4.", "a.b.c.d", "1.2.3.0x4", "localhost", "1234.1.1.1", "1.2.3.4/24"] {
            XCTAssertNil(IPAddress(text), text)
        }
    }

    func testIPv6IsReadInEveryForm() throws {
        let full = try XCTUnwrap(IPAddress("2001:0db8:0000:0000:0000:ff00:0042:8329"))
        XCTAssertEqual(full.bytes, [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0x00, 0x00, 0x42, 0x83, 0x29])
        XCTAssertEqual(IPAddress("2001:db8::ff00:42:8329"), full)
        XCTAssertEqual(IPAddress("2001:DB8::FF00:42:8329"), full)
        XCTAssertEqual(IPAddress("::1")?.bytes, Array(repeating: 0, count: 15) + [1])
        XCTAssertEqual(IPAddress("::")?.bytes, Array(repeating: 0, count: 16))
        XCTAssertEqual(IPAddress("1::")?.bytes, [0, 1] + Array(repeating: 0, count: 14))
        XCTAssertEqual(IPAddress("1:2:3:4:5:6:7::")?.description, "1:2:3:4:5:6:7:0")
        XCTAssertEqual(IPAddress("64:ff9b::192.0.2.33")?.bytes.suffix(4), [192, 0, 2, 33])
        XCTAssertFalse(IPAddress("::1")?.isIPv4 ?? true)
    }

    func testMalformedIPv6IsRefused() {
        for text in [":", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "12345::1", "g::1", ":1::",
                     "1:2:3:4:5:6:7:8::", "::1.2.3", "1.2.3.4::", "::1.2.3.4:5", "fe80::1%eth0", "[::1]", "::1 "] {
            XCTAssertNil(IPAddress(text), text)
        }
    }

    func testIPv6IsWrittenInItsCanonicalForm() {
        XCTAssertEqual(IPAddress("2001:0DB8:0:0:0:0:0:1")?.description, "2001:db8::1")
        XCTAssertEqual(IPAddress("0:0:0:0:0:0:0:1")?.description, "::1")
        XCTAssertEqual(IPAddress("2001:db8:0:1:0:0:0:1")?.description, "2001:db8:0:1::1", "the longest zero run")
        XCTAssertEqual(IPAddress("2001:0:0:1:0:0:1:1")?.description, "2001::1:0:0:1:1", "the first of equal runs")
        XCTAssertEqual(IPAddress("2001:db8:0:1:1:1:1:1")?.description, "2001:db8:0:1:1:1:1:1", "one zero stays")
        XCTAssertEqual(IPAddress("::")?.description, "::")
    }

    func testIPv4MappedIPv6IsTheIPv4Address() {
        XCTAssertEqual(IPAddress("::ffff:127.0.0.1"), IPAddress("127.0.0.1"))
        XCTAssertEqual(IPAddress("::FFFF:7f00:1"), IPAddress("127.0.0.1"))
        XCTAssertEqual(IPAddress("::ffff:192.0.2.1")?.description, "192.0.2.1")
        XCTAssertNotEqual(IPAddress("::127.0.0.1"), IPAddress("127.0.0.1"), "only the ::ffff: prefix maps")
    }
}
