import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The delegate of one connection's `URLSession`: yields its open, close and
/// completion as events, the last one once.
final class URLSessionEventRelay: NSObject, URLSessionWebSocketDelegate, @unchecked Sendable {
    let events: AsyncStream<WebSocketEvent>
    private let continuation: AsyncStream<WebSocketEvent>.Continuation
    private let ended = Mutex(false)
    /// The server's close as the task knows it (set once, before the task starts).
    var serverClose: @Sendable () -> WebSocketEvent? = { nil }

    override init() {
        (events, continuation) = AsyncStream.makeStream(of: WebSocketEvent.self)
        super.init()
    }

    func yield(_ event: WebSocketEvent) {
        guard !ended.withLock({ $0 }) else { return }
        continuation.yield(event)
    }

    /// Yields the connection's last event, unless one came already.
    func finish(_ event: WebSocketEvent) {
        let first = ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
        guard first else { return }
        continuation.yield(event)
        continuation.finish()
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        yield(.open(subprotocol: `protocol`))
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask,
                    didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        finish(.closed(code: UInt16(clamping: closeCode.rawValue),
                       reason: reason.map { String(decoding: $0, as: UTF8.self) } ?? ""))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            finish(serverClose() ?? .failed(Self.describe(error)))
        } else {
            finish(serverClose() ?? .closed(code: nil, reason: ""))
        }
        // The session keeps its delegate until it is invalidated.
        session.finishTasksAndInvalidate()
    }

    /// What went wrong, in words; on Linux, that URLSession cannot do WebSockets there.
    static func describe(_ error: any Error) -> String {
        let error = error as NSError
        let text = "\(error.localizedDescription) (\(error.domain) \(error.code))"
        #if canImport(FoundationNetworking)
        if error.domain == NSURLErrorDomain && error.code == NSURLErrorUnsupportedURL {
            return "URLSessionWebSocketTask cannot open WebSockets on this platform: its Foundation has no "
                + "WebSocket client (\(text)); use LWSTransport, the default here"
        }
        #endif
        return text
    }
}
