import Foundation
import HappyClientKit
import XCTest

/// The URLSession transport is the default on Apple platforms. It is built
/// on Linux too, where Foundation has no WebSocket client: there it must
/// fail at once and say why, never hang or crash.
final class URLSessionTransportTests: XCTestCase {
    private let unsupported = "URLSessionWebSocketTask cannot open WebSockets on this platform"

    func testOnLinuxAConnectionFailsAtOnceSayingURLSessionHasNoWebSockets() async throws {
        #if os(Linux)
        let connection = URLSessionTransport().connect(to: WebSocketURL("ws://127.0.0.1:9/ws")!, options: WebSocketOptions())
        let reading = Task {
            var events: [WebSocketEvent] = []
            for await event in connection.events { events.append(event) }
            return events
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(10))
            reading.cancel()
        }
        let events = await reading.value
        timeout.cancel()
        XCTAssertEqual(events.count, 1, "one event, then the stream ends: \(events)")
        guard case .failed(let reason)? = events.first else { return XCTFail("\(events)") }
        XCTAssertTrue(reason.hasPrefix(unsupported), reason)
        XCTAssertTrue(reason.contains("WebSockets not supported by libcurl"), reason)
        XCTAssertTrue(reason.contains("NSURLErrorDomain -1002"), reason)
        XCTAssertTrue(reason.hasSuffix("use LWSTransport, the default here"), reason)
        #else
        throw XCTSkip("on Apple platforms URLSession opens WebSockets")
        #endif
    }

    func testOnLinuxARoomOnTheURLSessionTransportCannotConnectAndSaysWhy() async throws {
        #if os(Linux)
        do {
            _ = try await HappyRoom.connect(to: "ws://127.0.0.1:9", transport: URLSessionTransport(), timeout: 10)
            XCTFail("joined over URLSession on Linux")
        } catch {
            guard case .cannotConnect(let url, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(url, "ws://127.0.0.1:9/ws")
            XCTAssertTrue(reason.hasPrefix(unsupported), reason)
        }
        #else
        throw XCTSkip("on Apple platforms URLSession opens WebSockets")
        #endif
    }
}
