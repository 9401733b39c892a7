import HappyCore
import HappyLWS

/// What a WebSocket client sends: messages reassembled from fragments and
/// size-checked, held back until the welcome, rate-limited, decoded, and
/// handed on (pings answered, pointers to the pointer service, intents
/// through the admission check to the intent router).
final class MessageIntake {
    private let admission: IntentAdmission
    private let router: IntentRouter
    private let broadcaster: Broadcaster
    private let pointers: PointerService
    private let metrics: Metrics
    private let logger: Logger
    private let clock: ServiceClock
    private let intakeKey = IntakeState.Key()
    /// A message chunk came in since `takeReceived()` last asked.
    private var receivedSinceAsked = false

    init(admission: IntentAdmission, router: IntentRouter, broadcaster: Broadcaster, pointers: PointerService,
         metrics: Metrics, logger: Logger, clock: ServiceClock) {
        self.admission = admission
        self.router = router
        self.broadcaster = broadcaster
        self.pointers = pointers
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }

    /// Seconds between two looks at a client's socket count at its messages' ends.
    static let wireCheckSeconds = 1.0

    /// Whether a message came in since the last call (the loop reads on while they do).
    func takeReceived() -> Bool {
        defer { receivedSinceAsked = false }
        return receivedSinceAsked
    }

    /// One received chunk of a data frame. `final`: the last of its message;
    /// `frameEnds`: the last of its frame (by default, when `final`).
    func receive(_ connection: Connection, _ chunk: UnsafeBufferPointer<UInt8>, binary: Bool, final: Bool,
                 frameEnds: Bool? = nil) {
        if connection.output.closeRequest != nil { return }
        connection.modify(intakeKey) { $0.wireReceived(chunk.count, frameEnds: frameEnds ?? final) }
        receivedSinceAsked = true
        // The first message is always looked at, later ones at most once a second.
        if final && connection.intake.wire.isDue(now: clock.now(), every: Self.wireCheckSeconds) {
            guard checkWire(connection) else { return }
        }
        if chunk.isEmpty && !final {
            // An empty fragment carries nothing: a stream of them is a flood like any other.
            let now = clock.now()
            if connection.modify(intakeKey, { !$0.takeToken(now: now) && $0.recordRefusal(now: now) }) {
                metrics.floodCloses += 1
                return refuse(connection, .policyViolation, "too many empty fragments: over the rate limit for too long")
            }
        }
        if binary && connection.kind == .happy {
            return refuse(connection, .unsupportedData, "binary messages are not accepted; send JSON text")
        }
        switch connection.modify(intakeKey, { $0.assemble(chunk, binary: binary, final: final) }) {
        case .needsMore:
            return
        case .tooBig:
            refuse(connection, .messageTooBig, "message larger than \(connection.intake.messageLimit) bytes")
        case .complete(let message):
            message.withUnsafeBufferPointer { handleMessage(connection, $0, binary: message.isBinary) }
        }
    }

    /// The client's frames against what its socket carried (`WireMeter`); false once it is being closed.
    @discardableResult
    func checkWire(_ connection: Connection) -> Bool {
        let bytesRead = connection.transport.bytesRead, now = clock.now()
        switch connection.modify(intakeKey, { $0.checkWire(bytesRead: bytesRead, now: now) }) {
        case .fine:
            return true
        case .unmaskedFrame:
            metrics.countRefusal("unmasked")
            refuse(connection, .protocolError, "client frames must be masked (RFC 6455, section 5.1)")
        case .controlFlood:
            metrics.floodCloses += 1
            connection.modify(intakeKey) { $0.dropPartialMessage() }
            broadcaster.close(connection, code: .policyViolation, reason: "too many control frames (pings) for too long",
                              stopReading: true)
        }
        logger.info("closing", ["id": connection.participant.id, "peer": connection.peerAddress,
                                "reason": connection.output.closeRequest?.reason ?? ""])
        return false
    }

