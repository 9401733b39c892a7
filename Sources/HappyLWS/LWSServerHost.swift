/// `LWSServerHost`: an lws server context with one listening vhost, made
/// from a plain Swift description, and the service loop around it.
///
/// The host owns every C structure lws keeps pointers to (protocol list,
/// mounts, extension list, retry policy, strings) until it is deinitialized,
/// after the context is gone.
internal import CWebSockets
import Glibc

/// A protocol a vhost speaks: a WebSocket subprotocol, or the name callback
/// mounts route their HTTP requests to.
public struct LWSProtocol: Sendable {
    public var name: String
    /// Handed back as the protocol's `id`; lws does not use it.
    public var id: UInt32
    /// Largest chunk a RECEIVE callback gets (0: lws's default).
    public var rxBufferSize: Int
    /// Largest write lws passes to the socket at once (0: no limit).
    public var txPacketSize: Int

    public init(name: String, id: UInt32, rxBufferSize: Int, txPacketSize: Int) {
        self.name = name
        self.id = id
        self.rxBufferSize = rxBufferSize
        self.txPacketSize = txPacketSize
    }
}

/// What the server context and its vhost look like.
public struct LWSServerDescription: Sendable {
    /// The interface address to listen on; IPv6 is on only when it holds a `:`.
    public var host: String
    /// 0 picks a free port (see `LWSServerHost.boundPort`).
    public var port: Int
    public var vhostName: String
    /// Subprotocols in order; a WebSocket client offering none gets the first.
    public var protocols: [LWSProtocol]
    /// Paths served by callbacks: requests under `mountpoint` go to the
    /// protocol named `protocolName` as `LWS_CALLBACK_HTTP`.
    public var callbackMounts: [(mountpoint: String, protocolName: String)]
    /// Static files: `directory` served at `mountpoint`, `defaultFile` for a
    /// directory. Tried before the callback mounts, which take their paths.
    public var fileMount: (mountpoint: String, directory: String, defaultFile: String)?
    /// Headers for the file mount's answers, per request.
    public var fileHeaders: LWSFileHeaders?
    /// Accept permessage-deflate, with this answer's parameters.
    public var permessageDeflate: Bool
    public var deflateParameters: String
    /// Serve HTTPS/WSS with these PEM files.
    public var tls: (certificatePath: String, privateKeyPath: String)?
    /// Reject text messages (and close reasons) that are not valid UTF-8.
    public var validatesUTF8: Bool
    /// Seconds a client has for its request headers and handshake
    /// (`timeout_secs`; lws restarts it per body chunk).
    public var requestTimeoutSeconds: UInt32
    /// Seconds an idle HTTP keep-alive connection stays open (`keepalive_timeout`).
    public var keepaliveTimeoutSeconds: Int32
    /// Seconds a connection may hold a header table without using it (`timeout_secs_ah_idle`).
    public var idleHeaderTimeoutSeconds: UInt32
    /// Largest request header block in bytes (`max_http_header_data`).
    public var maxHeaderBytes: UInt16
    /// The service thread's buffer for reading and building answers (`pt_serv_buf_size`).
    public var serviceBufferSize: UInt32
    public var alpn: String
    public var logLevel: LWSLogLevel
    /// Runs lws on an epoll (libev) loop instead of its poll() loop.
    public var usesEpoll: Bool
    /// A listening socket the caller owns: the host accepts from it (see
    /// `startAccepting`) and lws listens on nothing. Needs the epoll loop.
    public var listenSocket: LWSListenSocket?

