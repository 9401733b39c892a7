/// Routing lws protocol callbacks to a Swift object, and what one callback
/// carries.
///
/// Every protocol of a context made by `LWSServerHost` or `LWSClientContext`
/// has the same C callback. It finds the context's `LWSCallbackRoute` in the
/// context user pointer and calls the handler's `handleCallback` with no
/// retain or release (the host keeps the route, the route's creator keeps
/// the handler alive as long as the context), no allocation and no dynamic
/// cast: the route's dispatch is specialized for the handler's type where
/// the host is created.
public import CWebSockets
#if canImport(Glibc)
import Glibc
#endif

/// An object that handles the lws callbacks of a context's connections, on
/// the context's service thread. It returns what lws expects of the reason
/// (0 goes on, -1 closes the connection); reasons it does not handle go to
/// `LWSCallback.passToDefault()`.
public protocol LWSCallbackHandler: AnyObject {
    func handleCallback(_ callback: LWSCallback) -> Int32
}

/// The reason of an lws callback (`LWS_CALLBACK_*`). Compare with the named
/// values (`callback.reason == .receive`) or switch over them.
public struct LWSCallbackReason: Hashable, Sendable {
    public let rawValue: UInt32

    @inlinable @inline(__always)
    public init(_ reason: lws_callback_reasons) {
        rawValue = reason.rawValue
    }

    /// The lws enumeration value, for reasons not named here.
    @inlinable
    public var lwsReason: lws_callback_reasons { lws_callback_reasons(rawValue: rawValue) }

    // Server WebSocket connections.
    @inlinable public static var httpConfirmUpgrade: Self { Self(LWS_CALLBACK_HTTP_CONFIRM_UPGRADE) }
    @inlinable public static var established: Self { Self(LWS_CALLBACK_ESTABLISHED) }
    @inlinable public static var receive: Self { Self(LWS_CALLBACK_RECEIVE) }
    @inlinable public static var receivePong: Self { Self(LWS_CALLBACK_RECEIVE_PONG) }
    @inlinable public static var serverWriteable: Self { Self(LWS_CALLBACK_SERVER_WRITEABLE) }
    @inlinable public static var closed: Self { Self(LWS_CALLBACK_CLOSED) }
    /// The peer's close frame arrived (code and reason: `PeerClose(payload: callback.inputBytes)`);
    /// return -1 to close without echoing it.
    @inlinable public static var peerInitiatedClose: Self { Self(LWS_CALLBACK_WS_PEER_INITIATED_CLOSE) }

    // Server HTTP on callback mounts.
    @inlinable public static var http: Self { Self(LWS_CALLBACK_HTTP) }
    @inlinable public static var httpBody: Self { Self(LWS_CALLBACK_HTTP_BODY) }
    @inlinable public static var httpBodyCompletion: Self { Self(LWS_CALLBACK_HTTP_BODY_COMPLETION) }
    @inlinable public static var httpWriteable: Self { Self(LWS_CALLBACK_HTTP_WRITEABLE) }
    @inlinable public static var closedHTTP: Self { Self(LWS_CALLBACK_CLOSED_HTTP) }

    /// Any HTTP request's headers are in, a static file's too, before lws routes it; nonzero closes.
    @inlinable public static var filterHTTPConnection: Self { Self(LWS_CALLBACK_FILTER_HTTP_CONNECTION) }

    // Server sockets.
    /// A socket was accepted (`acceptedSocket`, `filteredClientAddress`); nonzero refuses it.
    @inlinable public static var filterNetworkConnection: Self { Self(LWS_CALLBACK_FILTER_NETWORK_CONNECTION) }
    @inlinable public static var serverNewClientInstantiated: Self { Self(LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED) }
    @inlinable public static var wsiDestroy: Self { Self(LWS_CALLBACK_WSI_DESTROY) }

