import Foundation
import HappyCurl
import Synchronization
import XCTest

/// `HTTPClient` against real servers on loopback: what it sends, the
/// status, headers and body it returns, and each way a request can fail.
final class HTTPClientTests: XCTestCase {
    func testAnAnswersStatusHeadersAndBodyAreReturned() throws {
        let server = try LocalHTTPServer(LocalHTTPServer.json(#"{"code":"gone"}"#, status: "410 Gone",
                                                              headers: ["X-Happy-Test: one", "Set-Cookie: a=1"]))
        let response = try HTTPClient().perform(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/api/x", timeout: 10))
        XCTAssertEqual(response.status, 410)
        XCTAssertEqual(response.header("x-happy-test"), "one", "looked up in any case")
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.headers.map(\.name), ["Content-Type", "X-Happy-Test", "Set-Cookie", "Content-Length"])
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), #"{"code":"gone"}"#)
    }

    func testAChunkedBodyIsJoinedAndABodylessOneIsEmpty() throws {
        let chunked = try LocalHTTPServer(.raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                               + "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n"))
        let client = try HTTPClient()
        XCTAssertEqual(try client.perform(HTTPClientRequest(url: "http://127.0.0.1:\(chunked.port)/", timeout: 10)).body,
                       Array("hello, world".utf8))
        let empty = try LocalHTTPServer(.raw("HTTP/1.1 204 No Content\r\n\r\n"))
        let response = try client.perform(HTTPClientRequest(url: "http://127.0.0.1:\(empty.port)/", timeout: 10))
        XCTAssertEqual(response.status, 204)
        XCTAssertEqual(response.body, [])
    }

    func testTheMethodHeadersAndBodyAreSentAsGiven() throws {
        let server = try LocalHTTPServer(LocalHTTPServer.json("{}"))
        let body = Array(String(repeating: "x", count: 3000).utf8)
        let request = HTTPClientRequest(method: "POST", url: "http://127.0.0.1:\(server.port)/api/intent?room=a%20b",
                                        headers: [HTTPHeader("X-Happy-Name", "alice"), HTTPHeader("Content-Type", "text/plain")],
                                        body: body, timeout: 10)
        XCTAssertEqual(try HTTPClient().perform(request).status, 200)
        let received = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(received.requestLine, "POST /api/intent?room=a%20b HTTP/1.1")
        XCTAssertTrue(received.headerLines.contains("X-Happy-Name: alice"), received.head)
        XCTAssertTrue(received.headerLines.contains("Content-Type: text/plain"), received.head)
        XCTAssertFalse(received.head.lowercased().contains("expect:"), "no wait for a 100 Continue: \(received.head)")
        XCTAssertEqual(received.body, body)

        let get = try LocalHTTPServer(LocalHTTPServer.json("{}"))
        XCTAssertEqual(try HTTPClient().perform(HTTPClientRequest(url: "http://127.0.0.1:\(get.port)/healthz", timeout: 10)).status, 200)
        XCTAssertEqual(get.requests.first?.requestLine, "GET /healthz HTTP/1.1")
        XCTAssertEqual(get.requests.first?.body, [])
    }

    /// The wait sleeps in poll(): the CPU this thread uses over a 2 s wait stays near nothing.
    func testAServerThatNeverAnswersTimesOutWithoutSpinning() throws {
        let server = try LocalHTTPServer(.silent)
        let url = "http://127.0.0.1:\(server.port)/api/history"
        let started = Date()
        let cpuBefore = Self.threadCPUSeconds()
        XCTAssertThrowsError(try HTTPClient().perform(HTTPClientRequest(url: url, timeout: 2))) { error in
            XCTAssertEqual(error as? HTTPClientError, .timedOut(url: url, seconds: 2))
            XCTAssertEqual("\(error)", "no complete answer from \(url) within 2 s: is the server stuck, or the timeout too short?")
        }
        let cpu = Self.threadCPUSeconds() - cpuBefore
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(elapsed, 1.9, "waited the whole timeout")
        XCTAssertLessThan(elapsed, 5)
        XCTAssertLessThan(cpu, 0.2, "the wait spun: \(cpu) s of CPU in \(elapsed) s")
        XCTAssertEqual(server.requests.count, 1, "the request was sent")
    }

    func testARefusedConnectionNamesTheEndpointAndTheSystemsReason() throws {
        let (fd, port) = try LocalHTTPServer.listen(listening: false)
        defer { close(fd) }
        XCTAssertThrowsError(try HTTPClient().perform(HTTPClientRequest(url: "http://127.0.0.1:\(port)/", timeout: 10))) { error in
            XCTAssertEqual(error as? HTTPClientError, .cannotConnect(endpoint: "127.0.0.1:\(port)", reason: "Connection refused"))
            XCTAssertEqual("\(error)", "could not connect to 127.0.0.1:\(port) (Connection refused): "
                           + "is the server running and listening there?")
        }
    }

    func testAConnectionClosedBeforeTheAnswerIsBroken() throws {
        let server = try LocalHTTPServer(.hangUp)
        let url = "http://127.0.0.1:\(server.port)/"
        XCTAssertThrowsError(try HTTPClient().perform(HTTPClientRequest(url: url, timeout: 10))) { error in
            guard case .connectionBroken(url, _)? = error as? HTTPClientError else { return XCTFail("\(error)") }
        }
    }

    func testAnAnswerLargerThanTheLimitIsRefused() throws {
        let server = try LocalHTTPServer(LocalHTTPServer.json(String(repeating: "7", count: 5000)))
        let url = "http://127.0.0.1:\(server.port)/"
        XCTAssertThrowsError(try HTTPClient().perform(HTTPClientRequest(url: url, timeout: 10, maxResponseBytes: 4096))) { error in
            XCTAssertEqual(error as? HTTPClientError, .answerTooLarge(url: url, limit: 4096))
        }
        XCTAssertEqual(try HTTPClient().perform(HTTPClientRequest(url: url, timeout: 10, maxResponseBytes: 5000)).body.count, 5000)
    }

    func testOnlyHTTPAndHTTPSURLsAreRequested() throws {
        for url in ["ftp://127.0.0.1/file", "file:///etc/passwd", "not a url", "http://"] {
            XCTAssertThrowsError(try HTTPClient().perform(HTTPClientRequest(url: url, timeout: 1)), url) { error in
                guard case .invalidURL(url, _)? = error as? HTTPClientError else { return XCTFail("\(url): \(error)") }
            }
        }
    }

    /// Requests from several threads through one client wait their turn; each gets its own answer.
    func testOneClientServesSeveralThreads() throws {
        let server = try LocalHTTPServer(LocalHTTPServer.json(#"{"ok":true}"#))
        let client = try HTTPClient()
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let status = (try? client.perform(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/\(index)", timeout: 10)))?.status
            statuses.withLock { $0.append(status ?? 0) }
        }
        XCTAssertEqual(statuses.withLock { $0 }, Array(repeating: 200, count: 8))
        XCTAssertEqual(Set(server.requests.map(\.requestLine)).count, 8)
    }

    // MARK: https

    func testHTTPSTrustsACertificateOnlyThroughItsCAFile() throws {
        let tls = try TLSServer()
        let url = "https://127.0.0.1:\(tls.port)/"
        XCTAssertThrowsError(try HTTPClient().perform(HTTPClientRequest(url: url, timeout: 10))) { error in
            XCTAssertEqual(error as? HTTPClientError,
                           .untrustedCertificate(endpoint: "127.0.0.1:\(tls.port)", reason: "self-signed certificate"))
        }
        let trusted = try HTTPClient().perform(HTTPClientRequest(url: url, timeout: 10, trust: TLSTrust(caFile: tls.certificate)))
        XCTAssertEqual(trusted.status, 200)
        XCTAssertTrue(String(decoding: trusted.body, as: UTF8.self).contains("s_server"), "openssl's status page")
        XCTAssertEqual(TLSTrust.fromEnvironment(["SSL_CERT_FILE": tls.certificate]).caFile, tls.certificate)
        let unchecked = TLSTrust(verifyPeer: false, verifyHost: false)
        XCTAssertEqual(try HTTPClient().perform(HTTPClientRequest(url: url, timeout: 10, trust: unchecked)).status, 200)

        // Plain HTTP to the TLS port: s_server hangs up on what is no handshake.
        let plain = "http://127.0.0.1:\(tls.port)/"
        XCTAssertThrowsError(try HTTPClient().perform(HTTPClientRequest(url: plain, timeout: 10))) { error in
            XCTAssertEqual(error as? HTTPClientError, .connectionBroken(url: plain, reason: "Empty reply from server"))
        }
    }

    func testHTTPSToAPlainHTTPServerFailsItsHandshake() throws {
        let plain = try LocalHTTPServer(.raw("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
        XCTAssertThrowsError(try HTTPClient().perform(HTTPClientRequest(url: "https://127.0.0.1:\(plain.port)/", timeout: 10))) { error in
            guard case .tlsFailed("127.0.0.1:\(plain.port)", _)? = error as? HTTPClientError else { return XCTFail("\(error)") }
        }
    }

    // MARK: helpers

    /// CPU time (user and system) of the calling thread.
    private static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
