import HappyCore

/// What a WebSocket client sends: messages reassembled from fragments and
/// size-checked, held back until the welcome, rate-limited, decoded, and
/// handed on (pings answered, intents to the commit coordinator).
final class MessageIntake {
    static let maxEarlyMessages = 32
    /// Autobahn's largest messages are 16 MiB.
    static let echoMessageLimit = 16 * 1024 * 1024 + 1024

    private let limits: HappyConfig.LimitsSection
    private let access: AccessControl
    private let coordinator: CommitCoordinator
    private let broadcaster: Broadcaster
    private let pointers: PointerService
    private let lifecycle: ServerLifecycle
    private let metrics: Metrics
    private let logger: Logger
    private let clock: ServiceClock

    init(limits: HappyConfig.LimitsSection, access: AccessControl, coordinator: CommitCoordinator,
         broadcaster: Broadcaster, pointers: PointerService, lifecycle: ServerLifecycle, metrics: Metrics,
         logger: Logger, clock: ServiceClock) {
        self.limits = limits
        self.access = access
        self.coordinator = coordinator
        self.broadcaster = broadcaster
        self.pointers = pointers
        self.lifecycle = lifecycle
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }

    /// Anything from the peer (a message or a pong).
    @inline(__always)
    func noteAlive(_ connection: Connection) {
        connection.keepalive.received(at: clock.now())
    }

    /// One received fragment. `final`: the last fragment of its message.
    func receive(_ connection: Connection, _ chunk: UnsafeBufferPointer<UInt8>, binary: Bool, final: Bool) {
        noteAlive(connection)
        if connection.closeRequest != nil { return }
        if binary && connection.kind == .happy {
            return refuse(connection, .unsupportedData, "binary messages are not accepted; send JSON text")
        }
        let limit = connection.kind == .echo ? Self.echoMessageLimit : limits.maxMessageBytes
        if connection.partial.isEmpty && final {
            guard chunk.count <= limit else { return refuse(connection, .messageTooBig, "message larger than \(limit) bytes") }
            return handleMessage(connection, chunk, binary: binary)
        }
        guard connection.partial.count + chunk.count <= limit else {
            return refuse(connection, .messageTooBig, "message larger than \(limit) bytes")
        }
        if connection.partial.isEmpty { connection.partialIsBinary = binary }
        connection.partial.append(contentsOf: chunk)
        guard final else { return }
        let message = connection.partial
        connection.partial = []
        message.withUnsafeBufferPointer { handleMessage(connection, $0, binary: connection.partialIsBinary) }
    }

    /// Stops acting on the client's messages and closes with `code` at the
    /// next write (PROTOCOL.md section 5: the close frame reaches the client).
    private func refuse(_ connection: Connection, _ code: WebSocketCloseCode, _ reason: String) {
        connection.partial = []
        connection.close(code: code, reason: reason)
        logger.debug("closing", ["id": connection.participant.id, "code": "\(code)", "reason": reason])
    }

    private func handleMessage(_ connection: Connection, _ bytes: UnsafeBufferPointer<UInt8>, binary: Bool) {
        switch connection.kind {
        case .echo:
            broadcaster.send(OutboundFrame(payload: bytes, binary: binary), to: connection)
        case .happy:
            guard connection.joined else {
                guard connection.early.count < Self.maxEarlyMessages else {
                    return refuse(connection, .policyViolation, "too many messages before the welcome")
                }
                connection.early.append(Array(bytes))
                return
            }
            handleClientMessage(connection, bytes)
        }
    }

    /// The messages that arrived before the welcome, in order (after it).
    func replayEarlyMessages(of connection: Connection) {
        let early = connection.early
        connection.early = []
        for message in early {
            message.withUnsafeBufferPointer { handleClientMessage(connection, $0) }
            if connection.closeRequest != nil { break }
        }
    }

    /// Decodes and acts on one message; floods are closed after the answers
    /// already queued, so the client sees every `rate_limited`. Pointers
    /// have their own rate and never draw on the intent bucket.
    private func handleClientMessage(_ connection: Connection, _ bytes: UnsafeBufferPointer<UInt8>) {
        let now = clock.fresh()
        let decoded = ClientMessageDecoder.decode(bytes)
        if case .success(.pointer(let position)) = decoded {
            return pointers.receive(position, from: connection)
        }
        guard connection.bucket.take(now: now) else {
            metrics.rateLimited += 1
            metrics.countError(.rateLimited)
            let id: String? = if case .success(.intent(let intent)) = decoded { intent.id } else { nil }
            if connection.flood.record(now: now) {
                metrics.floodCloses += 1
                logger.info("closing flooder", ["id": connection.participant.id, "peer": connection.peerAddress])
                connection.close(code: .policyViolation, reason: "too many messages: over the rate limit for too long",
                                 afterDrain: true)
                return
            }
            broadcaster.sendError(WireError(.rateLimited, "rate limit of \(limits.intentsPerSecond) messages/s exceeded; message dropped",
                                            id: id), to: connection)
            return
        }
        switch decoded {
        case .failure(let error):
            metrics.countError(error.code)
            broadcaster.sendError(error, to: connection)
        case .success(.ping(let id)):
            broadcaster.send(OutboundFrame(encoded: ServerMessageEncoder.pong(id: id, serverTime: clock.wallMilliseconds(),
                                                                             headroom: OutboundFrame.headroom)),
                             to: connection)
        case .success(.intent(let intent)):
            if lifecycle.isShuttingDown {
                metrics.countError(.unavailable)
                broadcaster.sendError(WireError(.unavailable, "server shutting down; nothing was applied", id: intent.id),
                                      to: connection)
            } else if let refusal = access.refusal(for: intent.action, role: connection.role) {
                metrics.countError(.forbidden)
                broadcaster.sendError(WireError(.forbidden, refusal, id: intent.id), to: connection)
            } else if let runtime = connection.room {
                coordinator.submit(intent, in: runtime, sender: connection.participant, reply: .connection(connection))
            }
        case .success(.pointer):
            break  // handled above
        }
    }
}