    // Client connections.
    /// Nonzero leaves the extension named in `inputText` out of this connection's offer.
    @inlinable public static var clientConfirmExtensionSupported: Self { Self(LWS_CALLBACK_CLIENT_CONFIRM_EXTENSION_SUPPORTED) }
    /// The last moment the handshake answer's headers can be read.
    @inlinable public static var clientFilterPreEstablish: Self { Self(LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH) }
    @inlinable public static var clientAppendHandshakeHeader: Self { Self(LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER) }
    @inlinable public static var clientEstablished: Self { Self(LWS_CALLBACK_CLIENT_ESTABLISHED) }
    @inlinable public static var clientReceive: Self { Self(LWS_CALLBACK_CLIENT_RECEIVE) }
    @inlinable public static var clientWriteable: Self { Self(LWS_CALLBACK_CLIENT_WRITEABLE) }
    /// A pong arrived (for our ping, or for lws's own keepalive ping).
    @inlinable public static var clientReceivePong: Self { Self(LWS_CALLBACK_CLIENT_RECEIVE_PONG) }
    /// The connection could not be made; `inputText` says why.
    @inlinable public static var clientConnectionError: Self { Self(LWS_CALLBACK_CLIENT_CONNECTION_ERROR) }
    @inlinable public static var clientClosed: Self { Self(LWS_CALLBACK_CLIENT_CLOSED) }

    /// Another thread called `LWSContextHandle.cancelService()`.
    @inlinable public static var eventWaitCancelled: Self { Self(LWS_CALLBACK_EVENT_WAIT_CANCELLED) }
}

/// One lws callback: the connection, the reason and lws's arguments.
public struct LWSCallback {
    public let connection: LWSConnection
    public let reason: LWSCallbackReason
    /// lws's per-session user pointer (or the reason's own argument).
    public let user: UnsafeMutableRawPointer?
    public let input: UnsafeMutableRawPointer?
    public let length: Int

    @inlinable @inline(__always)
    public init(connection: LWSConnection, reason: LWSCallbackReason, user: UnsafeMutableRawPointer?,
                input: UnsafeMutableRawPointer?, length: Int) {
        self.connection = connection
        self.reason = reason
        self.user = user
        self.input = input
        self.length = length
    }

    /// `input` and `length` as bytes (a received chunk, a close payload, a request body part).
    @inlinable
    public var inputBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
    }

    /// `input` as a NUL-terminated string (an error message, an extension name), if any.
    public var inputText: String? {
        input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
    }

    /// What lws does by default with the reason (`lws_callback_http_dummy`).
    @inlinable
    public func passToDefault() -> Int32 {
        lws_callback_http_dummy(connection.wsi, reason.lwsReason, user, input, length)
    }

    /// `filterNetworkConnection`: the accepted socket's descriptor.
    @inlinable
    public var acceptedSocket: Int32 {
        Int32(truncatingIfNeeded: Int(bitPattern: input))
    }

    /// `filterNetworkConnection`: the numeric address of the peer whose
    /// socket was accepted (before any byte is read), or nil.
    public var filteredClientAddress: String? {
        guard let user else { return nil }
        let filter = user.assumingMemoryBound(to: lws_filter_network_conn_args.self)
        return Self.addressText(filter.pointee.cli_addr)
    }

    /// `clientAppendHandshakeHeader`: adds `headers` (names lower-cased) to
    /// the handshake request. False when they do not fit: return -1.
    public func appendHandshakeHeaders(_ headers: [(name: String, value: String)]) -> Bool {
        guard let input else { return true }
        let cursor = input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        guard let start = cursor.pointee else { return true }
        var writer = HTTPHeaderWriter(connection, start: start, end: start + length)
        defer { cursor.pointee = writer.position }
        for header in headers {
            guard writer.add(name: header.name, value: header.value) else { return false }
        }
        return true
    }

    static func addressText(_ storage: sockaddr_storage) -> String {
        var copy = storage
        return withUnsafeBytes(of: &copy) { raw in
            LWSConnection.text(capacity: 64) { buffer, capacity in
                if storage.ss_family == sa_family_t(AF_INET6) {
                    var address = raw.load(as: sockaddr_in6.self).sin6_addr
                    return inet_ntop(AF_INET6, &address, buffer, socklen_t(capacity)) != nil
                }
                var address = raw.load(as: sockaddr_in.self).sin_addr
                return inet_ntop(AF_INET, &address, buffer, socklen_t(capacity)) != nil
            } ?? ""
        }
    }
}

