import Foundation
import HappyClientKit
import HappyCore
import XCTest

/// One shared client loop for a test run: clients of every test live on it.
let sharedClientLoop: ClientLoop = {
    do { return try ClientLoop(name: "test-clients") } catch { fatalError("client loop: \(error)") }
}()

/// One message as received: its exact text and its parsed JSON.
struct ReceivedMessage {
    let text: String
    let json: JSONValue
    var type: String? { json["type"]?.stringValue }
}

/// A real WebSocket client for tests: sends JSON, waits for messages by type.
final class TestClient {
    let connection: WebSocketConnection
    /// Messages read while looking for something else, in order.
    private var skipped: [ReceivedMessage] = []
    private(set) var closeCode: UInt16?
    private(set) var closeReason = ""
    private(set) var isClosed = false
    /// The handshake completed (the server accepted the upgrade).
    private(set) var didOpen = false
    /// The subprotocol the server selected, if any.
    private(set) var subprotocol: String?
    /// The server's `Sec-WebSocket-Extensions` answer, if any.
    private(set) var extensions: String?
    /// Why the connection could not be made, if it could not.
    private(set) var failure: String?
    /// The exact text of the welcome, once `join` has read it.
    private(set) var welcomeText: String?
    /// Pings sent by `drainUntilPong`, for unique ids.
    private var sentinels = 0

    init(url: String, query: [(String, String?)] = [], options: WebSocketOptions = WebSocketOptions(),
         loop: ClientLoop = sharedClientLoop) {
        let full = url + QueryEncoding.query(query)
        connection = loop.connect(WebSocketURL(full)!, options: options)
    }

    /// Connects to `/ws` of `server` and waits for the welcome.
    static func join(_ server: ServerProcess, room: String = "lobby", name: String? = nil,
                     since: UInt64? = nil, epoch: String? = nil, extra: [(String, String?)] = [],
                     options: WebSocketOptions = WebSocketOptions(),
                     file: StaticString = #filePath, line: UInt = #line) throws -> (TestClient, JSONValue) {
        let client = TestClient(url: server.wsURL, query: [("room", room), ("name", name),
                                                           ("since", since.map(String.init)), ("epoch", epoch)] + extra,
                                options: options)
        let welcome = try XCTUnwrap(client.nextMessage(type: "welcome", timeout: 10), "no welcome", file: file, line: line)
        client.welcomeText = welcome.text
        return (client, welcome.json)
    }

    func send(_ text: String) { connection.send(text: text) }

    func send(json: [String: Any]) {
        let data = try! JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        send(String(decoding: data, as: UTF8.self))
    }

    func intent(_ action: String, id: String? = nil, _ parameters: [String: Any] = [:]) {
        var json: [String: Any] = ["type": "intent", "action": action]
        if let id { json["id"] = id }
        for (key, value) in parameters { json[key] = value }
        send(json: json)
    }

    /// The next message of any type.
    func next(timeout: Double = 5) -> JSONValue? {
        nextMessage(timeout: timeout)?.json
    }

    /// The next message of `type`; others are kept for later `next` calls.
    func next(type: String, timeout: Double = 5) -> JSONValue? {
        nextMessage(type: type, timeout: timeout)?.json
    }

    /// The next message (of `type`, when given) with its exact text.
    func nextMessage(type: String? = nil, timeout: Double = 5) -> ReceivedMessage? {
        if let index = skipped.firstIndex(where: { type == nil || $0.type == type }) {
            return skipped.remove(at: index)
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            guard let message = receive(timeout: deadline.timeIntervalSinceNow) else { return nil }
            if type == nil || message.type == type { return message }
            skipped.append(message)
        }
        return nil
    }

