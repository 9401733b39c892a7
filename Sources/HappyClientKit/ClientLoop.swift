import CWebSockets
import Foundation
import HappyCore
import Synchronization

/// Why a client loop could not start.
public struct ClientError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// An lws client context with its own service thread. It can carry many
/// connections (a test's clients, a benchmark's thousands of subscribers).
/// Other threads talk to it through a locked command queue and
/// `lws_cancel_service`, as lws requires.
public final class ClientLoop: @unchecked Sendable {
    enum Command {
        case connect(WebSocketConnection)
        case wantWrite(WebSocketConnection)
        case abort(WebSocketConnection)
        case flowControl(WebSocketConnection, Bool)
        case run(@Sendable () -> Void)
        case stop
    }

    private var context: OpaquePointer?
    private let commands = Mutex<[Command]>([])
    private var thread: Thread?
    private let stopped = NSCondition()
    private var running = true
    private var isStopped = false
    private var protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolName = strdup("happy-client")!
    /// permessage-deflate, offered only by connections that ask for it.
    private let extensions: UnsafeMutablePointer<lws_extension>
    private let deflateName = strdup("permessage-deflate")!
    private let deflateOffer = strdup("permessage-deflate; client_max_window_bits")!
    private let writeBuffer: UnsafeMutablePointer<UInt8>
    private var writeBufferSize = 64 * 1024

    public init(name: String = "happy-client") throws(ClientError) {
        happy_ignore_sigpipe()
        _ = happy_raise_fd_limit()
        writeBuffer = .allocate(capacity: Int(happy_lws_pre) + writeBufferSize)
        protocols = .allocate(capacity: 2)
        protocols[0] = lws_protocols(name: UnsafePointer(protocolName), callback: happyClientCallback,
                                     per_session_data_size: 0, rx_buffer_size: 65536, id: 0, user: nil,
                                     tx_packet_size: 0)
        protocols[1] = lws_protocols()
        extensions = .allocate(capacity: 2)
        extensions[0] = lws_extension(name: UnsafePointer(deflateName), callback: lws_extension_callback_pm_deflate,
                                      client_offer: UnsafePointer(deflateOffer))
        extensions[1] = lws_extension()
        var info = lws_context_creation_info()
        info.port = happy_context_port_no_listen
        info.protocols = UnsafePointer(protocols)
        info.extensions = UnsafePointer(extensions)
        // JUST_USE_RAW_ORIGIN: send `Origin` as given (lws would prefix "http://").
        info.options = UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) | UInt64(LWS_SERVER_OPTION_JUST_USE_RAW_ORIGIN)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.gid = -1
        info.uid = -1
        info.timeout_secs = 10
        info.connect_timeout_secs = 10
        lws_set_log_level(Int32(LLL_ERR), nil)
        guard let context = lws_create_context(&info) else {
            writeBuffer.deallocate()
            protocols.deallocate()
            extensions.deallocate()
            throw ClientError("could not create a libwebsockets client context")
        }
        self.context = context
        let thread = Thread { [unowned self] in self.serve() }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    deinit {
        shutdown()
        writeBuffer.deallocate()
        protocols.deallocate()
        extensions.deallocate()
        free(protocolName)
        free(deflateName)
        free(deflateOffer)
    }

    /// Opens a connection. Events go to `delegate` (on this loop's thread),
    /// or, without one, to the connection's own queue (`nextEvent`).
    public func connect(_ url: WebSocketURL, options: WebSocketOptions = WebSocketOptions(),
                        delegate: WebSocketDelegate? = nil) -> WebSocketConnection {
        let connection = WebSocketConnection(loop: self, url: url, options: options, delegate: delegate)
        post(.connect(connection))
        return connection
    }

    /// Closes every connection and stops the thread; waits for it.
    public func shutdown() {
        stopped.lock()
        let alreadyStopped = isStopped
        stopped.unlock()
        if alreadyStopped { return }
        post(.stop)
        stopped.lock()
        while !isStopped { stopped.wait() }
        stopped.unlock()
    }

