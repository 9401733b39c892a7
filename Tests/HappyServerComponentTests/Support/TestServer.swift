import Foundation
import HappyCore
@testable import HappyServer
import XCTest

/// One WebSocket client of a `TestServer`: the server's connection and the
/// fake transport under it.
final class TestClient {
    let connection: Connection
    let transport: FakeConnectionTransport
    /// Text frames already handed out by `messages(of:)`.
    var textFramesRead = 0

    init(connection: Connection, transport: FakeConnectionTransport) {
        self.connection = connection
        self.transport = transport
    }

    var id: String { connection.participant.id }
    /// The close frame the server wrote, if any.
    var closeFrame: WebSocketFrame? { transport.closeFrame }
}

/// An HTTP request run through a `TestServer`.
final class TestExchange {
    let exchange: HTTPExchange
    let transport: FakeExchangeTransport
    /// The writable callback reported the response complete.
    var completed = false

    init(exchange: HTTPExchange, transport: FakeExchangeTransport) {
        self.exchange = exchange
        self.transport = transport
    }

    var status: Int? { transport.head?.status }
    var body: [UInt8] { transport.body }
    var text: String { String(decoding: transport.body, as: UTF8.self) }
    var json: JSONValue? { try? JSONParser.parse(transport.body) }
    func header(_ name: String) -> String? { transport.header(name) }
}

