import HappyCore
@testable import HappyServer
import XCTest

/// The cap on connections per client address, at accept and, behind a
/// trusted proxy, per request.
final class AddressLimitsTests: XCTestCase {
    private let proxy = "10.0.0.9"

    private func limits(cap: Int, proxies: [String] = []) -> (AddressLimits, Metrics) {
        let metrics = Metrics()
        let limits = AddressLimits(cap: cap, trustedProxies: TrustedProxies(proxies) ?? TrustedProxies(),
                                   metrics: metrics, refusals: RefusalLog(logger: Logger(level: .error), clock: ServiceClock()))
        return (limits, metrics)
    }

    /// A stand-in for a transport's socket handle (never dereferenced).
    private func socket(_ number: Int) -> SocketID {
        SocketID(value: UInt(0x1000 * number))
    }

    /// Accepts and instantiates a socket from `address`; false when refused.
    private func open(_ limits: AddressLimits, _ address: String, _ number: Int) -> Bool {
        guard limits.accept(address: address, fd: Int32(number)) else { return false }
        limits.instantiated(socket(number), fd: Int32(number))
        return true
    }

    func testCapPerAddressAtAccept() {
        let (limits, metrics) = limits(cap: 2)
        XCTAssertTrue(open(limits, "192.0.2.1", 1))
        XCTAssertTrue(open(limits, "192.0.2.1", 2))
        XCTAssertFalse(open(limits, "192.0.2.1", 3))
        XCTAssertTrue(open(limits, "192.0.2.2", 4), "another address has its own count")
        XCTAssertEqual(limits.connectionsByAddress, ["192.0.2.1": 2, "192.0.2.2": 1])
        XCTAssertEqual(metrics.connectionsRefused["perAddress"], 1)
    }

    func testDestroyedSocketsReleaseTheirPlace() {
        let (limits, _) = limits(cap: 1)
        XCTAssertTrue(open(limits, "192.0.2.1", 1))
        XCTAssertFalse(open(limits, "192.0.2.1", 2))
        limits.destroyed(socket(1))
        XCTAssertTrue(limits.connectionsByAddress.isEmpty)
        XCTAssertTrue(open(limits, "192.0.2.1", 3))
        limits.destroyed(socket(99))  // never counted: nothing changes
        XCTAssertEqual(limits.connectionsByAddress, ["192.0.2.1": 1])
    }

    func testZeroCapMeansNoCap() {
        let (limits, _) = limits(cap: 0)
        for number in 1...50 { XCTAssertTrue(open(limits, "192.0.2.1", number)) }
    }

    func testTrustedProxyConnectionsCountUnderTheForwardedClient() {
        let (limits, metrics) = limits(cap: 1, proxies: [proxy])
        XCTAssertTrue(open(limits, proxy, 1))
        XCTAssertTrue(open(limits, proxy, 2))
        XCTAssertTrue(limits.connectionsByAddress.isEmpty, "a proxy's connections are not counted at accept")

        let first = limits.admitRequest(on: socket(1), peer: proxy, forwardedFor: { "198.51.100.7" })
        XCTAssertEqual(first.client, "198.51.100.7")
        XCTAssertTrue(first.admitted)
        XCTAssertEqual(limits.connectionsByAddress, ["198.51.100.7": 1])
        XCTAssertTrue(limits.admitRequest(on: socket(1), peer: proxy, forwardedFor: { "198.51.100.7" }).admitted,
                      "the next request on the same connection is already counted")

        let second = limits.admitRequest(on: socket(2), peer: proxy, forwardedFor: { "203.0.113.1, 198.51.100.7" })
        XCTAssertEqual(second.client, "198.51.100.7", "the rightmost untrusted hop")
        XCTAssertFalse(second.admitted)
        XCTAssertEqual(metrics.connectionsRefused["perAddress"], 1)
        XCTAssertEqual(limits.clientAddress(of: socket(1), peer: proxy), "198.51.100.7")

        limits.destroyed(socket(1))
        XCTAssertTrue(limits.admitRequest(on: socket(2), peer: proxy, forwardedFor: { "198.51.100.7" }).admitted)
    }

    func testUntrustedPeersForwardedForIsIgnored() {
        let (limits, _) = limits(cap: 1, proxies: [proxy])
        XCTAssertTrue(open(limits, "192.0.2.5", 1))
        let request = limits.admitRequest(on: socket(1), peer: "192.0.2.5", forwardedFor: { "198.51.100.7" })
        XCTAssertEqual(request.client, "192.0.2.5")
        XCTAssertTrue(request.admitted)
    }

    func testServerScreensRequestsByTheForwardedClient() {
        let test = TestServer(config: TestServer.config {
            $0.trustedProxies = [self.proxy]
            $0.limits.maxConnectionsPerAddress = 1
        })
        let limits = test.server.addressLimits
        XCTAssertTrue(open(limits, proxy, 1))
        XCTAssertTrue(open(limits, proxy, 2))
        let http = test.server.http
        let first = http.screen(socket: socket(1), peer: proxy, forwardedFor: { "198.51.100.7" }, requestLineIsCut: false)
        XCTAssertEqual(first.screen, .pass)
        XCTAssertEqual(first.client, "198.51.100.7")
        let second = http.screen(socket: socket(2), peer: proxy, forwardedFor: { "198.51.100.7" }, requestLineIsCut: false)
        XCTAssertEqual(second.screen, .overAddressCap)
        XCTAssertEqual(http.upgradeRefusal(second.screen, client: second.client, path: "/ws", origin: nil)?.message,
                       "too many connections from 198.51.100.7")
        let cut = http.screen(socket: socket(1), peer: proxy, forwardedFor: { "198.51.100.7" }, requestLineIsCut: true)
        XCTAssertEqual(cut.screen, .cutRequestLine)
        XCTAssertEqual(test.metrics.connectionsRefused["requestLine"], 1)
    }
}
