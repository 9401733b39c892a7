import CWebSockets
import Dispatch
import Foundation
import HappyCore
import HappyRender

/// Why the server could not start.
public struct ServerError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The Happy server: one libwebsockets context whose service thread owns
/// every room, connection and HTTP exchange. Only `requestShutdown()` may be
/// called from another thread; everything else runs on the service thread.
public final class HappyServer: @unchecked Sendable {
    public let config: HappyConfig
    let logger: Logger
    let rules: SceneRules
    /// Peers whose `X-Forwarded-For` names the client (`trustedProxies`).
    let trustedProxies: TrustedProxies
    let reducer: SceneReducer
    let metrics = Metrics()
    let inbox = WakeInbox()
    let storeWorker: StoreWorker
    let startedAt = SystemTime.monotonicSeconds()
    /// Largest number of bytes coalesced into one socket write.
    static let writeBatchBytes = 32 * 1024
    /// Seconds a client has for its request headers (and handshake), and for a whole request body.
    static let requestTimeoutSeconds = 10.0

    var context: OpaquePointer?
    var vhost: OpaquePointer?
    public private(set) var boundPort = 0

    var pipeline = CommitPipeline()
    var turnClock = TurnClock()
    var rooms: [String: RoomRuntime] = [:]
    var occupiedRoomCount = 0
    var connections: [Connection] = []
    var admittedCount = 0
    var nextSerial: UInt64 = 0
    var httpRateLimits: [String: HTTPRateLimit] = [:]
    /// Checks access tokens when `auth.secret` is set.
    public var tokenVerifier: TokenVerifier?
    /// Other nodes sharing the rooms (cluster mode), or nil.
    public var clusterBus: ClusterBus?
    /// Frames for `/frame` and `/stream` (set by `start()` once the art is loaded).
    var frames: FrameProducer?
    var frameStreams: [FrameStream] = []
    let streamTimer: UnsafeMutablePointer<happy_timer>
    /// When the stream timer is due, if armed (monotonic seconds).
    var streamTickDue: Double?
    var storeHealthy = true
    var storeProblem = ""
    var lastStoreFailureLog = 0.0
    var churnAtLastTrim = 0
    var connectionsByAddress: [String: Int] = [:]
    var acceptedAddresses: [Int32: String] = [:]
    var addressByConnection: [OpaquePointer: String] = [:]
    var refusalsLogged: [String: Int] = [:]

    var shuttingDown = false
    var shutdownDeadline = 0.0
    private var closingClients = false
    private var stopped = false

    let scratch: UnsafeMutablePointer<UInt8>
    let sweepTimer: UnsafeMutablePointer<happy_timer>
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private var mounts: [UnsafeMutablePointer<lws_http_mount>] = []
    private var extensions: UnsafeMutablePointer<lws_extension>?
    private let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>
    private var signalSources: [DispatchSourceSignal] = []

    public init(config: HappyConfig, store: any RoomStore, logger: Logger) {
        self.config = config
        self.logger = logger
        rules = config.sceneRules
        trustedProxies = config.proxies
        reducer = SceneReducer(rules: rules)
        storeWorker = StoreWorker(store: store, inbox: inbox)
        scratch = .allocate(capacity: OutboundFrame.headroom + Self.writeBatchBytes)
        sweepTimer = .allocate(capacity: 1)
        sweepTimer.initialize(to: happy_timer())
        streamTimer = .allocate(capacity: 1)
        streamTimer.initialize(to: happy_timer())
        retryPolicy = .allocate(capacity: 1)
        // No lws idle-validity timer: it re-sorts a global list on every frame.
        // Keepalive runs as one periodic sweep instead (see sweep()).
        retryPolicy.initialize(to: lws_retry_bo_t())
    }

    deinit {
        scratch.deallocate()
        sweepTimer.deallocate()
        streamTimer.deallocate()
        retryPolicy.deallocate()
        protocols?.deallocate()
        extensions?.deallocate()
        for mount in mounts { mount.deallocate() }
        for string in cStrings { free(string) }
    }

    /// Owned C copy of `text`, alive as long as the server.
    func cString(_ text: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(text)!
        cStrings.append(copy)
        return copy
    }

    // MARK: start