    /// Runs `body` on the loop's thread (where delegates are called).
    public func perform(_ body: @escaping @Sendable () -> Void) {
        post(.run(body))
    }

    func post(_ command: Command) {
        commands.withLock { $0.append(command) }
        if let context { lws_cancel_service(context) }
    }

    private func serve() {
        guard let context else { return }
        while running {
            if lws_service(context, 0) < 0 { break }
        }
        lws_context_destroy(context)
        self.context = nil
        stopped.lock()
        isStopped = true
        stopped.broadcast()
        stopped.unlock()
    }

    // MARK: loop thread

    func drainCommands() {
        let pending = commands.withLock { list in
            let taken = list
            list.removeAll()
            return taken
        }
        for command in pending {
            switch command {
            case .connect(let connection): open(connection)
            case .wantWrite(let connection):
                if let wsi = connection.wsi { lws_callback_on_writable(wsi) }
            case .abort(let connection):
                if let wsi = connection.wsi { lws_set_timeout(wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, happy_kill_async) }
            case .flowControl(let connection, let reading):
                if let wsi = connection.wsi { lws_rx_flow_control(wsi, reading ? 1 : 0) }
            case .run(let body):
                body()
            case .stop:
                running = false
            }
        }
    }

    private func open(_ connection: WebSocketConnection) {
        let url = connection.url
        var info = lws_client_connect_info()
        info.context = context
        info.address = connection.cString(url.host)
        info.port = Int32(url.port)
        info.path = connection.cString(url.path)
        info.host = connection.cString(url.port == (url.secure ? 443 : 80) ? url.host : "\(url.host):\(url.port)")
        // Not a browser: no Origin header unless one is asked for.
        if let origin = connection.options.origin { info.origin = connection.cString(origin) }
        if let subprotocol = connection.options.subprotocol { info.protocol = connection.cString(subprotocol) }
        info.local_protocol_name = UnsafePointer(protocolName)
        info.ietf_version_or_minus_one = -1
        if url.secure {
            var flags = Int32(LCCSCF_USE_SSL.rawValue)
            if connection.options.allowInsecureTLS {
                flags |= Int32(LCCSCF_ALLOW_SELFSIGNED.rawValue) | Int32(LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue)
                    | Int32(LCCSCF_ALLOW_EXPIRED.rawValue)
            }
            info.ssl_connection = flags
        }
        // lws re-sorts a shared timer list on every frame for its validity
        // pings; only connections that want keepalive pay for it.
        let policy = connection.keepalivePolicy
        policy.pointee = lws_retry_bo_t()
        if let seconds = connection.options.keepaliveSeconds, seconds > 0 {
            policy.pointee.secs_since_valid_ping = seconds
            policy.pointee.secs_since_valid_hangup = seconds * 2
        }
        info.retry_and_idle_policy = UnsafePointer(policy)
        info.opaque_user_data = Unmanaged.passRetained(connection).toOpaque()
        let result = lws_client_connect_via_info(&info)
        if result == nil, !connection.finished {
            finish(connection, failure: "could not start connecting to \(url)")
        } else if connection.wsi == nil {
            connection.wsi = result
        }
    }

    /// Ends a connection once: events, then the loop's reference is dropped.
    func finish(_ connection: WebSocketConnection, failure: String?) {
        guard !connection.finished else { return }
        connection.finished = true
        if let wsi = connection.wsi { lws_set_opaque_user_data(wsi, nil) }
        connection.wsi = nil
        if let failure { connection.didFail(failure) } else { connection.didClose() }
        Unmanaged.passUnretained(connection).release()
    }