    /// Reads until the connection closes; returns the close code (nil: no close frame).
    func waitForClose(timeout: Double = 5) -> UInt16?? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !isClosed && Date() < deadline {
            guard let message = receive(timeout: deadline.timeIntervalSinceNow) else { continue }
            skipped.append(message)
        }
        return isClosed ? .some(closeCode) : nil
    }

    /// Everything received up to the answer to a ping sent now, including
    /// kept messages, without the pong. The server answers a ping in its
    /// place after everything it queued for this client before reading it,
    /// so this is all of that, and proves nothing of it is still on the way.
    /// Nil when no pong came within `timeout`.
    func drainUntilPong(timeout: Double = 5) -> [JSONValue]? {
        sentinels += 1
        let id = "sentinel-\(sentinels)"
        send(json: ["type": "ping", "id": id])
        var all = skipped.map(\.json)
        skipped.removeAll()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline, let message = receive(timeout: deadline.timeIntervalSinceNow) {
            if message.type == "pong", message.json["id"]?.stringValue == id { return all }
            all.append(message.json)
        }
        return nil
    }

    /// Everything the connection carried before its close, once closed; nil
    /// while it is open (more may still come).
    func messagesBeforeClose() -> [JSONValue]? {
        guard isClosed else { return nil }
        defer { skipped.removeAll() }
        return skipped.map(\.json)
    }

    /// Everything received within `seconds`, including kept messages (with
    /// `seconds` 0 only the kept ones: nothing is read).
    func drain(for seconds: Double) -> [JSONValue] {
        var all = skipped.map(\.json)
        skipped.removeAll()
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline, !isClosed {
            if let message = receive(timeout: deadline.timeIntervalSinceNow) { all.append(message.json) }
        }
        return all
    }

    func close() { connection.close() }

    private func receive(timeout: Double) -> ReceivedMessage? {
        guard !isClosed, timeout > 0 else { return nil }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            guard let event = connection.nextEvent(timeout: deadline.timeIntervalSinceNow) else { return nil }
            switch event {
            case .text(let text):
                guard let json = try? JSONParser.parse(text, maxDepth: 64) else {
                    XCTFail("the server sent a message that is not JSON: \(text.prefix(200))")
                    continue
                }
                return ReceivedMessage(text: text, json: json)
            case .open(let selected):
                didOpen = true
                subprotocol = selected
                extensions = connection.negotiatedExtensions
            case .closed(let code, let reason):
                isClosed = true
                closeCode = code
                closeReason = reason
                return nil
            case .failed(let error):
                isClosed = true
                failure = error
                closeReason = error
                return nil
            case .binary(let bytes):
                XCTFail("the server sent a binary message of \(bytes.count) bytes")
            }
        }
        return nil
    }
}

/// Minimal HTTP requests for tests.
enum HTTP {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: JSONValue? { try? JSONParser.parse(text, maxDepth: 64) }
    }

    static func get(_ url: String, headers: [String: String] = [:]) throws -> Response {
        try request("GET", url, body: nil, headers: headers)
    }

    static func post(_ url: String, body: String, headers: [String: String] = [:]) throws -> Response {
        try request("POST", url, body: Data(body.utf8), headers: headers)
    }

    static func request(_ method: String, _ url: String, body: Data?, headers: [String: String] = [:],
                        timeout: Double = 10) throws -> Response {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body
        request.timeoutInterval = timeout
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let box = ResultBox()
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            box.set(data: data, response: response as? HTTPURLResponse, error: error)
        }
        task.resume()
        guard box.wait(timeout: timeout + 1) else { throw NSError(domain: "HTTP", code: 1, userInfo: [NSLocalizedDescriptionKey: "timeout \(url)"]) }
        if let error = box.error { throw error }
        guard let response = box.response else { throw NSError(domain: "HTTP", code: 2) }
        var headers: [String: String] = [:]
        for (key, value) in response.allHeaderFields {
            headers[String(describing: key).lowercased()] = String(describing: value)
        }
        return Response(status: response.statusCode, headers: headers, body: box.data ?? Data())
    }

    private final class ResultBox: @unchecked Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        var data: Data?
        var response: HTTPURLResponse?
        var error: Error?

        func set(data: Data?, response: HTTPURLResponse?, error: Error?) {
            self.data = data
            self.response = response
            self.error = error
            semaphore.signal()
        }

        func wait(timeout: Double) -> Bool { semaphore.wait(timeout: .now() + timeout) == .success }
    }
}

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