    /// The defaults are the Happy server's settings.
    public init(host: String, port: Int, vhostName: String = "default", protocols: [LWSProtocol],
                callbackMounts: [(mountpoint: String, protocolName: String)] = [],
                fileMount: (mountpoint: String, directory: String, defaultFile: String)? = nil,
                fileHeaders: LWSFileHeaders? = nil, permessageDeflate: Bool = false,
                deflateParameters: String = "permessage-deflate; client_no_context_takeover; client_max_window_bits",
                tls: (certificatePath: String, privateKeyPath: String)? = nil, validatesUTF8: Bool = true,
                requestTimeoutSeconds: UInt32 = 10, keepaliveTimeoutSeconds: Int32 = 5,
                idleHeaderTimeoutSeconds: UInt32 = 10, maxHeaderBytes: UInt16 = 4096,
                serviceBufferSize: UInt32 = 32 * 1024, alpn: String = "http/1.1", logLevel: LWSLogLevel = .errors,
                usesEpoll: Bool = true) {
        self.host = host
        self.port = port
        self.vhostName = vhostName
        self.protocols = protocols
        self.callbackMounts = callbackMounts
        self.fileMount = fileMount
        self.fileHeaders = fileHeaders
        self.permessageDeflate = permessageDeflate
        self.deflateParameters = deflateParameters
        self.tls = tls
        self.validatesUTF8 = validatesUTF8
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.keepaliveTimeoutSeconds = keepaliveTimeoutSeconds
        self.idleHeaderTimeoutSeconds = idleHeaderTimeoutSeconds
        self.maxHeaderBytes = maxHeaderBytes
        self.serviceBufferSize = serviceBufferSize
        self.alpn = alpn
        self.logLevel = logLevel
        self.usesEpoll = usesEpoll
    }
}

/// Why a context could not be made.
public enum LWSHostError: Error, Sendable, Equatable {
    /// `lws_create_context` failed.
    case contextNotCreated
    /// The vhost could not be made: the port is taken or the address is not local.
    case cannotListen
}

/// A server context and its vhost. Everything but `context.cancelService()`
/// belongs to the service thread (the one that calls `service()`).
public final class LWSServerHost {
    /// The context, for timers and for waking the service thread.
    public let context: LWSContextHandle
    /// The port the vhost listens on (the chosen one when asked for 0).
    public let boundPort: Int
    private let route: LWSCallbackRoute
    private let storage: LWSContextStorage
    private var destroyed = false
    private let vhost: OpaquePointer
    private let listenSocket: LWSListenSocket?
    private let servesTLS: Bool
    /// Decides, from the peer's address, whether an accepted socket is served (`startAccepting`).
    private var acceptFilter: ((_ address: String, _ descriptor: Int32) -> Bool)?
    private let listener: UnsafeMutablePointer<happy_listener> = {
        let listener = UnsafeMutablePointer<happy_listener>.allocate(capacity: 1)
        listener.initialize(to: happy_listener())
        return listener
    }()
    /// Connections taken from the backlog at most per wake-up, so that a
    /// crowd arriving at once does not hold the loop from the others.
    static let acceptsPerTurn = 256

    /// Creates the context and starts listening; callbacks go to `handler`,
    /// which must outlive the context (call `destroy()` while it lives).
    @inlinable
    public convenience init<Handler: LWSCallbackHandler>(_ description: LWSServerDescription,
                                                         handler: Handler) throws(LWSHostError) {
        try self.init(description, route: LWSCallbackRoute(to: handler))
    }