    func writeable(_ connection: WebSocketConnection, _ wsi: OpaquePointer) -> Int32 {
        guard let item = connection.takeOutgoing() else { return 0 }
        switch item {
        case .close(let code, let reason):
            var bytes = CloseFrame.reasonBytes(reason)
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), &bytes, bytes.count)
            return -1
        case .message(let bytes, let mode):
            let pre = Int(happy_lws_pre)
            let result: Int32
            if bytes.count <= writeBufferSize {
                (writeBuffer + pre).update(from: bytes, count: bytes.count)
                result = lws_write(wsi, writeBuffer + pre, bytes.count, lws_write_protocol(UInt32(mode)))
            } else {
                var padded = [UInt8](repeating: 0, count: pre) + bytes
                result = padded.withUnsafeMutableBufferPointer {
                    lws_write(wsi, $0.baseAddress! + pre, bytes.count, lws_write_protocol(UInt32(mode)))
                }
            }
            if result < 0 { return -1 }
        }
        if connection.hasOutgoing { lws_callback_on_writable(wsi) }
        return 0
    }
}

/// A header of the server's handshake answer, or nil when it has none.
private func handshakeHeader(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
    let length = Int(lws_hdr_total_length(wsi, token))
    guard length > 0 else { return nil }
    var buffer = [CChar](repeating: 0, count: length + 1)
    guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) > 0 else { return nil }
    return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The C callback of every client connection.
func happyClientCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                         _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    let loop = Unmanaged<ClientLoop>.fromOpaque(owner).takeUnretainedValue()
    if reason == LWS_CALLBACK_EVENT_WAIT_CANCELLED {
        loop.drainCommands()
        return 0
    }
    guard let pointer = lws_get_opaque_user_data(wsi) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    let connection = Unmanaged<WebSocketConnection>.fromOpaque(pointer).takeUnretainedValue()
    switch reason {
    case LWS_CALLBACK_CLIENT_CONFIRM_EXTENSION_SUPPORTED:
        // Non-zero leaves the extension out of this connection's offer.
        return connection.options.offersCompression ? 0 : 1
    case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
        // The handshake headers are freed before CLIENT_ESTABLISHED: read what the server selected now.
        connection.selectedSubprotocol = handshakeHeader(wsi, WSI_TOKEN_PROTOCOL)
        connection.negotiatedExtensions = handshakeHeader(wsi, WSI_TOKEN_EXTENSIONS)
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        connection.wsi = wsi
        connection.didOpen(subprotocol: connection.selectedSubprotocol)
        if connection.hasOutgoing { lws_callback_on_writable(wsi) }
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
        guard let input else { return 0 }
        let cursor = input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        guard let start = cursor.pointee else { return 0 }
        let end = start + length
        for header in connection.options.headers {
            var value = Array(header.value.utf8)
            if lws_add_http_header_by_name(wsi, header.name.lowercased() + ":", &value, Int32(value.count), cursor, end) != 0 {
                return -1
            }
        }
    case LWS_CALLBACK_CLIENT_RECEIVE:
        let chunk = UnsafeRawBufferPointer(start: input, count: length)
        let complete = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        let binary = lws_frame_is_binary(wsi) != 0
        if connection.partial.isEmpty && complete {
            connection.didReceive(chunk, binary: binary)
        } else {
            if connection.partial.isEmpty { connection.partialBinary = binary }
            connection.partial.append(contentsOf: chunk)
            if complete {
                let message = connection.partial
                connection.partial = []
                message.withUnsafeBytes { connection.didReceive($0, binary: connection.partialBinary) }
            }
        }
    case LWS_CALLBACK_CLIENT_WRITEABLE:
        return loop.writeable(connection, wsi)
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        if let input, length >= 2 {
            let bytes = UnsafeRawBufferPointer(start: input, count: length)
            connection.peerCloseCode = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
            connection.peerCloseReason = String(decoding: bytes[2...], as: UTF8.self)
        }
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        let message = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
        loop.finish(connection, failure: message)
    case LWS_CALLBACK_CLIENT_CLOSED:
        loop.finish(connection, failure: nil)
    default:
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    return 0
}
