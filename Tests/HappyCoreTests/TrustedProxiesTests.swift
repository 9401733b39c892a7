import XCTest
import HappyCore

final class TrustedProxiesTests: XCTestCase {
    private let proxies = TrustedProxies(["10.0.0.1", "10.0.0.2", "2001:db8::10"])!

    func testAnUntrustedPeerIsTheClientWhateverItForwards() {
        XCTAssertEqual(proxies.clientAddress(peer: "192.0.2.9", forwardedFor: "198.51.100.7"), "192.0.2.9")
        XCTAssertEqual(TrustedProxies().clientAddress(peer: "10.0.0.1", forwardedFor: "198.51.100.7"), "10.0.0.1",
                       "nobody is trusted by default")
    }

    func testATrustedPeerNamesTheClient() {
        XCTAssertEqual(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: "198.51.100.7"), "198.51.100.7")
        XCTAssertEqual(proxies.clientAddress(peer: "2001:db8:0:0::10", forwardedFor: "2001:DB8::7"), "2001:db8::7",
                       "IPv6 peers match in any spelling; the client is written canonically")
        XCTAssertEqual(proxies.clientAddress(peer: "::ffff:10.0.0.1", forwardedFor: "198.51.100.7"), "198.51.100.7",
                       "an IPv4 proxy seen through a dual-stack socket")
    }

    func testTheClientIsTheLastHopThatIsNotATrustedProxy() {
        XCTAssertEqual(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: "203.0.113.5, 198.51.100.7, 10.0.0.2"),
                       "198.51.100.7", "trusted hops on the right are skipped; what the client wrote on the left is not read")
        XCTAssertEqual(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: "198.51.100.7,10.0.0.2,10.0.0.1"),
                       "198.51.100.7")
        XCTAssertEqual(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: "10.0.0.2, 10.0.0.1"), "10.0.0.2",
                       "all hops trusted: the leftmost")
        XCTAssertEqual(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: "garbage, 198.51.100.7"), "198.51.100.7",
                       "entries left of the client are never read")
    }

    func testAMissingEmptyOrMalformedHeaderIsAnUnknownClientNeverTheProxy() {
        for header in [nil, "", "   ", ",", "198.51.100.7,", "198.51.100.7, unknown", "unknown", "example.com",
                       "203.0.113.9, garbage", "198.51.100.7 203.0.113.5", "10.0.0.0/8", "[2001:db8::7",
                       "198.51.100.7:99999"] {
            let client = proxies.clientAddress(peer: "10.0.0.1", forwardedFor: header)
            XCTAssertEqual(client, TrustedProxies.unknownClient, header ?? "nil")
            XCTAssertNil(IPAddress(client), "an unknown client is no address, so never loopback")
        }
        let sameHost = TrustedProxies([IPAddress("127.0.0.1")!])
        XCTAssertEqual(sameHost.clientAddress(peer: "127.0.0.1", forwardedFor: nil), TrustedProxies.unknownClient,
                       "a same-host proxy's request without the header is not from loopback")
    }

    func testHopsWithPortsAreRead() {
        XCTAssertEqual(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: "198.51.100.7:4711"), "198.51.100.7")
        XCTAssertEqual(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: "[2001:db8::7]:4711"), "2001:db8::7")
        XCTAssertEqual(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: "[2001:db8::7]"), "2001:db8::7")
        XCTAssertEqual(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: "\t198.51.100.7 ,\t10.0.0.2 "), "198.51.100.7",
                       "spaces and tabs around entries")
    }

    func testTrustIsByAddress() {
        XCTAssertTrue(proxies.trusts("10.0.0.2"))
        XCTAssertTrue(proxies.trusts("2001:db8::10"))
        XCTAssertFalse(proxies.trusts("10.0.0.3"))
        XCTAssertFalse(proxies.trusts("?"), "lws's text for an unknown peer")
        XCTAssertNil(TrustedProxies(["10.0.0.1", "proxy.local"]), "every entry must be an address")
        XCTAssertTrue(TrustedProxies([])!.isEmpty)
    }
}
