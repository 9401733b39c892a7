import CWebSockets
import Glibc
import HappyCore

/// The one C callback of the server's lws protocols. It finds the server in
/// the context's user pointer and hands each lws reason to the component
/// that owns it; each connection's problems end at that connection.
func happyServerCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                         _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    ServiceThread.assertCurrent()
    // The server outlives its context: no retain/release per callback.
    return Unmanaged<HappyServer>.fromOpaque(owner)._withUnsafeGuaranteedRef { server in
        server.handle(wsi, reason, user, input, length)
    }
}

/// The sweep timer's C callback.
func happySweepCallback(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let owner = happy_timer_owner(sul) else { return }
    Unmanaged<HappyServer>.fromOpaque(owner).takeUnretainedValue().sweep()
}

/// The frame streams' wave timer's C callback.
func happyStreamTickCallback(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let owner = happy_timer_owner(sul) else { return }
    ServiceThread.assertCurrent()
    Unmanaged<HappyServer>.fromOpaque(owner).takeUnretainedValue().frames.streams.tick()
}

extension HappyServer {
    /// Kernel send buffer of a WebSocket connection. Linux would otherwise grow
    /// it to megabytes (`tcp_wmem`), hiding a slow reader's backlog from the
    /// outbox, where `maxQueuedBytes` and `writeTimeoutSeconds` apply.
    static let socketSendBufferBytes: Int32 = 64 * 1024

    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        // The per-message reasons first, tested as plain integers.
        switch reason.rawValue {
        case LWS_CALLBACK_SERVER_WRITEABLE.rawValue:
            guard let pointer = lws_get_opaque_user_data(wsi) else { return 0 }
            return Self.withConnection(pointer) { broadcaster.writeable($0) ? 0 : -1 } ?? 0
        case LWS_CALLBACK_RECEIVE.rawValue:
            guard let pointer = lws_get_opaque_user_data(wsi) else { return -1 }
            return Self.withConnection(pointer) { connection in
                let chunk = UnsafeBufferPointer(start: input?.assumingMemoryBound(to: UInt8.self), count: length)
                intake.receive(connection, chunk, binary: lws_frame_is_binary(wsi) != 0,
                               final: lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0)
                return 0
            } ?? -1
        default:
            return handleRare(wsi, reason, user, input, length)
        }
    }

    /// Runs `body` with the connection held by an lws user pointer, without
    /// retaining it (lws holds a reference until `LWS_CALLBACK_CLOSED`).
    private static func withConnection<R>(_ pointer: UnsafeMutableRawPointer, _ body: (Connection) -> R) -> R? {
        Unmanaged<Attachment>.fromOpaque(pointer)._withUnsafeGuaranteedRef { attachment in
            attachment.isConnection ? body(unsafeDowncast(attachment, to: Connection.self)) : nil
        }
    }

    private func handleRare(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        // WebSocket
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi)
        case LWS_CALLBACK_ESTABLISHED:
            established(wsi)
            return 0
        case LWS_CALLBACK_RECEIVE_PONG:
            if let connection = attachment(of: wsi, as: Connection.self) { intake.noteAlive(connection) }
            return 0
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            // After our close frame, the peer's is its answer: close without echoing.
            return attachment(of: wsi, as: Connection.self)?.closeFrameSent == true ? -1 : 0
        case LWS_CALLBACK_CLOSED:
            if let connection = detach(wsi, as: Connection.self) { registry.closed(connection) }
            return 0

        // HTTP routes mounted on "happy-http"
        case LWS_CALLBACK_HTTP:
            return httpRequest(wsi)
        case LWS_CALLBACK_HTTP_BODY:
            guard let exchange = attachment(of: wsi, as: HTTPExchange.self), let input else { return 0 }
            return http.body(exchange, UnsafeRawBufferPointer(start: input, count: length)) ? 0 : -1
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            if let exchange = attachment(of: wsi, as: HTTPExchange.self) { http.bodyComplete(exchange) }
            return 0
        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let exchange = attachment(of: wsi, as: HTTPExchange.self) else { return 0 }
            let (ok, done) = responder.writeable(exchange)
            guard ok else { return -1 }
            guard done else { return 0 }
            detach(wsi, as: HTTPExchange.self)?.finish()
            if exchange.response?.closeConnection == true { return -1 }
            return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        case LWS_CALLBACK_CLOSED_HTTP:
            detach(wsi, as: HTTPExchange.self)?.finish()
            return lws_callback_http_dummy(wsi, reason, user, input, length)

        // Connection accounting per client address
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            guard let user else { return 0 }
            let filter = user.assumingMemoryBound(to: lws_filter_network_conn_args.self)
            let fd = Int32(truncatingIfNeeded: Int(bitPattern: input))
            return addressLimits.accept(address: LWSHeaders.addressText(filter.pointee.cli_addr), fd: fd) ? 0 : 1
        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            addressLimits.instantiated(wsi, fd: lws_get_socket_fd(wsi))
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        case LWS_CALLBACK_WSI_DESTROY:
            addressLimits.destroyed(wsi)
            return lws_callback_http_dummy(wsi, reason, user, input, length)

        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainInbox()
            return 0
        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    // MARK: WebSocket

    /// Refuses upgrades the intake screens out, before the handshake.
    private func confirmUpgrade(_ wsi: OpaquePointer) -> Int32 {
        let (screen, client) = screen(wsi)
        let path = LWSHeaders.value(wsi, WSI_TOKEN_GET_URI) ?? ""
        guard let refusal = http.upgradeRefusal(screen, client: client, path: path,
                                                origin: LWSHeaders.value(wsi, WSI_TOKEN_ORIGIN)) else { return 0 }
        return lws_return_http_status(wsi, UInt32(refusal.status), refusal.message) != 0 ? -1 : 1
    }

    private func established(_ wsi: OpaquePointer) {
        let path = LWSHeaders.value(wsi, WSI_TOKEN_GET_URI) ?? "/ws"
        let offeredExtensions = LWSHeaders.value(wsi, WSI_TOKEN_EXTENSIONS) ?? ""
        let transport = LWSConnectionTransport(wsi: wsi)
        let query = LWSHeaders.queryArguments(wsi)
        let connection = registry.open(
            transport: transport, kind: path == "/echo" ? .echo : .happy,
            peerAddress: addressLimits.clientAddress(of: wsi, peer: LWSHeaders.peerAddress(wsi)),
            usesExtensions: config.compression && offeredExtensions.contains("permessage-deflate"),
            query: query,
            token: AccessControl.token(query: query, authorization: LWSHeaders.value(wsi, WSI_TOKEN_HTTP_AUTHORIZATION)))
        lws_set_opaque_user_data(wsi, Unmanaged.passRetained(connection as Attachment).toOpaque())
        if !transport.limitSendBuffer(bytes: Self.socketSendBufferBytes) {
            logger.warn("could not limit the socket send buffer", ["id": connection.participant.id])
        }
    }

    // MARK: HTTP

    private func httpRequest(_ wsi: OpaquePointer) -> Int32 {
        guard let (method, path) = LWSHeaders.methodAndPath(wsi) else { return -1 }
        let (screen, client) = screen(wsi)
        var headers: [String: String] = [:]
        for name in HTTPExchange.capturedHeaders {
            if let value = LWSHeaders.named(wsi, name) { headers[name] = value }
        }
        let exchange = HTTPExchange(transport: LWSExchangeTransport(wsi: wsi), method: method, path: path,
                                    query: LWSHeaders.queryArguments(wsi), headers: headers, peerAddress: client,
                                    startedAt: clock.fresh())
        detach(wsi, as: HTTPExchange.self)?.finish()
        lws_set_opaque_user_data(wsi, Unmanaged.passRetained(exchange as Attachment).toOpaque())
        let declared = method == "POST"
            ? LWSHeaders.value(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            : nil
        http.begin(exchange, screen: screen, declaredBodyLength: declared)
        return 0
    }

    private func screen(_ wsi: OpaquePointer) -> (screen: RequestScreen, client: String) {
        http.screen(socket: wsi, peer: LWSHeaders.peerAddress(wsi),
                    forwardedFor: { LWSHeaders.value(wsi, WSI_TOKEN_X_FORWARDED_FOR) },
                    requestLineIsCut: LWSHeaders.requestLineIsCut(wsi))
    }

    // MARK: user data

    /// The object lws holds for `wsi`, if it is a `T`; not retained.
    private func attachment<T: Attachment>(of wsi: OpaquePointer, as type: T.Type) -> T? {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return nil }
        let attachment = Unmanaged<Attachment>.fromOpaque(pointer).takeUnretainedValue()
        guard attachment.isConnection == (type == Connection.self) else { return nil }
        return unsafeDowncast(attachment, to: T.self)
    }

    /// Takes the `T` lws holds for `wsi` off it and releases lws's reference.
    @discardableResult
    private func detach<T: Attachment>(_ wsi: OpaquePointer, as type: T.Type) -> T? {
        guard let object = attachment(of: wsi, as: type) else { return nil }
        lws_set_opaque_user_data(wsi, nil)
        Unmanaged<Attachment>.passUnretained(object).release()
        return object
    }
}