/// The configuration file a test server reads again on a reload, as the test rewrites it.
final class ReloadableConfig: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: HappyConfig

    init(_ config: HappyConfig) {
        stored = config
    }

    var config: HappyConfig {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// The whole server built in-process, without libwebsockets: fake
/// transports stand in for the sockets, a manual clock for time, and the
/// test plays the event loop (writable callbacks, loop turns, the inbox).
final class TestServer {
    let server: HappyServer
    let time: ManualTimeSource
    let timers: ManualTimers
    let config: HappyConfig
    /// What `reload` reads.
    let file: ReloadableConfig

    /// The repository's `web/` directory (art for the renderer).
    static let webRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("web").path

    /// `stepped`: store calls wait until the test runs them (else a store
    /// that is not synchronous runs on the real store worker's threads).
    /// `clusterBus`: a cluster node's bus (a `FakeClusterBus`).
    /// `webhookPoster`: webhooks' batches go there (their sender threads start with the server).
    /// The operator key of servers without `auth.secret` (a real server makes its own).
    static let operatorKey = OperatorKey(value: "test-operator-key-0123456789abcdefghij", path: "/nowhere/operator.key")
    /// Headers of an operator's request to a test server: its key and the server's own host.
    static let operatorHeaders = ["authorization": "Bearer \(operatorKey.value)", "host": "127.0.0.1:8080",
                                  "content-type": "application/json"]

    init(config: HappyConfig = TestServer.config(), store: (any RoomStore)? = nil,
         tokenVerifier: TokenVerifier? = nil, stepped: SteppedStore? = nil, clusterBus: (any ClusterBus)? = nil,
         webhookPoster: (any WebhookPoster)? = nil) {
        self.config = config
        let file = ReloadableConfig(config)
        self.file = file
        time = ManualTimeSource()
        timers = ManualTimers(time: time)
        let store = stepped?.store ?? store ?? MemoryRoomStore(historySize: config.limits.historySize)
        do {
            server = try HappyServer(config: config, store: store, logger: Logger(level: .error),
                                     tokenVerifier: tokenVerifier,
                                     operatorKey: tokenVerifier == nil ? Self.operatorKey : nil,
                                     clusterBus: clusterBus, time: time, timers: timers,
                                     storeAccess: stepped, webhookPoster: webhookPoster,
                                     readConfiguration: { .success(file.config) })
        } catch {
            fatalError("the test server could not be built: \(error)")
        }
        server.cluster.start()
        server.startWebhooks()
    }

    deinit {
        server.senders.stop()
    }

    /// The defaults, with `change` applied.
    static func config(_ change: (inout HappyConfig) -> Void = { _ in }) -> HappyConfig {
        var config = HappyConfig()
        config.webRoot = webRoot
        change(&config)
        return config
    }

    var registry: ConnectionRegistry { server.registry }
    var metrics: Metrics { server.metrics }

    // MARK: time and the loop

    /// Moves the clock and starts a new loop turn (so `now()` reads it).
    func advance(by seconds: Double) {
        time.advance(by: seconds)
        server.clock.nextTurn()
    }

    /// The end of a loop turn: the inbox, due timers, the group commit.
    func turn() {
        server.afterServiceTurn()
    }

    /// Loop turns of `turnSeconds` for `seconds`, as `run()` would serve
    /// them: each waits for events for `1 - busyShare` of its time (as the
    /// event loop reports it), and the rest is work.
    func serve(seconds: Double, busyShare: Double, turnSeconds: Double = 0.05) {
        for _ in 0..<Int((seconds / turnSeconds).rounded()) {
            advance(by: turnSeconds)
            server.serviceLoad.waited(turnSeconds * (1 - busyShare))
            turn()
        }
    }

    /// Rewrites the configuration and reloads it, as SIGHUP does.
    func reload(_ change: (inout HappyConfig) -> Void) {
        change(&file.config)
        server.reload()
    }

    /// The sweep of every component, now, as its timer would run it.
    func sweep() {
        server.fire(.sweep)
    }

    /// Drains the inbox until `condition` holds, for work another thread
    /// does (async store, renders); fails the test after `timeout` seconds.
    @discardableResult
    func waitUntil(_ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
                   _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            server.drainInbox()
            if condition() { return true }
            if Date() > deadline {
                XCTFail("timed out waiting for \(what)", file: file, line: line)
                return false
            }
            usleep(500)  // let the other thread run; the condition decides, not the pause
        }
    }

    // MARK: WebSocket clients

    /// Opens a `/ws` connection with the upgrade's query and token.
    @discardableResult
    func connect(room: String? = nil, name: String? = nil, token: String? = nil, query: [String: String] = [:],
                 peer: String = "192.0.2.10", usesExtensions: Bool = false) -> TestClient {
        var arguments = query
        if let room { arguments["room"] = room }
        if let name { arguments["name"] = name }
        let transport = FakeConnectionTransport()
        let connection = server.registry.open(transport: transport, kind: .happy, peerAddress: peer,
                                              usesExtensions: usesExtensions, query: arguments, token: token)
        return TestClient(connection: connection, transport: transport)
    }

    /// A client that is in its room, its welcome read.
    func joined(room: String? = nil, name: String? = nil, token: String? = nil,
                usesExtensions: Bool = false, file: StaticString = #filePath, line: UInt = #line) -> TestClient {
        let client = connect(room: room, name: name, token: token, usesExtensions: usesExtensions)
        let first = messages(of: client).first
        XCTAssertEqual(first?["type"]?.stringValue, "welcome", "first message: \(String(describing: first))",
                       file: file, line: line)
        return client
    }

    /// Runs the writable callbacks the client asked for, as the event loop
    /// would, until it asks for none (or `limit` callbacks ran).
    func pump(_ client: TestClient, limit: Int = 10_000) {
        var callbacks = 0
        while client.transport.writablePending && callbacks < limit {
            client.transport.writablePending = false
            callbacks += 1
            if !server.broadcaster.writeable(client.connection) { break }
        }
    }

    /// Runs one writable callback, if one was asked for.
    @discardableResult
    func pumpOnce(_ client: TestClient) -> Bool {
        guard client.transport.writablePending else { return false }
        client.transport.writablePending = false
        return server.broadcaster.writeable(client.connection)
    }

    /// The JSON messages written to the client since the last call, after
    /// running its writable callbacks.
    func messages(of client: TestClient) -> [JSONValue] {
        pump(client)
        let frames = client.transport.textFrames
        let fresh = frames[client.textFramesRead...].compactMap(\.json)
        client.textFramesRead = frames.count
        return fresh
    }

    /// The types of `messages(of:)`.
    func types(of client: TestClient) -> [String] {
        messages(of: client).map { $0["type"]?.stringValue ?? "?" }
    }

    /// One whole text message from the client.
    func send(_ client: TestClient, _ text: String) {
        receive(client, Array(text.utf8), binary: false, final: true)
    }

    /// One fragment from the client.
    func receive(_ client: TestClient, _ bytes: [UInt8], binary: Bool, final: Bool) {
        bytes.withUnsafeBufferPointer {
            server.registry.noteAlive(client.connection)
            server.intake.receive(client.connection, $0, binary: binary, final: final)
        }
    }

    /// An intent message.
    func sendIntent(_ client: TestClient, _ action: String, id: String? = nil, _ parameters: String = "") {
        var text = #"{"type":"intent","action":"\#(action)""#
        if let id { text += #","id":"\#(id)""# }
        if !parameters.isEmpty { text += "," + parameters }
        send(client, text + "}")
    }

    /// The transport saw the connection go (lws's close callback).
    func close(_ client: TestClient) {
        server.registry.closed(client.connection)
    }

    // MARK: HTTP

    /// A request whose headers just arrived (its body, if any, follows).
    func begin(_ method: String, _ path: String, query: [String: String] = [:], headers: [String: String] = [:],
               body: [UInt8]? = nil, peer: String = "192.0.2.20", screen: RequestScreen = .pass) -> TestExchange {
        let transport = FakeExchangeTransport()
        // Every HTTP/1.1 request names its host.
        let headers = headers["host"] == nil ? headers.merging(["host": "127.0.0.1:8080"]) { $1 } : headers
        let exchange = HTTPExchange(transport: transport, method: method, path: path, query: query, headers: headers,
                                    peerAddress: peer, startedAt: server.clock.fresh())
        server.http.begin(exchange, screen: screen, declaredBodyLength: body.map(\.count))
        if let body, exchange.response == nil, exchange.incomingBody.expectedLength > 0 {
            body.withUnsafeBytes { _ = server.http.body(exchange, $0) }
            server.http.bodyComplete(exchange)
        }
        return TestExchange(exchange: exchange, transport: transport)
    }

    /// A request run to its response (for responses that need no other thread).
    @discardableResult
    func request(_ method: String, _ path: String, query: [String: String] = [:], headers: [String: String] = [:],
                 body: String? = nil, peer: String = "192.0.2.20") -> TestExchange {
        let result = begin(method, path, query: query, headers: headers, body: body.map { Array($0.utf8) }, peer: peer)
        pump(result)
        return result
    }

    /// Runs the exchange's writable callbacks; the transaction ends when
    /// the responder reports the whole response out.
    func pump(_ result: TestExchange, limit: Int = 10_000) {
        var callbacks = 0
        while result.transport.writablePending && !result.completed && callbacks < limit {
            result.transport.writablePending = false
            callbacks += 1
            let (ok, done) = server.responder.writeable(result.exchange)
            guard ok else {
                result.exchange.finish()
                break
            }
            if done {
                result.completed = true
                result.exchange.finish()
            }
        }
    }

    /// Waits (draining the inbox) until the exchange's response is complete.
    func finish(_ result: TestExchange, file: StaticString = #filePath, line: UInt = #line) {
        waitUntil("the response to \(result.exchange.method) \(result.exchange.path)", file: file, line: line) {
            pump(result)
            return result.completed
        }
    }
}

extension JSONValue {
    var intValue: Int? { doubleValue.map { Int($0) } }

    var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }
}

extension Array where Element == JSONValue {
    /// The messages of one `type`.
    func ofType(_ type: String) -> [JSONValue] {
        filter { $0["type"]?.stringValue == type }
    }
}

/// Access tokens signed with the secret a test server checks them against.
enum TestTokens {
    static let secret = "component-test-secret"
    static let verifier = HMACSHA256.verifier(secret: secret)

    static func mint(_ subject: String, role: Role, room: String? = nil, expiresAt: Int64? = nil) -> String {
        verifier.mint(AccessClaims(subject: subject, role: role, room: room, expiresAt: expiresAt))
    }

    /// A server that requires tokens.
    static func server(_ change: (inout HappyConfig) -> Void = { _ in }) -> TestServer {
        TestServer(config: TestServer.config {
            $0.auth.secret = secret
            change(&$0)
        }, tokenVerifier: verifier)
    }
}
