import HappyCore
import HappyLWS

/// The lws callbacks of the server's connections, each handed to the
/// component that owns it; each connection's problems end at that
/// connection. Reads what lws knows (headers, frame flags, addresses) while
/// lws still has it, and wraps connections in the components' transports.
final class ServerDispatch: LWSCallbackHandler {
    private let registry: ConnectionRegistry
    private let intake: MessageIntake
    private let broadcaster: Broadcaster
    private let http: HTTPIntake
    private let gate: HTTPGate
    private let responder: HTTPResponder
    private let addressLimits: AddressLimits
    private let compression: Bool
    private let clock: ServiceClock
    private let logger: Logger

    init(registry: ConnectionRegistry, intake: MessageIntake, broadcaster: Broadcaster, http: HTTPIntake, gate: HTTPGate,
         responder: HTTPResponder, addressLimits: AddressLimits, compression: Bool, clock: ServiceClock, logger: Logger) {
        self.registry = registry
        self.intake = intake
        self.broadcaster = broadcaster
        self.http = http
        self.gate = gate
        self.responder = responder
        self.addressLimits = addressLimits
        self.compression = compression
        self.clock = clock
        self.logger = logger
    }

    func handleCallback(_ callback: LWSCallback) -> Int32 {
        ServiceThread.assertCurrent()
        let connection = callback.connection
        // The per-message reasons first.
        switch callback.reason {
        case .serverWriteable:
            return withConnection(connection) { broadcaster.writeable($0) ? 0 : -1 } ?? 0
        case .receive:
            return withConnection(connection) { client in
                let chunk = UnsafeBufferPointer(start: callback.input?.assumingMemoryBound(to: UInt8.self),
                                                count: callback.length)
                registry.noteAlive(client)
                let frameEnds = connection.remainingPayload == 0
                intake.receive(client, chunk, binary: connection.isBinaryFrame,
                               final: frameEnds && connection.isFinalFragment, frameEnds: frameEnds)
                return 0
            } ?? -1
        default:
            return handleRare(callback)
        }
    }

    /// Runs `body` with the `Connection` attached to `connection`, borrowed.
    @inline(__always)
    private func withConnection<R>(_ connection: LWSConnection, _ body: (Connection) -> R) -> R? {
        connection.withAttachment(as: Attachment.self) { attachment in
            attachment.isConnection ? body(unsafeDowncast(attachment, to: Connection.self)) : nil
        } ?? nil
    }

    private func handleRare(_ callback: LWSCallback) -> Int32 {
        let connection = callback.connection
        switch callback.reason {
        // WebSocket
        case .httpConfirmUpgrade:
            return confirmUpgrade(connection)
        case .established:
            established(connection)
            return 0
        case .receivePong:
            if let client = attachment(of: connection, as: Connection.self) { registry.noteAlive(client) }
            return 0
        case .peerInitiatedClose:
            guard let client = attachment(of: connection, as: Connection.self) else { return 0 }
            // After our close frame, the peer's is its answer: close without echoing.
            return broadcaster.peerClosing(client) ? -1 : 0
        case .closed:
            if let client = detach(connection, as: Connection.self) { registry.closed(client) }
            return 0

        // Every HTTP request (files too), then the routes mounted on "happy-http"
        case .filterHTTPConnection:
            return httpFilter(connection)
        case .http:
            return httpRequest(connection)
        case .httpBody:
            guard let exchange = attachment(of: connection, as: HTTPExchange.self), callback.input != nil else { return 0 }
            return http.body(exchange, callback.inputBytes) ? 0 : -1
        case .httpBodyCompletion:
            if let exchange = attachment(of: connection, as: HTTPExchange.self) { http.bodyComplete(exchange) }
            return 0
        case .httpWriteable:
            guard let exchange = attachment(of: connection, as: HTTPExchange.self) else { return 0 }
            let (ok, done) = responder.writeable(exchange)
            guard ok else { return -1 }
            guard done else { return 0 }
            detach(connection, as: HTTPExchange.self)?.finish()
            if exchange.response?.closeConnection == true { return -1 }
            return connection.completeHTTPTransaction() ? 0 : -1
        case .closedHTTP:
            detach(connection, as: HTTPExchange.self)?.finish()
            return callback.passToDefault()

        // Connection accounting per client address
        case .filterNetworkConnection:
            guard let address = callback.filteredClientAddress else { return 0 }
            return addressLimits.accept(address: address, fd: callback.acceptedSocket) ? 0 : 1
        case .serverNewClientInstantiated:
            addressLimits.instantiated(Self.socketID(connection), fd: connection.socketDescriptor)
            return callback.passToDefault()
        case .wsiDestroy:
            addressLimits.destroyed(Self.socketID(connection))
            return callback.passToDefault()

        case .eventWaitCancelled:
            // Another thread posted to the inbox: the loop drains it when this turn ends.
            return 0
        default:
            return callback.passToDefault()
        }
    }

    // MARK: WebSocket