    /// Stops acting on the client's messages and closes with `code` at the
    /// next write (PROTOCOL.md section 5: the close frame reaches the client).
    private func refuse(_ connection: Connection, _ code: WebSocketCloseCode, _ reason: String) {
        connection.modify(intakeKey) { $0.dropPartialMessage() }
        broadcaster.close(connection, code: code, reason: reason)
        logger.debug("closing", ["id": connection.participant.id, "code": "\(code)", "reason": reason])
    }

    private func handleMessage(_ connection: Connection, _ bytes: UnsafeBufferPointer<UInt8>, binary: Bool) {
        switch connection.kind {
        case .echo:
            broadcaster.send(OutboundFrame(payload: bytes, binary: binary), to: connection)
        case .happy:
            guard connection.joined else {
                guard connection.modify(intakeKey, { $0.holdUntilWelcome(Array(bytes)) }) else {
                    return refuse(connection, .policyViolation, "too many messages before the welcome")
                }
                return
            }
            handleClientMessage(connection, bytes)
        }
    }

    /// The messages that arrived before the welcome, in order (after it).
    func replayEarlyMessages(of connection: Connection) {
        for message in connection.modify(intakeKey, { $0.takeEarlyMessages() }) {
            message.withUnsafeBufferPointer { handleClientMessage(connection, $0) }
            if connection.output.closeRequest != nil { break }
        }
    }

    /// Decodes and acts on one message; floods are closed after the answers
    /// already queued, so the client sees every `rate_limited`. Pointers
    /// have their own rate and never draw on the intent bucket.
    private func handleClientMessage(_ connection: Connection, _ bytes: UnsafeBufferPointer<UInt8>) {
        let now = clock.fresh()
        let decoded = ClientMessageDecoder.decode(bytes)
        switch decoded {
        case .success(.pointer(let position)):
            guard !connection.isObserver else {
                metrics.countError(.forbidden)
                return broadcaster.sendError(WireError(.forbidden, IntentAdmission.observers), to: connection)
            }
            pointers.receive(position, from: connection)
        case .success(.intent(let intent)):
            if let refusal = admission.refusal(for: intent, role: connection.role, observing: connection.isObserver,
                                               takeToken: { connection.modify(intakeKey) { $0.takeToken(now: now) } }) {
                return answerRefusal(refusal, to: connection, now: now)
            }
            guard let runtime = connection.room else { return }
            router.route(intent, in: runtime, sender: connection.participant, reply: .connection(connection),
                         voterKey: connection.participant.id)
        case .success(.ping(let id)):
            guard connection.modify(intakeKey, { $0.takeToken(now: now) }) else {
                return answerRefusal(admission.rateLimited(id: nil), to: connection, now: now)
            }
            broadcaster.send(OutboundFrame(encoded: ServerMessageEncoder.pong(id: id, serverTime: clock.wallMilliseconds(),
                                                                             headroom: OutboundFrame.headroom)),
                             to: connection)
        case .failure(let error):
            guard connection.modify(intakeKey, { $0.takeToken(now: now) }) else {
                return answerRefusal(admission.rateLimited(id: nil), to: connection, now: now)
            }
            metrics.countError(error.code)
            broadcaster.sendError(error, to: connection)
        }
    }

    /// Answers a refused message; a client over its rate for too long is closed instead.
    private func answerRefusal(_ refusal: WireError, to connection: Connection, now: Double) {
        if refusal.code == .rateLimited && connection.modify(intakeKey, { $0.recordRefusal(now: now) }) {
            metrics.floodCloses += 1
            logger.info("closing flooder", ["id": connection.participant.id, "peer": connection.peerAddress])
            return broadcaster.close(connection, code: .policyViolation,
                                     reason: "too many messages: over the rate limit for too long", afterDrain: true)
        }
        broadcaster.sendError(refusal, to: connection)
    }
}

extension IntakeState {
    /// Made only here: `MessageIntake` alone changes a connection's `intake`.
    struct Key { fileprivate init() {} }
}