    @usableFromInline
    init(_ description: LWSServerDescription, route: LWSCallbackRoute) throws(LWSHostError) {
        self.route = route
        route.fileHeaders = description.fileHeaders
        let storage = LWSContextStorage()
        self.storage = storage
        description.logLevel.apply()

        var info = lws_context_creation_info()
        info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS)
        if description.validatesUTF8 { info.options |= UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8) }
        if description.tls != nil { info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) }
        info.user = route.contextUser
        info.pt_serv_buf_size = description.serviceBufferSize
        info.count_threads = 1
        info.timeout_secs = description.requestTimeoutSeconds
        info.max_http_header_data = description.maxHeaderBytes
        info.gid = -1
        info.uid = -1
        // lws's poll() loop walks every descriptor on each wake-up; on an
        // epoll loop a wake-up costs what is ready. The loop is ours (a
        // "foreign" loop to lws), so lws installs no signal handlers.
        let eventLoop = description.usesEpoll ? happy_event_loop_new() : nil
        var foreignLoops: [UnsafeMutableRawPointer?] = [eventLoop]
        if eventLoop != nil { info.options |= happy_option_libev }
        let created = foreignLoops.withUnsafeMutableBufferPointer { loops -> OpaquePointer? in
            if eventLoop != nil { info.foreign_loops = loops.baseAddress }
            return lws_create_context(&info)
        }
        info.foreign_loops = nil
        guard let pointer = created else {
            if let eventLoop { happy_event_loop_destroy(eventLoop) }
            throw .contextNotCreated
        }
        if let eventLoop {
            happy_loop_nudge_start(eventLoop, storage.loopNudge, pointer)
            happy_loop_wait_start(eventLoop, storage.loopWait)
            route.loopNudge = (eventLoop, storage.loopNudge)
        }

        var vhostInfo = lws_context_creation_info()
        vhostInfo.port = description.listenSocket == nil ? Int32(description.port) : Int32(happy_port_no_listen_server)
        vhostInfo.iface = storage.strings.constant(description.host)
        vhostInfo.vhost_name = storage.strings.constant(description.vhostName)
        vhostInfo.options = description.validatesUTF8 ? UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8) : 0
        if !description.host.contains(":") { vhostInfo.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        // No lws idle-validity timer: it re-sorts one list on every received
        // frame. Keepalive is the owner's periodic sweep.
        vhostInfo.retry_and_idle_policy = UnsafePointer(storage.retryPolicy(pingAfterSeconds: nil))
        vhostInfo.alpn = storage.strings.constant(description.alpn)
        vhostInfo.keepalive_timeout = description.keepaliveTimeoutSeconds
        vhostInfo.timeout_secs_ah_idle = description.idleHeaderTimeoutSeconds
        vhostInfo.protocols = storage.protocolList(description.protocols)
        vhostInfo.mounts = storage.mountChain(description)
        if description.permessageDeflate {
            vhostInfo.extensions = storage.deflateExtension(offer: description.deflateParameters)
        }
        if let tls = description.tls {
            vhostInfo.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            vhostInfo.ssl_cert_filepath = storage.strings.constant(tls.certificatePath)
            vhostInfo.ssl_private_key_filepath = storage.strings.constant(tls.privateKeyPath)
        }
        guard let vhost = lws_create_vhost(pointer, &vhostInfo) else {
            lws_context_destroy(pointer)
            route.destroyEventLoop()
            throw .cannotListen
        }
        context = LWSContextHandle(pointer)
        self.vhost = vhost
        listenSocket = description.listenSocket
        servesTLS = description.tls != nil
        boundPort = description.listenSocket?.port ?? Int(lws_get_vhost_listen_port(vhost))
    }

    /// Accepts connections from the listening socket on every wake-up it
    /// has some, each one the filter lets through handed to lws (the others
    /// closed at once, before a byte is read).
    public func startAccepting(filter: @escaping (_ address: String, _ descriptor: Int32) -> Bool) {
        guard let listenSocket, let (loop, _) = route.loopNudge, acceptFilter == nil else { return }
        acceptFilter = filter
        happy_listener_start(loop, listener, listenSocket.descriptor, Unmanaged.passUnretained(self).toOpaque(),
                             lwsListenerReady)
    }

    /// Stops taking connections; they wait in the socket's backlog for
    /// whoever accepts next (the process taking over).
    public func stopAccepting() {
        guard acceptFilter != nil, let (loop, _) = route.loopNudge else { return }
        happy_listener_stop(loop, listener)
        acceptFilter = nil
    }

    /// The listener's wake-up: what waits in the backlog, up to `acceptsPerTurn`.
    fileprivate func acceptWaiting() {
        guard let listenSocket, let filter = acceptFilter else { return }
        for _ in 0..<Self.acceptsPerTurn {
            guard let (fd, address) = listenSocket.accept() else { return }
            guard filter(address, fd), happy_adopt(vhost, fd, servesTLS ? 1 : 0) != 0 else {
                // lws closes a socket it failed to adopt; a refused one is ours to close.
                if acceptFilter != nil { Glibc.close(fd) }
                continue
            }
        }
    }

    deinit {
        // A last resort: the handler may be gone already, so lws's closing
        // callbacks go nowhere (attached objects are not released).
        if !destroyed {
            route.isOpen = false
            destroy()
        }
    }

    /// One turn of the event loop: waits for socket events, timers or a
    /// `cancelService`, and runs their callbacks. False when lws failed and
    /// the loop must stop.
    public func service() -> Bool {
        guard !destroyed else { return false }
        guard let (eventLoop, _) = route.loopNudge else { return lws_service(context.pointer, 0) >= 0 }
        if route.loopCheckDue {
            // The wake-up is a socket event: lws's idle check follows it.
            route.loopCheckDue = false
            lws_cancel_service(context.pointer)
        }
        happy_event_loop_run_once(eventLoop)
        return true
    }

    /// One turn that runs what is ready now and never waits. On lws's own
    /// poll() loop, which has no such turn, it does nothing. False when the
    /// host is gone.
    public func serviceWithoutWaiting() -> Bool {
        guard !destroyed else { return false }
        if let (eventLoop, _) = route.loopNudge { happy_event_loop_run_nowait(eventLoop) }
        return true
    }

    /// Seconds the event loop waited for events since the last call: the
    /// service thread's idle time. Nil on lws's own poll() loop, which is
    /// not measured.
    public func takeWaitedSeconds() -> Double? {
        guard route.loopNudge != nil, !destroyed else { return nil }
        return happy_loop_wait_take(storage.loopWait)
    }

    /// Closes every connection (with their callbacks) and the listening
    /// socket. Cancel the context's timers first. Idempotent.
    public func destroy() {
        guard !destroyed else { return }
        destroyed = true
        stopAccepting()
        lws_context_destroy(context.pointer)
        route.destroyEventLoop()
        listener.deallocate()
    }
}