/// Where a context's callbacks go: its handler, held unretained. The
/// context's user pointer points at the route; whoever creates the context
/// keeps the route, and the handler, alive until the context is destroyed.
public final class LWSCallbackRoute {
    @usableFromInline let handler: UnsafeMutableRawPointer
    @usableFromInline let dispatch: (UnsafeMutableRawPointer, LWSCallback) -> Int32
    /// Cleared when a context is destroyed after its handler may be gone:
    /// lws's closing callbacks then get lws's default handling.
    var isOpen = true
    /// Set when lws state that its event-loop glue checks only after a
    /// socket event changed (see `LWSServerHost.service()`).
    @usableFromInline var loopCheckDue = false
    /// The epoll loop lws runs on and its nudge (see `happy_loop_nudge`);
    /// nil on lws's own poll() loop.
    @usableFromInline var loopNudge: (loop: UnsafeMutableRawPointer, nudge: UnsafeMutablePointer<happy_loop_nudge>)?
    /// Headers for the file mount's answers (`LWSServerDescription.fileHeaders`).
    var fileHeaders: LWSFileHeaders?

    /// A route to `handler`. Inlinable so that the dispatch is specialized
    /// for the handler's type: a direct call, no witness table or box.
    @inlinable
    public init<Handler: LWSCallbackHandler>(to handler: Handler) {
        self.handler = Unmanaged.passUnretained(handler).toOpaque()
        dispatch = { pointer, callback in
            Unmanaged<Handler>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.handleCallback(callback) }
        }
    }

    /// The value for `lws_context_creation_info.user`.
    var contextUser: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

/// Notes a change to a context's read flow or a connection to drop. On the
/// epoll loop, lws re-checks paused readers and runs what is due only after
/// a socket event or its own timer; a change made elsewhere would wait for
/// the next unrelated event, so the service thread wakes once more.
@usableFromInline
func lwsLoopCheckDue(_ context: OpaquePointer?) {
    guard let context, let route = lws_context_user(context) else { return }
    Unmanaged<LWSCallbackRoute>.fromOpaque(route)._withUnsafeGuaranteedRef { $0.loopCheckDue = true }
}

/// The epoll loop a context runs on, or nil on lws's own poll() loop.
func lwsEventLoop(_ context: OpaquePointer?) -> UnsafeMutableRawPointer? {
    guard let context, let route = lws_context_user(context) else { return nil }
    return Unmanaged<LWSCallbackRoute>.fromOpaque(route)._withUnsafeGuaranteedRef { $0.loopNudge?.loop }
}

/// Notes a timer or timeout of a context due in `seconds`: on the epoll
/// loop the nudge comes by then (see `happy_loop_nudge`).
@usableFromInline
func lwsTimerDue(_ context: OpaquePointer?, inSeconds seconds: Double) {
    guard let context, let route = lws_context_user(context) else { return }
    Unmanaged<LWSCallbackRoute>.fromOpaque(route)._withUnsafeGuaranteedRef { route in
        // A millisecond late, so that lws finds it due.
        if let (loop, nudge) = route.loopNudge { happy_loop_nudge_within(loop, nudge, max(seconds, 0) + 0.001) }
    }
}

/// The C callback of every protocol: from the context's route to its handler.
func lwsRoutedCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                       _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let route = lws_context_user(context) else { return 0 }
    // The route outlives its context: no retain/release per callback.
    return Unmanaged<LWSCallbackRoute>.fromOpaque(route)._withUnsafeGuaranteedRef { route in
        guard route.isOpen else { return lws_callback_http_dummy(wsi, reason, user, input, length) }
        // A static file's headers (and a WebSocket handshake's, which the policy leaves alone), then the handler.
        if reason == LWS_CALLBACK_ADD_HEADERS, let fileHeaders = route.fileHeaders,
           !LWSConnection(wsi).addFileHeaders(fileHeaders, into: input) {
            return -1
        }
        return route.dispatch(route.handler, LWSCallback(connection: LWSConnection(wsi), reason: LWSCallbackReason(reason),
                                                         user: user, input: input, length: length))
    }
}
