import Foundation
import HappyLWS
import Synchronization
import XCTest

/// A server host and a client context talking over 127.0.0.1, each serviced
/// on its own thread: the host's description, headers and query arguments,
/// attachments, message assembly, close reasons, HTTP answers and timers.
final class LoopbackTests: XCTestCase {
    func testWebSocketEchoAssemblyAndCloseReason() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let client = try LoopbackClient()
        defer { client.stop() }
        let longValue = String(repeating: "v", count: 1000)
        let path = "/ws?long=\(longValue)&room=a&room=b&flag"
        let first = "hello: this message is longer than the sixteen-byte receive buffer"
        client.open(port: server.port, path: path, messages: [first, String(repeating: "x", count: 200)])

        XCTAssertTrue(client.events.wait(for: "closed"), "events: \(client.events.all)")
        XCTAssertEqual(client.events.all, ["subprotocol test.v1", "open", "text \(first)", "close 1009 too big", "closed"])
        XCTAssertTrue(server.events.wait(for: "ws closed"), "events: \(server.events.all)")
        let serverEvents = server.events.all
        XCTAssertTrue(serverEvents.contains("query flag= long=\(longValue) room=a"), "\(serverEvents)")
        XCTAssertTrue(serverEvents.contains("offered test.v1 from 127.0.0.1 as zed"), "\(serverEvents)")
        XCTAssertTrue(server.events.wait(for: "timer fired"), "events: \(server.events.all)")
        XCTAssertFalse(server.events.all.contains("cancelled timer fired"))
        XCTAssertEqual(server.releasedAttachments.value, 1)
        XCTAssertEqual(client.releasedAttachments.value, 1)
    }

    func testHTTPRequestOnACallbackMount() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let longValue = String(repeating: "q", count: 2000)
        let response = try rawHTTP(port: server.port,
                                   "GET /api/echo?long=\(longValue)&b=2 HTTP/1.1\r\nHost: localhost\r\nX-Test-Name: zed\r\n\r\n")
        let lines = response.components(separatedBy: "\r\n")
        XCTAssertEqual(lines.first, "HTTP/1.1 200 OK")
        let lowered = response.lowercased()
        XCTAssertTrue(lowered.contains("content-type: text/plain"), response)
        XCTAssertTrue(lowered.contains("content-length: 2020"), response)
        XCTAssertTrue(lowered.contains("cache-control: no-store"), response)
        XCTAssertTrue(lowered.contains("x-extra: yes"), response)
        XCTAssertTrue(response.hasSuffix("\r\n\r\nGET /api/echo zed \(longValue) 2"), response)
        XCTAssertTrue(server.events.wait(for: "http released"), "events: \(server.events.all)")
    }

    func testASecondHostOnATakenPortCannotListen() throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        XCTAssertThrowsError(try LoopbackServer(port: server.port, logLevel: [])) { error in
            XCTAssertEqual(error as? LWSHostError, .cannotListen)
        }
    }

    /// Sends `request` and reads the answer until its declared length is in.
    private func rawHTTP(port: Int, _ request: String) throws -> String {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(socketDescriptor, 0)
        defer { close(socketDescriptor) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        XCTAssertEqual(connected, 0)
        let bytes = Array(request.utf8)
        XCTAssertEqual(send(socketDescriptor, bytes, bytes.count, 0), bytes.count)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socketDescriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
            let text = String(decoding: received, as: UTF8.self)
            if let headerEnd = text.range(of: "\r\n\r\n"),
               let lengthLine = text[..<headerEnd.lowerBound].lowercased().components(separatedBy: "\r\n")
                .first(where: { $0.hasPrefix("content-length:") }),
               let length = Int(lengthLine.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)),
               text.utf8.distance(from: headerEnd.upperBound.samePosition(in: text.utf8)!, to: text.utf8.endIndex) >= length {
                break
            }
        }
        return String(decoding: received, as: UTF8.self)
    }
}

// MARK: support

/// Lines of what happened, written on a service thread, awaited on the test's.
final class EventLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [String] = []

    func add(_ line: String) {
        condition.lock()
        lines.append(line)
        condition.broadcast()
        condition.unlock()
    }

    var all: [String] {
        condition.lock()
        defer { condition.unlock() }
        return lines
    }

    func wait(for line: String, timeout: Double = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !lines.contains(line) {
            if !condition.wait(until: deadline) { return lines.contains(line) }
        }
        return true
    }
}

/// Services a context on its own thread until stopped.
final class ServiceThread: @unchecked Sendable {
    private let stopping = Mutex(false)
    private let done = NSCondition()
    private var finished = false

