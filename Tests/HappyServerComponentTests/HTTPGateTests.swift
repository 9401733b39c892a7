import HappyCore
@testable import HappyServer
import XCTest

/// Request framing, each address's HTTP rate, and what a server beyond loopback says at start.
final class HTTPGateTests: XCTestCase {
    private func head(_ method: String = "POST", lengths: [String] = [], encoding: String? = nil) -> HTTPRequestHead {
        HTTPRequestHead(method: method, path: "/api/intent", query: [:], contentLengths: lengths, transferEncoding: encoding)
    }

    func testFramingThatTwoReadersCouldTakeTwoWaysIsRefused() {
        XCTAssertNil(HTTPGate.framingProblem(head(lengths: ["27"])))
        XCTAssertNil(HTTPGate.framingProblem(head("GET")))
        XCTAssertNil(HTTPGate.framingProblem(head("DELETE", lengths: ["2"])))
        for (request, words) in [(head(lengths: ["5", "100"]), "more than once"), (head(lengths: ["5, 7"]), "one decimal number"),
                                 (head(lengths: ["+5"]), "one decimal number"), (head(lengths: [""]), "one decimal number"),
                                 (head(lengths: ["5"], encoding: "chunked"), "Transfer-Encoding"),
                                 (head(encoding: "chunked"), "Transfer-Encoding"), (head("GET", lengths: ["40"]), "carries no body")] {
            XCTAssertTrue(HTTPGate.framingProblem(request)?.contains(words) == true, "\(request)")
        }
    }

    func testEachAddressKeepsToItsRateAndBigFramesCostMore() {
        var limits = HappyConfig().limits
        limits.httpPerSecond = 10
        limits.httpBurst = 20
        var limiter = HTTPRateLimiter(limits: limits)
        let frame = HTTPRateLimiter.cost(method: "GET", path: "/frame/scene.png", query: ["w": "2048", "h": "2048"], isRoute: true)
        XCTAssertEqual(frame, 65)
        XCTAssertLessThan(HTTPRateLimiter.cost(method: "GET", path: "/app.js", query: [:], isRoute: false), 1)
        XCTAssertNil(limiter.take(frame, for: "a", now: 0), "a cost over the burst takes a full bucket")
        XCTAssertEqual(limiter.take(1, for: "a", now: 0), 1, "then it waits")
        XCTAssertNil(limiter.take(1, for: "b", now: 0), "others are not held up")
        XCTAssertEqual(limiter.take(20, for: "a", now: 1), 1)
        XCTAssertNil(limiter.take(20, for: "a", now: 2.1))
    }

    func testListeningBeyondLoopbackSaysWhatIsExposed() {
        var config = HappyConfig()
        XCTAssertEqual(ExposureWarnings.check(config), [])
        config.host = "::1"
        XCTAssertEqual(ExposureWarnings.check(config), [])
        config.host = "0.0.0.0"
        let warnings = ExposureWarnings.check(config)
        XCTAssertEqual(warnings.count, 2)
        XCTAssertTrue(warnings[0].contains("auth.secret"), warnings[0])
        XCTAssertTrue(warnings[1].contains("TLS"), warnings[1])
        config.auth.secret = "s"
        config.tls = HappyConfig().tls
        config.tls.cert = "c.pem"
        config.tls.key = "k.pem"
        XCTAssertEqual(ExposureWarnings.check(config), [])
    }
}