/// The listening socket has connections waiting.
private func lwsListenerReady(_ owner: UnsafeMutableRawPointer?) {
    guard let owner else { return }
    Unmanaged<LWSServerHost>.fromOpaque(owner).takeUnretainedValue().acceptWaiting()
}

extension LWSCallbackRoute {
    /// Stops the nudge and frees the epoll loop, once lws has let go of it.
    func destroyEventLoop() {
        guard let (loop, nudge) = loopNudge else { return }
        loopNudge = nil
        happy_loop_nudge_stop(loop, nudge)
        happy_event_loop_destroy(loop)
    }
}

/// The C structures a context points into, freed after it.
final class LWSContextStorage {
    let strings = CStringArena()
    let loopNudge: UnsafeMutablePointer<happy_loop_nudge> = {
        let nudge = UnsafeMutablePointer<happy_loop_nudge>.allocate(capacity: 1)
        nudge.initialize(to: happy_loop_nudge())
        return nudge
    }()
    let loopWait: UnsafeMutablePointer<happy_loop_wait> = {
        let wait = UnsafeMutablePointer<happy_loop_wait>.allocate(capacity: 1)
        wait.initialize(to: happy_loop_wait())
        return wait
    }()
    private var protocolLists: [UnsafeMutablePointer<lws_protocols>] = []
    private var mounts: [UnsafeMutablePointer<lws_http_mount>] = []
    private var extensionLists: [UnsafeMutablePointer<lws_extension>] = []
    private var retryPolicies: [UInt16?: UnsafeMutablePointer<lws_retry_bo_t>] = [:]

    deinit {
        loopNudge.deallocate()
        loopWait.deallocate()
        for list in protocolLists { list.deallocate() }
        for mount in mounts { mount.deallocate() }
        for list in extensionLists { list.deallocate() }
        for policy in retryPolicies.values { policy.deallocate() }
    }

