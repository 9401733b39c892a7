@testable import HappyClientCLI
import XCTest

/// The HTTP/1.1 answers `happyclient` reads: fed a byte at a time or all at
/// once, with a length, in chunks, or up to the connection's end.
final class HTTPResponseReaderTests: XCTestCase {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Feeds `answer` in pieces of `piece` bytes; the progress after the last one.
    private func read(_ answer: String, piece: Int, finish: Bool = false) -> HTTPResponseReader.Progress {
        var reader = HTTPResponseReader()
        var progress = HTTPResponseReader.Progress.needMore
        let all = bytes(answer)
        var index = 0
        while index < all.count {
            progress = reader.feed(Array(all[index..<min(all.count, index + piece)]))
            index += piece
            if case .complete = progress, index < all.count { XCTFail("complete before the end, at \(index)") }
        }
        return finish ? reader.finish() : progress
    }

    func testABodyOfContentLengthIsCompleteWithItsLastByte() {
        let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"seq\": 12}"
        for piece in [1, 7, answer.utf8.count] {
            XCTAssertEqual(read(answer, piece: piece), .complete(.init(
                status: 200, headers: ["content-type": "application/json", "content-length": "11"], body: bytes("{\"seq\": 12}"))),
                "pieces of \(piece)")
        }
        XCTAssertEqual(read(String(answer.dropLast()), piece: 4), .needMore)
    }

    func testAChunkedBodyIsJoined() {
        let answer = "HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"cod\r\n"
            + "a;ext=1\r\ne\":\"gone\"}\r\n0\r\n\r\n"
        for piece in [1, 3, answer.utf8.count] {
            guard case .complete(let response) = read(answer, piece: piece) else { return XCTFail("pieces of \(piece)") }
            XCTAssertEqual(response.status, 400)
            XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "{\"code\":\"gone\"}")
        }
    }

    func testABodyWithoutALengthEndsWithTheConnection() {
        XCTAssertEqual(read("HTTP/1.0 200 OK\r\n\r\nall of it", piece: 3), .needMore)
        XCTAssertEqual(read("HTTP/1.0 200 OK\r\n\r\nall of it", piece: 3, finish: true),
                       .complete(.init(status: 200, headers: [:], body: bytes("all of it"))))
    }

    func testAnAnswerCutShortOrNotHTTPIsInvalid() {
        XCTAssertEqual(read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", piece: 5, finish: true),
                       .invalid("the connection closed before the whole answer arrived"))
        XCTAssertEqual(read("HTTP/1.1 200 OK\r\nContent-", piece: 5, finish: true),
                       .invalid("the connection closed before the answer's headers"))
        XCTAssertEqual(read("SSH-2.0-OpenSSH_9.2\r\n\r\n", piece: 100), .invalid("not an HTTP answer: \"SSH-2.0-OpenSSH_9.2\""))
        XCTAssertEqual(read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", piece: 100),
                       .invalid("a chunk size of \"zz\""))
    }

    func testATargetIsTakenApart() throws {
        let plain = try XCTUnwrap(RequestTarget("http://127.0.0.1:8080/api/state?room=k%20x&seq=4"))
        XCTAssertEqual([plain.host, "\(plain.port)", plain.pathAndQuery, plain.hostHeader],
                       ["127.0.0.1", "8080", "/api/state?room=k%20x&seq=4", "127.0.0.1:8080"])
        XCTAssertFalse(plain.secure)
        let secure = try XCTUnwrap(RequestTarget("https://[::1]/frame/scene.png"))
        XCTAssertEqual([secure.host, "\(secure.port)", secure.pathAndQuery, secure.hostHeader],
                       ["::1", "443", "/frame/scene.png", "[::1]:443"])
        XCTAssertTrue(secure.secure)
        XCTAssertNil(RequestTarget("ftp://example.org/"))
    }
}