    /// Creates the lws context and starts listening.
    public func start() throws(ServerError) {
        happy_ignore_sigpipe()
        let fdLimit = happy_raise_fd_limit()
        lws_set_log_level(Int32(logger.isEnabled(.debug) ? (LLL_ERR | LLL_WARN) : LLL_ERR), nil)
        let webRoot = try checkedWebRoot()
        frames = FrameProducer(renderer: try makeFrameRenderer(webRoot: webRoot), inbox: inbox, metrics: metrics)

        var info = lws_context_creation_info()
        info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS)
            | UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
        if config.tls.isEnabled { info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) }
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.pt_serv_buf_size = 32 * 1024
        info.count_threads = 1
        // Slow or stalled clients: the handshake and request headers must
        // arrive within this many seconds (lws does not extend it per byte;
        // it does per body chunk, see httpBody).
        info.timeout_secs = UInt32(Self.requestTimeoutSeconds)
        info.max_http_header_data = 4096
        info.gid = -1
        info.uid = -1
        guard let context = lws_create_context(&info) else {
            throw ServerError("could not create the libwebsockets context")
        }
        self.context = context
        inbox.attach(ContextHandle(pointer: context))

        var vinfo = lws_context_creation_info()
        configureVhost(&vinfo, webRoot: webRoot)
        guard let vhost = lws_create_vhost(context, &vinfo) else {
            lws_context_destroy(context)
            self.context = nil
            throw ServerError("could not listen on \(config.host):\(config.port) "
                + "(is the port in use or the address not local? change \"port\"/\"host\" or use --port)")
        }
        self.vhost = vhost
        boundPort = Int(lws_get_vhost_listen_port(vhost))

        startClusterBus()
        sweepTimer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        streamTimer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        scheduleSweep()
        installSignalHandlers()
        let scheme = config.tls.isEnabled ? "https" : "http"
        logger.lifecycle("listening", ["url": "\(scheme)://\(config.host):\(boundPort)/", "port": "\(boundPort)",
                                  "store": storeWorker.store.kind, "webRoot": config.webRoot,
                                  "fdLimit": "\(fdLimit)"])
    }

    /// The absolute path of `webRoot`, which must be a directory.
    private func checkedWebRoot() throws(ServerError) -> String {
        let webRoot = URL(fileURLWithPath: config.webRoot).standardizedFileURL.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: webRoot, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ServerError("webRoot \"\(config.webRoot)\" (\(webRoot)) is not a directory; set \"webRoot\" in the config")
        }
        return webRoot
    }

    private func configureVhost(_ vinfo: inout lws_context_creation_info, webRoot: String) {
        vinfo.port = Int32(config.port)
        vinfo.iface = UnsafePointer(cString(config.host))
        vinfo.vhost_name = UnsafePointer(cString("happy"))
        vinfo.options = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
        if !config.host.contains(":") { vinfo.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        vinfo.retry_and_idle_policy = UnsafePointer(retryPolicy)
        vinfo.alpn = UnsafePointer(cString("http/1.1"))
        vinfo.keepalive_timeout = 5
        vinfo.timeout_secs_ah_idle = 10

        let protocolList = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 3)
        let rxBuffer = 1024
        protocolList[0] = lws_protocols(name: UnsafePointer(cString("happy.v1")), callback: happyServerCallback,
                                        per_session_data_size: 0, rx_buffer_size: rxBuffer, id: 0, user: nil,
                                        tx_packet_size: Self.writeBatchBytes)
        protocolList[1] = lws_protocols(name: UnsafePointer(cString("happy-http")), callback: happyServerCallback,
                                        per_session_data_size: 0, rx_buffer_size: 0, id: 1, user: nil,
                                        tx_packet_size: Self.writeBatchBytes)
        protocolList[2] = lws_protocols()
        protocols = protocolList
        vinfo.protocols = UnsafePointer(protocolList)

        var chain: UnsafeMutablePointer<lws_http_mount>? = nil
        for route in HTTPRoute.mountPoints.reversed() {
            chain = makeMount(mountpoint: route, origin: "happy-http", kind: LWSMPRO_CALLBACK, next: chain)
        }
        let fileMount = makeMount(mountpoint: "/", origin: webRoot, kind: LWSMPRO_FILE, next: chain)
        fileMount.pointee.def = UnsafePointer(cString("index.html"))
        vinfo.mounts = UnsafePointer(fileMount)

        if config.compression {
            let list = UnsafeMutablePointer<lws_extension>.allocate(capacity: 2)
            list[0] = lws_extension(name: UnsafePointer(cString("permessage-deflate")),
                                    callback: lws_extension_callback_pm_deflate,
                                    client_offer: UnsafePointer(cString("permessage-deflate; client_no_context_takeover; client_max_window_bits")))
            list[1] = lws_extension()
            extensions = list
            vinfo.extensions = UnsafePointer(list)
        }
        if config.tls.isEnabled {
            vinfo.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            vinfo.ssl_cert_filepath = UnsafePointer(cString(config.tls.cert))
            vinfo.ssl_private_key_filepath = UnsafePointer(cString(config.tls.key))
        }
    }

    private func makeMount(mountpoint: String, origin: String, kind: lws_mount_protocols,
                           next: UnsafeMutablePointer<lws_http_mount>?) -> UnsafeMutablePointer<lws_http_mount> {
        let mount = UnsafeMutablePointer<lws_http_mount>.allocate(capacity: 1)
        mount.initialize(to: lws_http_mount())
        mount.pointee.mount_next = UnsafePointer(next)
        mount.pointee.mountpoint = UnsafePointer(cString(mountpoint))
        mount.pointee.mountpoint_len = UInt8(mountpoint.utf8.count)
        mount.pointee.origin = UnsafePointer(cString(origin))
        if kind == LWSMPRO_CALLBACK { mount.pointee.protocol = UnsafePointer(cString(origin)) }
        mount.pointee.origin_protocol = UInt8(kind.rawValue)
        mounts.append(mount)
        return mount
    }

    private func installSignalHandlers() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            let inbox = self.inbox
            source.setEventHandler { inbox.post(.shutdownRequested(signal: signalNumber)) }
            source.resume()
            signalSources.append(source)
        }
    }

    // MARK: run

    /// Serves until shut down. Call from the thread that called `start()`.
    public func run() {
        guard let context else { return }
        while !stopped {
            if lws_service(context, 0) < 0 { break }
            afterServiceTurn()
        }
        teardown()
    }

    /// Asks the server to stop; safe from any thread.
    public func requestShutdown() {
        inbox.post(.shutdownRequested(signal: 0))
    }

    /// Work due at the end of every loop turn: the group commit.
    func afterServiceTurn() {
        turnClock.nextTurn()
        flushCommits()
        if shuttingDown { continueShutdown() }
    }

    /// Stops taking intents; once the last group commit is out, every client
    /// gets what was recorded and then close 1001.
    func beginShutdown(signal: Int32) {
        guard !shuttingDown else { return }
        shuttingDown = true
        shutdownDeadline = SystemTime.monotonicSeconds() + 3
        logger.lifecycle("shutting down", ["signal": signal == 0 ? "request" : "\(signal)",
                                           "connections": "\(connections.count)", "streams": "\(frameStreams.count)"])
    }

    /// Runs after every loop turn while shutting down (the sweep timer
    /// guarantees a turn at least every second).
    private func continueShutdown() {
        if !closingClients && pipeline.isIdle {
            closingClients = true
            // Time to deliver what is recorded, then for the close handshakes.
            shutdownDeadline = max(shutdownDeadline, SystemTime.monotonicSeconds() + 1 + Double(Self.closeAckSeconds))
            for connection in connections {
                connection.close(code: WebSocketCloseCode.goingAway, reason: "server shutting down", afterDrain: true)
            }
            endStreams()
        }
        if (closingClients && connections.isEmpty && frameStreams.isEmpty) || SystemTime.monotonicSeconds() > shutdownDeadline {
            stopped = true
        }
    }

    private func teardown() {
        for source in signalSources { source.cancel() }
        inbox.attach(nil)
        clusterBus?.stop()
        lws_sul_cancel(&sweepTimer.pointee.sul)
        lws_sul_cancel(&streamTimer.pointee.sul)
        if let context { lws_context_destroy(context) }
        context = nil
        storeWorker.close()
        logger.lifecycle("stopped", ["intents": "\(metrics.intents.values.reduce(0, +))", "events": "\(metrics.events)"])
    }

    // MARK: inbox

    func drainInbox() {
        for message in inbox.drain() {
            switch message {
            case .roomLoaded(let room, let result):
                roomLoaded(room, result: result)
            case .roomRefreshed(let room, let result):
                roomRefreshed(room, result: result)
            case .commitFinished(let batch, let result, let seconds):
                commitFinished(batch: batch, result: result, seconds: seconds)
            case .shutdownRequested(let signal):
                beginShutdown(signal: signal)
            case .task(let task):
                task.run()
            }
        }
    }
}