    /// The protocols, every one with the routed callback, and the terminator.
    func protocolList(_ protocols: [LWSProtocol]) -> UnsafePointer<lws_protocols> {
        let list = UnsafeMutablePointer<lws_protocols>.allocate(capacity: protocols.count + 1)
        for (index, entry) in protocols.enumerated() {
            (list + index).initialize(to: lws_protocols(
                name: strings.constant(entry.name), callback: lwsRoutedCallback, per_session_data_size: 0,
                rx_buffer_size: entry.rxBufferSize, id: entry.id, user: nil, tx_packet_size: entry.txPacketSize))
        }
        (list + protocols.count).initialize(to: lws_protocols())
        protocolLists.append(list)
        return UnsafePointer(list)
    }

    /// The file mount first, then the callback mounts in their order.
    func mountChain(_ description: LWSServerDescription) -> UnsafePointer<lws_http_mount>? {
        var chain: UnsafeMutablePointer<lws_http_mount>? = nil
        for entry in description.callbackMounts.reversed() {
            chain = mount(at: entry.mountpoint, origin: entry.protocolName, kind: LWSMPRO_CALLBACK, next: chain)
        }
        if let files = description.fileMount {
            let fileMount = mount(at: files.mountpoint, origin: files.directory, kind: LWSMPRO_FILE, next: chain)
            fileMount.pointee.def = strings.constant(files.defaultFile)
            if let bound = description.fileHeaders?.protocolName { fileMount.pointee.protocol = strings.constant(bound) }
            chain = fileMount
        }
        return chain.map { UnsafePointer($0) }
    }

    private func mount(at mountpoint: String, origin: String, kind: lws_mount_protocols,
                       next: UnsafeMutablePointer<lws_http_mount>?) -> UnsafeMutablePointer<lws_http_mount> {
        let mount = UnsafeMutablePointer<lws_http_mount>.allocate(capacity: 1)
        mount.initialize(to: lws_http_mount())
        mount.pointee.mount_next = UnsafePointer(next)
        mount.pointee.mountpoint = strings.constant(mountpoint)
        mount.pointee.mountpoint_len = UInt8(mountpoint.utf8.count)
        mount.pointee.origin = strings.constant(origin)
        if kind == LWSMPRO_CALLBACK { mount.pointee.protocol = strings.constant(origin) }
        mount.pointee.origin_protocol = UInt8(kind.rawValue)
        mounts.append(mount)
        return mount
    }

    /// permessage-deflate (lws's own implementation) and the terminator.
    func deflateExtension(offer: String) -> UnsafePointer<lws_extension> {
        let list = UnsafeMutablePointer<lws_extension>.allocate(capacity: 2)
        list.initialize(to: lws_extension(name: strings.constant("permessage-deflate"),
                                          callback: lws_extension_callback_pm_deflate,
                                          client_offer: strings.constant(offer)))
        (list + 1).initialize(to: lws_extension())
        extensionLists.append(list)
        return UnsafePointer(list)
    }

    /// A retry and idle policy, one per ping interval: zeroed (no lws
    /// keepalive) for nil, else a ping after `seconds` idle and a hangup
    /// after twice that. lws keeps the pointer for the connection's life.
    func retryPolicy(pingAfterSeconds seconds: UInt16?) -> UnsafeMutablePointer<lws_retry_bo_t> {
        let key = seconds.flatMap { $0 > 0 ? $0 : nil }
        if let policy = retryPolicies[key] { return policy }
        let policy = UnsafeMutablePointer<lws_retry_bo_t>.allocate(capacity: 1)
        policy.initialize(to: lws_retry_bo_t())
        if let key {
            policy.pointee.secs_since_valid_ping = key
            policy.pointee.secs_since_valid_hangup = key.multipliedReportingOverflow(by: 2).overflow ? .max : key * 2
        }
        retryPolicies[key] = policy
        return policy
    }
}
