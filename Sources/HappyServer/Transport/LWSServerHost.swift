import CWebSockets
import Foundation
import HappyCore

/// The server's libwebsockets context and its one vhost: protocols, mounts
/// (router mount points, then files from `webRoot`), permessage-deflate,
/// TLS, and the two timers (sweep, stream wave). Owns every C structure
/// and string it hands to lws.
final class LWSServerHost {
    /// Largest number of bytes lws writes in one go (matches the write batch).
    let txPacketSize: Int
    private(set) var context: OpaquePointer?
    private(set) var boundPort = 0
    let sweepTimer: UnsafeMutablePointer<happy_timer>
    let streamTimer: UnsafeMutablePointer<happy_timer>
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private var mounts: [UnsafeMutablePointer<lws_http_mount>] = []
    private var extensions: UnsafeMutablePointer<lws_extension>?
    private let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>

    init(txPacketSize: Int) {
        self.txPacketSize = txPacketSize
        sweepTimer = .allocate(capacity: 1)
        sweepTimer.initialize(to: happy_timer())
        streamTimer = .allocate(capacity: 1)
        streamTimer.initialize(to: happy_timer())
        retryPolicy = .allocate(capacity: 1)
        // No lws idle-validity timer: it re-sorts a global list on every frame.
        // Keepalive runs as one periodic sweep instead.
        retryPolicy.initialize(to: lws_retry_bo_t())
    }

    deinit {
        sweepTimer.deallocate()
        streamTimer.deallocate()
        retryPolicy.deallocate()
        protocols?.deallocate()
        extensions?.deallocate()
        for mount in mounts { mount.deallocate() }
        for string in cStrings { free(string) }
    }

    /// Owned C copy of `text`, alive as long as the host.
    private func cString(_ text: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(text)!
        cStrings.append(copy)
        return copy
    }

    /// Creates the context and starts listening; `owner` is what the
    /// callbacks find in the context's user pointer. Returns the fd limit.
    func start(config: HappyConfig, webRoot: String, mountPoints: [String], owner: UnsafeMutableRawPointer,
               debugLogging: Bool) throws(ServerError) -> Int {
        happy_ignore_sigpipe()
        let fdLimit = happy_raise_fd_limit()
        lws_set_log_level(Int32(debugLogging ? (LLL_ERR | LLL_WARN) : LLL_ERR), nil)
        var info = lws_context_creation_info()
        info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS) | UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
        if config.tls.isEnabled { info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) }
        info.user = owner
        info.pt_serv_buf_size = 32 * 1024
        info.count_threads = 1
        // Slow or stalled clients: the handshake and request headers must
        // arrive within this many seconds (lws does not extend it per byte;
        // it does per body chunk, see HTTPIntake.body).
        info.timeout_secs = UInt32(HTTPIntake.requestTimeoutSeconds)
        info.max_http_header_data = 4096
        info.gid = -1
        info.uid = -1
        guard let context = lws_create_context(&info) else {
            throw ServerError("could not create the libwebsockets context")
        }
        self.context = context
        var vinfo = lws_context_creation_info()
        configureVhost(&vinfo, config: config, webRoot: webRoot, mountPoints: mountPoints)
        guard let vhost = lws_create_vhost(context, &vinfo) else {
            lws_context_destroy(context)
            self.context = nil
            throw ServerError("could not listen on \(config.host):\(config.port) "
                + "(is the port in use or the address not local? change \"port\"/\"host\" or use --port)")
        }
        boundPort = Int(lws_get_vhost_listen_port(vhost))
        sweepTimer.pointee.owner = owner
        streamTimer.pointee.owner = owner
        return fdLimit
    }

    private func configureVhost(_ vinfo: inout lws_context_creation_info, config: HappyConfig, webRoot: String,
                                mountPoints: [String]) {
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
        protocolList[0] = lws_protocols(name: UnsafePointer(cString("happy.v1")), callback: happyServerCallback,
                                        per_session_data_size: 0, rx_buffer_size: 1024, id: 0, user: nil,
                                        tx_packet_size: txPacketSize)
        protocolList[1] = lws_protocols(name: UnsafePointer(cString("happy-http")), callback: happyServerCallback,
                                        per_session_data_size: 0, rx_buffer_size: 0, id: 1, user: nil,
                                        tx_packet_size: txPacketSize)
        protocolList[2] = lws_protocols()
        protocols = protocolList
        vinfo.protocols = UnsafePointer(protocolList)

        var chain: UnsafeMutablePointer<lws_http_mount>? = nil
        for route in mountPoints.reversed() {
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

    /// One turn of the event loop; false when lws gave up.
    func serviceTurn() -> Bool {
        guard let context else { return false }
        return lws_service(context, 0) >= 0
    }

    func scheduleSweep(afterSeconds seconds: Double) {
        guard let context else { return }
        lws_sul_schedule(context, 0, &sweepTimer.pointee.sul, happySweepCallback, lws_usec_t(seconds * 1_000_000))
    }

    func scheduleStreamTick(afterSeconds seconds: Double) {
        guard let context else { return }
        lws_sul_schedule(context, 0, &streamTimer.pointee.sul, happyStreamTickCallback, lws_usec_t(seconds * 1_000_000))
    }

    /// What other threads need to wake the service thread.
    var handle: ContextHandle? { context.map(ContextHandle.init(pointer:)) }

    func destroy() {
        lws_sul_cancel(&sweepTimer.pointee.sul)
        lws_sul_cancel(&streamTimer.pointee.sul)
        if let context { lws_context_destroy(context) }
        context = nil
    }

    /// Hands freed heap memory back to the kernel (glibc).
    static func releaseFreeMemory() {
        happy_release_free_memory()
    }
}
