/// `LWSClientContext`: an lws context that listens nowhere and opens
/// WebSocket client connections, each with a Swift object attached.
internal import CWebSockets

/// What the client context looks like.
public struct LWSClientDescription: Sendable {
    /// The one local protocol every connection is bound to.
    public var protocolName: String
    /// Largest chunk a CLIENT_RECEIVE callback gets.
    public var rxBufferSize: Int
    /// The permessage-deflate offer, made by connections that accept it in
    /// `clientConfirmExtensionSupported`; nil offers no extension.
    public var deflateOffer: String?
    /// Seconds for the TLS and WebSocket handshakes (`timeout_secs`).
    public var timeoutSeconds: UInt32
    /// Seconds for the TCP connection (`connect_timeout_secs`).
    public var connectTimeoutSeconds: UInt32
    public var logLevel: LWSLogLevel

    public init(protocolName: String = "happy-client", rxBufferSize: Int = 65536,
                deflateOffer: String? = "permessage-deflate; client_max_window_bits",
                timeoutSeconds: UInt32 = 10, connectTimeoutSeconds: UInt32 = 10, logLevel: LWSLogLevel = .errors) {
        self.protocolName = protocolName
        self.rxBufferSize = rxBufferSize
        self.deflateOffer = deflateOffer
        self.timeoutSeconds = timeoutSeconds
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.logLevel = logLevel
    }
}

/// Where and how one client connection goes.
public struct LWSClientRequest: Sendable {
    /// The host name or address to connect to.
    public var address: String
    public var port: Int
    /// The request target (`/ws?room=lobby`).
    public var path: String
    /// The `Host` header.
    public var hostHeader: String
    /// The `Origin` header as given; nil sends none.
    public var origin: String?
    /// Subprotocols to offer (comma-separated); nil offers none.
    public var subprotocol: String?
    public var usesTLS: Bool
    /// Accept self-signed, expired and misnamed certificates.
    public var allowsInsecureTLS: Bool
    /// Ping after this many idle seconds and hang up after twice that
    /// without an answer; nil: no pings (lws then keeps no idle timer).
    public var keepaliveSeconds: UInt16?

    public init(address: String, port: Int, path: String, hostHeader: String, origin: String? = nil,
                subprotocol: String? = nil, usesTLS: Bool = false, allowsInsecureTLS: Bool = false,
                keepaliveSeconds: UInt16? = nil) {
        self.address = address
        self.port = port
        self.path = path
        self.hostHeader = hostHeader
        self.origin = origin
        self.subprotocol = subprotocol
        self.usesTLS = usesTLS
        self.allowsInsecureTLS = allowsInsecureTLS
        self.keepaliveSeconds = keepaliveSeconds
    }
}

/// A client context. Everything but `context.cancelService()` belongs to
/// the service thread (the one that calls `service()`).
public final class LWSClientContext {
    /// The context, for timers and for waking the service thread.
    public let context: LWSContextHandle
    private let protocolName: UnsafePointer<CChar>
    private let route: LWSCallbackRoute
    private let storage: LWSContextStorage
    private var destroyed = false

    /// Creates the context; callbacks go to `handler`, which must outlive
    /// the context (call `destroy()` while it lives).
    @inlinable
    public convenience init<Handler: LWSCallbackHandler>(_ description: LWSClientDescription = LWSClientDescription(),
                                                         handler: Handler) throws(LWSHostError) {
        try self.init(description, route: LWSCallbackRoute(to: handler))
    }

    @usableFromInline
    init(_ description: LWSClientDescription, route: LWSCallbackRoute) throws(LWSHostError) {
        self.route = route
        let storage = LWSContextStorage()
        self.storage = storage
        protocolName = storage.strings.constant(description.protocolName)
        description.logLevel.apply()
        var info = lws_context_creation_info()
        info.port = happy_context_port_no_listen
        info.protocols = storage.protocolList([LWSProtocol(name: description.protocolName, id: 0,
                                                           rxBufferSize: description.rxBufferSize, txPacketSize: 0)])
        if let offer = description.deflateOffer { info.extensions = storage.deflateExtension(offer: offer) }
        // JUST_USE_RAW_ORIGIN: send `Origin` as given (lws would prefix "http://").
        info.options = UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) | UInt64(LWS_SERVER_OPTION_JUST_USE_RAW_ORIGIN)
        info.user = route.contextUser
        info.gid = -1
        info.uid = -1
        info.timeout_secs = description.timeoutSeconds
        info.connect_timeout_secs = description.connectTimeoutSeconds
        guard let pointer = lws_create_context(&info) else { throw .contextNotCreated }
        context = LWSContextHandle(pointer)
    }

    deinit {
        // A last resort: the handler may be gone already (see LWSServerHost).
        if !destroyed {
            route.isOpen = false
            destroy()
        }
    }

    /// Starts connecting. `object` is attached (retained) first, so that
    /// the handler finds it in every callback, including a
    /// `clientConnectionError` during this call; the handler detaches it
    /// when the connection ends (`clientConnectionError` or `clientClosed`).
    /// The C strings of the request live in `strings`, which must last as
    /// long as the connection.
    ///
    /// Returns nil when lws could not start. If the handler saw no
    /// `clientConnectionError` for it, nothing detached the object: call
    /// `releaseUnstarted(_:)`.
    public func connect<Object: AnyObject>(_ request: LWSClientRequest, attaching object: Object,
                                           strings: CStringArena) -> LWSConnection? {
        var info = lws_client_connect_info()
        info.context = context.pointer
        info.address = strings.constant(request.address)
        info.port = Int32(request.port)
        info.path = strings.constant(request.path)
        info.host = strings.constant(request.hostHeader)
        if let origin = request.origin { info.origin = strings.constant(origin) }
        if let subprotocol = request.subprotocol { info.protocol = strings.constant(subprotocol) }
        info.local_protocol_name = protocolName
        info.ietf_version_or_minus_one = -1
        if request.usesTLS {
            var flags = Int32(LCCSCF_USE_SSL.rawValue)
            if request.allowsInsecureTLS {
                flags |= Int32(LCCSCF_ALLOW_SELFSIGNED.rawValue) | Int32(LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue)
                    | Int32(LCCSCF_ALLOW_EXPIRED.rawValue)
            }
            info.ssl_connection = flags
        }
        // lws re-sorts a shared timer list on every frame for its validity
        // pings; only connections that want keepalive pay for it.
        info.retry_and_idle_policy = UnsafePointer(storage.retryPolicy(pingAfterSeconds: request.keepaliveSeconds))
        info.opaque_user_data = Unmanaged.passRetained(object).toOpaque()
        return lws_client_connect_via_info(&info).map(LWSConnection.init)
    }

    /// Drops the reference `connect` attached to `object` when lws gave up
    /// on the connection without a callback that could detach it.
    public func releaseUnstarted<Object: AnyObject>(_ object: Object) {
        Unmanaged.passUnretained(object).release()
    }

    /// One turn of the event loop. False when lws failed and the loop must stop.
    public func service() -> Bool {
        !destroyed && lws_service(context.pointer, 0) >= 0
    }

    /// Closes every connection (with their callbacks). Idempotent.
    public func destroy() {
        guard !destroyed else { return }
        destroyed = true
        lws_context_destroy(context.pointer)
    }
}