    init(context: LWSContextHandle, service: @escaping () -> Bool, teardown: @escaping () -> Void) {
        // Both run on the new thread only.
        nonisolated(unsafe) let service = service
        nonisolated(unsafe) let teardown = teardown
        self.context = context
        let thread = Thread { [self] in
            while !stopping.withLock({ $0 }) {
                if !service() { break }
            }
            teardown()
            done.lock()
            finished = true
            done.broadcast()
            done.unlock()
        }
        thread.start()
    }

    private let context: LWSContextHandle

    func stop() {
        stopping.withLock { $0 = true }
        context.cancelService()
        done.lock()
        while !finished { done.wait() }
        done.unlock()
    }
}

/// Counts objects released, across threads.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// What the test server attaches: a WebSocket peer or an HTTP exchange.
class Attached {
    let isPeer: Bool

    init(isPeer: Bool) {
        self.isPeer = isPeer
    }
}

final class Peer: Attached {
    var assembler = MessageAssembler(limit: 100)
    var outgoing: [[UInt8]] = []
    var closing: (code: UInt16, reason: String)?
    let released: Counter

    init(released: Counter) {
        self.released = released
        super.init(isPeer: true)
    }

    deinit { released.increment() }
}

final class Exchange: Attached {
    let body: [UInt8]
    let events: EventLog

    init(body: [UInt8], events: EventLog) {
        self.body = body
        self.events = events
        super.init(isPeer: false)
    }

    deinit { events.add("http released") }
}

/// An echo server on `/ws` (protocol `test.v1`, 16-byte receive chunks,
/// messages up to 100 bytes) and `/api` answered by callbacks.
final class LoopbackServer: LWSCallbackHandler, @unchecked Sendable {
    let events = EventLog()
    let releasedAttachments = Counter()
    private var host: LWSServerHost!
    private var serviceThread: ServiceThread!
    private let buffer = LWSWriteBuffer(capacity: 8192)
    private lazy var timer = LWSTimer { [unowned self] in self.events.add("timer fired") }
    private lazy var cancelledTimer = LWSTimer { [unowned self] in self.events.add("cancelled timer fired") }

    var port: Int { host.boundPort }

    init(port: Int = 0, logLevel: LWSLogLevel = .errors) throws {
        let description = LWSServerDescription(
            host: "127.0.0.1", port: port, vhostName: "loopback",
            protocols: [LWSProtocol(name: "test.v1", id: 0, rxBufferSize: 16, txPacketSize: 0),
                        LWSProtocol(name: "test-http", id: 1, rxBufferSize: 0, txPacketSize: 0)],
            callbackMounts: [(mountpoint: "/api", protocolName: "test-http")], logLevel: logLevel)
        host = try LWSServerHost(description, handler: self)
        let host = self.host!
        serviceThread = ServiceThread(context: host.context, service: { host.service() }, teardown: { [self] in
            timer.cancel()
            cancelledTimer.cancel()
            host.destroy()
        })
    }

    func stop() {
        serviceThread.stop()
    }

    func handleCallback(_ callback: LWSCallback) -> Int32 {
        let connection = callback.connection
        switch callback.reason {
        case .established:
            let query = connection.queryArguments().sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            events.add("query " + query.joined(separator: " "))
            events.add("offered \(connection.header(.subprotocol) ?? "-") from \(connection.peerAddress) as "
                + (connection.customHeader("X-Test-Name") ?? "-"))
            connection.attach(Peer(released: releasedAttachments) as Attached)
            timer.schedule(on: connection.context!, afterSeconds: 0.01)
            cancelledTimer.schedule(on: connection.context!, afterSeconds: 0.02)
            cancelledTimer.cancel()
        case .receive:
            return connection.withAttachment(as: Attached.self) { attached in
                let peer = unsafeDowncast(attached, to: Peer.self)
                switch peer.assembler.add(callback.inputBytes, isBinary: connection.isBinaryFrame,
                                          endsMessage: connection.endsMessage) {
                case .complete(let message): peer.outgoing.append(message.bytes)
                case .tooBig: peer.closing = (1009, "too big")
                case .needsMore: return 0
                }
                connection.requestWritable()
                return 0
            } ?? -1
        case .serverWriteable:
            return connection.withAttachment(as: Attached.self) { attached in
                let peer = unsafeDowncast(attached, to: Peer.self)
                if !peer.outgoing.isEmpty {
                    let message = peer.outgoing.removeFirst()
                    let written = message.withUnsafeBytes { buffer.write($0, to: connection, mode: .text) }
                    if !peer.outgoing.isEmpty || peer.closing != nil { connection.requestWritable() }
                    return written < 0 ? -1 : 0
                }
                guard let closing = peer.closing else { return 0 }
                connection.setCloseReason(code: closing.code, reason: closing.reason)
                return -1
            } ?? 0
        case .closed:
            connection.detach(as: Attached.self)
            events.add("ws closed")
        case .http:
            guard let (method, path) = connection.methodAndPath() else { return -1 }
            let query = connection.queryArguments()
            let text = "\(method) \(path) \(connection.customHeader("x-test-name") ?? "-") \(query["long"] ?? "-") \(query["b"] ?? "-")"
            connection.attach(Exchange(body: Array(text.utf8), events: events) as Attached)
            connection.requestWritable()
        case .httpWriteable:
            guard let exchange = connection.attachment(as: Attached.self).map({ unsafeDowncast($0, to: Exchange.self) }) else {
                return 0
            }
            guard let bodyStart = connection.writeResponseHeaders(
                status: 200, contentType: "text/plain", contentLength: exchange.body.count, cacheControl: "no-store",
                closeConnection: false, headers: [(name: "X-Extra", value: "yes")],
                from: buffer.payload, end: buffer.payload + buffer.capacity) else { return -1 }
            exchange.body.withUnsafeBufferPointer { bodyStart.update(from: $0.baseAddress!, count: $0.count) }
            let length = bodyStart + exchange.body.count - buffer.payload
            guard connection.write(buffer.payload, count: length, mode: .httpFinal) == length else { return -1 }
            connection.detach(as: Attached.self)
            return connection.completeHTTPTransaction() ? 0 : -1
        case .closedHTTP:
            connection.detach(as: Attached.self)
            return callback.passToDefault()
        default:
            return callback.passToDefault()
        }
        return 0
    }
}

