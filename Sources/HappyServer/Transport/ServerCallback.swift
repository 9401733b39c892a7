import CWebSockets
import HappyCore

/// The one C callback of the server's lws protocols. It finds the server in
/// the context's user pointer and maps lws reasons to server methods; each
/// connection's problems end at that connection.
func happyServerCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                         _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
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
    Unmanaged<HappyServer>.fromOpaque(owner).takeUnretainedValue().streamTick()
}

extension HappyServer {
    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        // The per-message reasons first, tested as plain integers.
        switch reason.rawValue {
        case LWS_CALLBACK_SERVER_WRITEABLE.rawValue:
            guard let pointer = lws_get_opaque_user_data(wsi) else { return 0 }
            return Self.withConnection(pointer) { writeable($0) } ?? 0
        case LWS_CALLBACK_RECEIVE.rawValue:
            guard let pointer = lws_get_opaque_user_data(wsi) else { return -1 }
            return Self.withConnection(pointer) { receive($0, input, length) } ?? -1
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
            return established(wsi)
        case LWS_CALLBACK_RECEIVE_PONG:
            if let connection = connection(of: wsi) { noteAlive(connection) }
            return 0
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            // After our close frame, the peer's is its answer: close without echoing.
            return connection(of: wsi)?.closeFrameSent == true ? -1 : 0
        case LWS_CALLBACK_CLOSED:
            closed(wsi)
            return 0

        // HTTP routes mounted on "happy-http"
        case LWS_CALLBACK_HTTP:
            return httpRequest(wsi, input, length)
        case LWS_CALLBACK_HTTP_BODY:
            return httpBody(wsi, input, length)
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            return httpBodyComplete(wsi)
        case LWS_CALLBACK_HTTP_WRITEABLE:
            return httpWriteable(wsi)
        case LWS_CALLBACK_CLOSED_HTTP:
            httpClosed(wsi)
            return lws_callback_http_dummy(wsi, reason, user, input, length)

        // Connection accounting per client address
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            return filterNetworkConnection(user, fd: Int32(truncatingIfNeeded: Int(bitPattern: input)))
        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            connectionInstantiated(wsi)
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        case LWS_CALLBACK_WSI_DESTROY:
            connectionDestroyed(wsi)
            return lws_callback_http_dummy(wsi, reason, user, input, length)

        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainInbox()
            return 0
        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    func connection(of wsi: OpaquePointer) -> Connection? {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return nil }
        let attachment = Unmanaged<Attachment>.fromOpaque(pointer).takeUnretainedValue()
        return attachment.isConnection ? unsafeDowncast(attachment, to: Connection.self) : nil
    }

    func scheduleSweep() {
        guard let context else { return }
        lws_sul_schedule(context, 0, &sweepTimer.pointee.sul, happySweepCallback, happy_us_per_sec)
    }
}