    /// Refuses upgrades the intake screens out, before the handshake.
    private func confirmUpgrade(_ connection: LWSConnection) -> Int32 {
        let (screen, client) = screen(connection)
        let path = connection.header(.getURI) ?? ""
        guard let refusal = http.upgradeRefusal(screen, client: client, path: path,
                                                origin: connection.header(.origin)) else { return 0 }
        return connection.returnHTTPStatus(refusal.status, message: refusal.message) ? 1 : -1
    }

    private func established(_ connection: LWSConnection) {
        let path = connection.header(.getURI) ?? "/ws"
        let offeredExtensions = connection.header(.extensions) ?? ""
        let query = connection.queryArguments()
        let client = registry.open(
            transport: LWSConnectionTransport(connection: connection), kind: path == "/echo" ? .echo : .happy,
            peerAddress: addressLimits.clientAddress(of: Self.socketID(connection), peer: connection.peerAddress),
            usesExtensions: compression && offeredExtensions.contains("permessage-deflate"),
            query: query, token: AccessControl.token(query: query, authorization: connection.header(.authorization)))
        connection.attach(client as Attachment)
        if !connection.setSendBuffer(bytes: longLivedSendBufferBytes) {
            logger.warn("could not limit the socket send buffer", ["id": client.participant.id])
        }
    }

    // MARK: HTTP

    private func httpRequest(_ connection: LWSConnection) -> Int32 {
        guard let (method, path) = connection.methodAndPath() else { return -1 }
        let (screen, client) = screen(connection)
        var headers: [String: String] = [:]
        for name in HTTPExchange.capturedHeaders {
            if let value = header(named: name, of: connection) { headers[name] = value }
        }
        let exchange = HTTPExchange(transport: LWSExchangeTransport(connection: connection), method: method, path: path,
                                    query: connection.queryArguments(), headers: headers, peerAddress: client,
                                    startedAt: clock.fresh())
        detach(connection, as: HTTPExchange.self)?.finish()
        connection.attach(exchange as Attachment)
        let declared = method == "POST"
            ? connection.header(.contentLength).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            : nil
        http.begin(exchange, screen: screen, declaredBodyLength: declared)
        return 0
    }

    /// Refuses a request the gate turns away, answering it at once; nonzero closes the connection after.
    private func httpFilter(_ connection: LWSConnection) -> Int32 {
        guard let (method, path) = connection.methodAndPath() else { return 0 }
        // The cap on connections is the route's to check (`screen`), once per request.
        let client = addressLimits.clientAddress(of: Self.socketID(connection), peer: connection.peerAddress,
                                                 forwardedFor: { connection.header(.forwardedFor) })
        let request = HTTPRequestHead(method: method, path: path, query: connection.queryArguments(),
                                      contentLengths: connection.headerLines(.contentLength),
                                      transferEncoding: connection.header(.transferEncoding))
        guard let refusal = gate.check(request, client: client) else { return 0 }
        responder.countResponse(status: refusal.error.status)
        _ = connection.answerAndClose(status: refusal.error.status, contentType: "application/json",
                                      body: refusal.error.body, headers: responder.commonHeaders + refusal.headers)
        return 1
    }

    /// Headers lws parses itself, by lower-case name; others are read by name.
    private static let tokens: [String: LWSHeader] = [
        "authorization": .authorization, "if-none-match": .ifNoneMatch, "origin": .origin,
        "x-forwarded-for": .forwardedFor, "content-length": .contentLength, "accept": .accept, "host": .host,
        "content-type": .contentType,
    ]

    private func header(named name: String, of connection: LWSConnection) -> String? {
        if let token = Self.tokens[name] { return connection.header(token) }
        return connection.customHeader(name)
    }

    private func screen(_ connection: LWSConnection) -> (screen: RequestScreen, client: String) {
        http.screen(socket: Self.socketID(connection), peer: connection.peerAddress,
                    forwardedFor: { connection.header(.forwardedFor) },
                    requestLineIsCut: connection.requestLineIsCut)
    }

    // MARK: user data

    /// The socket's identity for the components: its lws handle's address, unique while it is open.
    private static func socketID(_ connection: LWSConnection) -> SocketID {
        SocketID(value: UInt(bitPattern: connection.wsi))
    }

    /// The object attached to `connection`, if it is a `T`; not retained.
    private func attachment<T: Attachment>(of connection: LWSConnection, as type: T.Type) -> T? {
        guard let attachment = connection.attachment(as: Attachment.self),
              attachment.isConnection == (type == Connection.self) else { return nil }
        return unsafeDowncast(attachment, to: T.self)
    }

    /// Takes the `T` attached to `connection` off it (releasing the connection's reference).
    @discardableResult
    private func detach<T: Attachment>(_ connection: LWSConnection, as type: T.Type) -> T? {
        guard attachment(of: connection, as: type) != nil else { return nil }
        return connection.detach(as: Attachment.self).map { unsafeDowncast($0, to: T.self) }
    }
}