/// What the test client attaches to its connection.
final class Session {
    var assembler = MessageAssembler(limit: .max)
    var messages: [String]
    var subprotocol: String?
    let released: Counter

    init(messages: [String], released: Counter) {
        self.messages = messages
        self.released = released
    }

    deinit { released.increment() }
}

/// A client that sends its messages once open and logs what comes back.
final class LoopbackClient: LWSCallbackHandler, @unchecked Sendable {
    let events = EventLog()
    let releasedAttachments = Counter()
    private var context: LWSClientContext!
    private var serviceThread: ServiceThread!
    private let pending = Mutex<[(port: Int, path: String, messages: [String])]>([])
    private let strings = CStringArena()
    private let buffer = LWSWriteBuffer(capacity: 1024)

    init() throws {
        context = try LWSClientContext(handler: self)
        let context = self.context!
        serviceThread = ServiceThread(context: context.context, service: { context.service() },
                                      teardown: { context.destroy() })
    }

    /// Connects from the service thread (lws calls belong there).
    func open(port: Int, path: String, messages: [String]) {
        pending.withLock { $0.append((port, path, messages)) }
        context.context.cancelService()
    }

    func stop() {
        serviceThread.stop()
    }

    func handleCallback(_ callback: LWSCallback) -> Int32 {
        let connection = callback.connection
        if callback.reason == .eventWaitCancelled {
            for request in pending.withLock({ list in defer { list.removeAll() }; return list }) {
                let session = Session(messages: request.messages, released: releasedAttachments)
                let lwsRequest = LWSClientRequest(address: "127.0.0.1", port: request.port, path: request.path,
                                                  hostHeader: "127.0.0.1:\(request.port)", subprotocol: "test.v1")
                if context.connect(lwsRequest, attaching: session, strings: strings) == nil {
                    events.add("could not connect")
                    context.releaseUnstarted(session)
                }
            }
            return 0
        }
        guard let session = connection.attachment(as: Session.self) else { return callback.passToDefault() }
        switch callback.reason {
        case .clientAppendHandshakeHeader:
            return callback.appendHandshakeHeaders([(name: "X-Test-Name", value: "zed")]) ? 0 : -1
        case .clientFilterPreEstablish:
            session.subprotocol = connection.header(.subprotocol)
            events.add("subprotocol \(session.subprotocol ?? "-")")
        case .clientEstablished:
            events.add("open")
            connection.requestWritable()
        case .clientWriteable:
            guard !session.messages.isEmpty else { return 0 }
            let message = Array(session.messages.removeFirst().utf8)
            let written = message.withUnsafeBytes { buffer.write($0, to: connection, mode: .text) }
            if !session.messages.isEmpty { connection.requestWritable() }
            return written < 0 ? -1 : 0
        case .clientReceive:
            if case .complete(let message) = session.assembler.add(callback.inputBytes, isBinary: connection.isBinaryFrame,
                                                                    endsMessage: connection.endsMessage) {
                events.add("text " + String(decoding: message.bytes, as: UTF8.self))
            }
        case .peerInitiatedClose:
            if let close = PeerClose(payload: callback.inputBytes) { events.add("close \(close.code) \(close.reason)") }
        case .clientConnectionError:
            events.add("error \(callback.inputText ?? "-")")
            connection.detach(as: Session.self)
        case .clientClosed:
            connection.detach(as: Session.self)
            events.add("closed")
        default:
            return callback.passToDefault()
        }
        return 0
    }
}
