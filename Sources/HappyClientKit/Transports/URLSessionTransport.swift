import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `URLSessionWebSocketTask` transport: the default on Apple platforms,
/// where it needs no C library.
///
/// On Linux it compiles, but Foundation there has no WebSocket client
/// (libcurl's is not used): every connection fails at once with `.failed`
/// and a text that says so. `LWSTransport` is the default there.
public final class URLSessionTransport: HappyTransport, @unchecked Sendable {
    /// The transport of every room given none (on Apple platforms).
    public static let shared = URLSessionTransport()

    /// Not changed after `init`; each connection gets a session of its own.
    private let configuration: URLSessionConfiguration

    /// A transport whose connections use `configuration` (timeouts, proxies, cookies).
    public init(configuration: URLSessionConfiguration = .default) {
        self.configuration = configuration
    }

    /// Opens a connection; `options.allowInsecureTLS`, `keepaliveSeconds` and
    /// `offersCompression` are not used (the session's heartbeat keeps watch).
    public func connect(to url: WebSocketURL, options: WebSocketOptions) -> any TransportConnection {
        URLSessionConnection(url: url, options: options, configuration: configuration)
    }
}

/// One `URLSessionWebSocketTask` with a session of its own, whose delegate
/// (the relay) turns its callbacks into `events`.
final class URLSessionConnection: TransportConnection, @unchecked Sendable {
    private let relay = URLSessionEventRelay()
    private let session: URLSession
    private let task: URLSessionWebSocketTask?

    init(url: WebSocketURL, options: WebSocketOptions, configuration: URLSessionConfiguration) {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1  // callbacks in order
        session = URLSession(configuration: configuration, delegate: relay, delegateQueue: queue)
        guard let target = URL(string: url.description) else {
            task = nil
            relay.finish(.failed("\(url) cannot be written as a URL"))
            session.invalidateAndCancel()
            return
        }
        var request = URLRequest(url: target)
        if let subprotocol = options.subprotocol { request.setValue(subprotocol, forHTTPHeaderField: "Sec-WebSocket-Protocol") }
        if let origin = options.origin { request.setValue(origin, forHTTPHeaderField: "Origin") }
        for header in options.headers { request.addValue(header.value, forHTTPHeaderField: header.name) }
        let task = session.webSocketTask(with: request)
        self.task = task
        relay.serverClose = { [weak task] in Self.closeEvent(of: task) }
        task.resume()
        receiveNext()
    }

    var events: AsyncStream<WebSocketEvent> { relay.events }

    func send(text: String) {
        task?.send(.string(text)) { _ in }
    }

    func send(binary: [UInt8]) {
        task?.send(.data(Data(binary))) { _ in }
    }

    func ping(onPong: @escaping @Sendable () -> Void) {
        task?.sendPing { error in
            if error == nil { onPong() }
        }
    }

    func close(code: UInt16, reason: String) {
        let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure
        task?.cancel(with: closeCode, reason: Data(reason.utf8))
    }

    func abort() {
        relay.finish(.closed(code: nil, reason: "aborted"))
        task?.cancel()
        session.invalidateAndCancel()
    }

    /// Reads one message, then the next, until the task fails or closes.
    private func receiveNext() {
        task?.receive { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(.string(let text)):
                relay.yield(.text(text))
                receiveNext()
            case .success(.data(let data)):
                relay.yield(.binary(Array(data)))
                receiveNext()
            case .success:
                receiveNext()
            case .failure(let error):
                relay.finish(Self.closeEvent(of: task) ?? .failed(URLSessionEventRelay.describe(error)))
            }
        }
    }

    /// The server's close, once the task knows it.
    private static func closeEvent(of task: URLSessionWebSocketTask?) -> WebSocketEvent? {
        guard let task, task.closeCode != .invalid else { return nil }
        let reason = task.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? ""
        return .closed(code: UInt16(clamping: task.closeCode.rawValue), reason: reason)
    }
}
