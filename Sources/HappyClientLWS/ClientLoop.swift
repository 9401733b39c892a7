import Foundation
import HappyClientTransport
internal import HappyLWS
import Synchronization

/// Why a client loop could not start.
public struct ClientError: Error, CustomStringConvertible {
    /// What went wrong, in words.
    public let message: String
    /// Creates an error that says `message`.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// An lws client context with its own service thread. It can carry many
/// connections (a test's clients, a benchmark's thousands of subscribers).
/// Other threads talk to it through a locked command queue and a wake-up
/// of the service thread, as lws requires.
public final class ClientLoop: @unchecked Sendable {
    enum Command {
        case connect(WebSocketConnection)
        case wantWrite(WebSocketConnection)
        case abort(WebSocketConnection)
        case flowControl(WebSocketConnection, Bool)
        case run(@Sendable () -> Void)
        case stop
    }

    private var clientContext: LWSClientContext?
    /// Set while the context lives; other threads wake the loop through it.
    private let wakeHandle = Mutex<LWSContextHandle?>(nil)
    private var callbacks: ClientLoopCallbacks?
    private let commands = Mutex<[Command]>([])
    private var thread: Thread?
    private let stopped = NSCondition()
    private var running = true
    private var isStopped = false
    private let writeBuffer = LWSWriteBuffer(capacity: 64 * 1024)

    /// Creates the libwebsockets client context and starts its service thread.
    ///
    /// - Parameter name: the service thread's name (as debuggers and `top -H` show it).
    /// - Throws: `ClientError` when libwebsockets cannot create a client context.
    public init(name: String = "happy-client") throws(ClientError) {
        LWSProcess.ignoreBrokenPipeSignal()
        LWSProcess.raiseDescriptorLimit()
        let callbacks = ClientLoopCallbacks(loop: self)
        self.callbacks = callbacks
        do {
            clientContext = try LWSClientContext(handler: callbacks)
        } catch {
            throw ClientError("could not create a libwebsockets client context")
        }
        wakeHandle.withLock { $0 = clientContext?.context }
        let thread = Thread { [unowned self] in self.serve() }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    deinit {
        shutdown()
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
        let alreadyStopped = isStopped || thread == nil
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
        // Under the lock: the loop clears the handle before it destroys the context.
        wakeHandle.withLock { $0?.cancelService() }
    }

    private func serve() {
        guard let clientContext else { return }
        while running {
            if !clientContext.service() { break }
        }
        wakeHandle.withLock { $0 = nil }
        clientContext.destroy()
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
            case .wantWrite(let connection): connection.lwsConnection?.requestWritable()
            case .abort(let connection): connection.lwsConnection?.kill()
            case .flowControl(let connection, let reading):
                if reading { connection.lwsConnection?.resumeReading() } else { connection.lwsConnection?.pauseReading() }
            case .run(let body):
                body()
            case .stop:
                running = false
            }
        }
    }

    private func open(_ connection: WebSocketConnection) {
        guard let clientContext else { return }
        let url = connection.url
        let options = connection.options
        // Not a browser: no Origin header unless one is asked for.
        let request = LWSClientRequest(
            address: url.host, port: url.port, path: url.path,
            hostHeader: url.port == (url.secure ? 443 : 80) ? url.hostForURL : url.authority,
            origin: options.origin, subprotocol: options.subprotocol, usesTLS: url.secure,
            allowsInsecureTLS: options.allowInsecureTLS, keepaliveSeconds: options.keepaliveSeconds)
        let started = clientContext.connect(request, attaching: connection, strings: connection.cStrings)
        if let started {
            if !connection.finished && connection.lwsConnection == nil { connection.lwsConnection = started }
        } else if !connection.finished {
            // lws gave up without a callback: nothing detached the connection.
            finish(connection, detachingFrom: nil, failure: "could not start connecting to \(url)")
        }
    }

    /// Ends a connection once: its events, then the reference attached to
    /// the lws connection (`lws`, or the one `connect` took when lws never
    /// started) is dropped.
    func finish(_ connection: WebSocketConnection, detachingFrom lws: LWSConnection?, failure: String?) {
        guard !connection.finished else { return }
        connection.finished = true
        connection.lwsConnection = nil
        _ = connection.takePongWaiters()
        if let failure { connection.didFail(failure) } else { connection.didClose() }
        if let lws {
            lws.detach(as: WebSocketConnection.self)
        } else {
            clientContext?.releaseUnstarted(connection)
        }
    }

    func writeable(_ connection: WebSocketConnection, _ lws: LWSConnection) -> Int32 {
        guard let item = connection.takeOutgoing() else { return 0 }
        switch item {
        case .close(let code, let reason):
            lws.setCloseReason(code: code, reason: reason)
            return -1
        case .message(let bytes, let mode, let endsMessage):
            let written = bytes.withUnsafeBytes { writeBuffer.write($0, to: lws, mode: mode, endsMessage: endsMessage) }
            if written < 0 { return -1 }
        }
        if connection.hasOutgoing { lws.requestWritable() }
        return 0
    }

    /// The lws callback of every client connection (on the loop's thread).
    func handleCallback(_ callback: LWSCallback) -> Int32 {
        if callback.reason == .eventWaitCancelled {
            drainCommands()
            return 0
        }
        let lws = callback.connection
        // A strong reference: `finish` lets the attached one go.
        guard let connection = lws.attachment(as: WebSocketConnection.self) else { return callback.passToDefault() }
        switch callback.reason {
        case .clientConfirmExtensionSupported:
            // Non-zero leaves the extension out of this connection's offer.
            return connection.options.offersCompression ? 0 : 1
        case .clientFilterPreEstablish:
            // The handshake headers are freed before CLIENT_ESTABLISHED: read what the server selected now.
            connection.selectedSubprotocol = lws.header(.subprotocol)
            connection.negotiatedExtensions = lws.header(.extensions)
        case .clientEstablished:
            connection.lwsConnection = lws
            connection.didOpen(subprotocol: connection.selectedSubprotocol)
            if connection.hasOutgoing { lws.requestWritable() }
        case .clientAppendHandshakeHeader:
            return callback.appendHandshakeHeaders(connection.options.headers) ? 0 : -1
        case .clientReceive:
            switch connection.assembler.add(callback.inputBytes, isBinary: lws.isBinaryFrame, endsMessage: lws.endsMessage) {
            case .complete(let message):
                message.withUnsafeBytes { connection.didReceive($0, binary: message.isBinary) }
            case .needsMore, .tooBig:
                break
            }
        case .clientWriteable:
            return writeable(connection, lws)
        case .clientReceivePong:
            connection.didReceivePong()
        case .peerInitiatedClose:
            if let close = PeerClose(payload: callback.inputBytes) {
                connection.peerCloseCode = close.code
                connection.peerCloseReason = close.reason
            }
        case .clientConnectionError:
            finish(connection, detachingFrom: lws, failure: callback.inputText ?? "connection failed")
        case .clientClosed:
            finish(connection, detachingFrom: lws, failure: nil)
        default:
            return callback.passToDefault()
        }
        return 0
    }
}

/// Hands the context's callbacks to the loop (which keeps this object and
/// outlives its context), so that the loop's own API stays free of lws.
final class ClientLoopCallbacks: LWSCallbackHandler {
    private let loop: Unmanaged<ClientLoop>

    init(loop: ClientLoop) {
        self.loop = Unmanaged.passUnretained(loop)
    }

    func handleCallback(_ callback: LWSCallback) -> Int32 {
        loop._withUnsafeGuaranteedRef { $0.handleCallback(callback) }
    }
}
