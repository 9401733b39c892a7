import CWebSockets
import HappyCore

/// The WebSocket life of a connection: upgrade, admission, receive, write, close.
extension HappyServer {
    static let maxEarlyMessages = 32
    /// Autobahn's largest messages are 16 MiB.
    static let echoMessageLimit = 16 * 1024 * 1024 + 1024
    /// The payload of keepalive pings, echoed in the peer's pong.
    static let pingPayload = Array("happy".utf8)
    /// Kernel send buffer of a WebSocket connection. Linux would otherwise grow
    /// it to megabytes (`tcp_wmem`), hiding a slow reader's backlog from the
    /// outbox, where `maxQueuedBytes` and `writeTimeoutSeconds` apply.
    static let socketSendBufferBytes: Int32 = 64 * 1024
    /// How long a close the server started waits for the peer's close frame.
    static let closeAckSeconds: Int32 = 2

    /// Refuses upgrades on paths other than `/ws` (and `/echo` when enabled),
    /// and from browser pages whose origin is not in `auth.allowedOrigins`,
    /// before the handshake. A request without `Origin` does not come from a
    /// browser page (browsers always send it), so the list does not apply.
    func confirmUpgrade(_ wsi: OpaquePointer) -> Int32 {
        if let refusal = refuseScreenedUpgrade(wsi) { return refusal }
        let path = LWSHeaders.value(wsi, WSI_TOKEN_GET_URI) ?? ""
        let allowed = path == "/ws" || (path == "/echo" && config.conformance.echo)
        if !allowed {
            metrics.countRefusal("path")
            return refuseUpgrade(wsi, status: UInt32(HTTP_STATUS_NOT_FOUND.rawValue), "no WebSocket endpoint at \(path)")
        }
        if !config.auth.allowedOrigins.isEmpty, let origin = LWSHeaders.value(wsi, WSI_TOKEN_ORIGIN),
           !config.auth.allowedOrigins.contains(origin) {
            metrics.countRefusal("origin")
            logger.info("refused", ["reason": "origin", "origin": origin, "peer": clientAddress(wsi)])
            return refuseUpgrade(wsi, status: UInt32(HTTP_STATUS_FORBIDDEN.rawValue), "origin not allowed")
        }
        return 0
    }

    /// Answers an upgrade request with an HTTP status instead of the handshake.
    func refuseUpgrade(_ wsi: OpaquePointer, status: UInt32, _ message: String) -> Int32 {
        lws_return_http_status(wsi, status, message) != 0 ? -1 : 1
    }

    func established(_ wsi: OpaquePointer) -> Int32 {
        nextSerial += 1
        let path = LWSHeaders.value(wsi, WSI_TOKEN_GET_URI) ?? "/ws"
        let kind: Connection.Kind = path == "/echo" ? .echo : .happy
        let offeredExtensions = LWSHeaders.value(wsi, WSI_TOKEN_EXTENSIONS) ?? ""
        let connection = Connection(
            wsi: wsi, kind: kind, serial: nextSerial, idSuffix: clusterBus.map { "-\($0.nodeID)" } ?? "",
            peerAddress: clientAddress(wsi),
            usesExtensions: config.compression && offeredExtensions.contains("permessage-deflate"),
            limits: config.limits, now: SystemTime.monotonicSeconds())
        lws_set_opaque_user_data(wsi, Unmanaged.passRetained(connection as Attachment).toOpaque())
        if happy_set_send_buffer(lws_get_socket_fd(wsi), Self.socketSendBufferBytes) != 0 {
            logger.warn("could not limit the socket send buffer", ["id": connection.participant.id])
        }
        connection.listIndex = connections.count
        connections.append(connection)
        metrics.connectionsOpened += 1
        releaseMemoryAfterChurn(threshold: 512)
        if kind == .happy {
            admit(connection, query: LWSHeaders.queryArguments(wsi))
        }
        return 0
    }

    func closed(_ wsi: OpaquePointer) {
        guard let pointer = lws_get_opaque_user_data(wsi) else { return }
        lws_set_opaque_user_data(wsi, nil)
        let object = Unmanaged<Attachment>.fromOpaque(pointer)
        defer { object.release() }
        guard object.takeUnretainedValue().isConnection else { return }
        let connection = unsafeDowncast(object.takeUnretainedValue(), to: Connection.self)
        connection.isClosed = true
        removeFromList(connection)
        metrics.connectionsClosed += 1
        leave(connection)
        if connection.kind == .happy {
            logger.info("close", ["id": connection.participant.id, "room": connection.roomName,
                                  "code": connection.closeRequest.map { "\($0.code)" } ?? "by peer",
                                  "seconds": String(format: "%.1f", SystemTime.monotonicSeconds() - connection.openedAt)])
        }
    }

    private func removeFromList(_ connection: Connection) {
        let index = connection.listIndex
        guard index >= 0, index < connections.count, connections[index] === connection else { return }
        let last = connections.removeLast()
        if index < connections.count {
            connections[index] = last
            last.listIndex = index
        }
        connection.listIndex = -1
    }

    func noteAlive(_ connection: Connection) {
        connection.lastReceiveAt = turnClock.now()
        connection.pingSentAt = nil
    }

    // MARK: receive

    func receive(_ connection: Connection, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        noteAlive(connection)
        if connection.closeRequest != nil { return 0 }
        let wsi = connection.wsi
        let binary = lws_frame_is_binary(wsi) != 0
        if binary && connection.kind == .happy {
            return refuse(connection, WebSocketCloseCode.unsupportedData, "binary messages are not accepted; send JSON text")
        }
        let limit = connection.kind == .echo ? Self.echoMessageLimit : config.limits.maxMessageBytes
        let complete = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        let chunk = UnsafeBufferPointer(start: input?.assumingMemoryBound(to: UInt8.self), count: length)

        if connection.partial.isEmpty && complete {
            guard length <= limit else {
                return refuse(connection, WebSocketCloseCode.messageTooBig, "message larger than \(limit) bytes")
            }
            return handleMessage(connection, chunk, binary: binary)
        }
        guard connection.partial.count + length <= limit else {
            return refuse(connection, WebSocketCloseCode.messageTooBig, "message larger than \(limit) bytes")
        }
        if connection.partial.isEmpty { connection.partialIsBinary = binary }
        connection.partial.append(contentsOf: chunk)
        guard complete else { return 0 }
        let message = connection.partial
        connection.partial = []
        return message.withUnsafeBufferPointer { handleMessage(connection, $0, binary: connection.partialIsBinary) }
    }

    /// Stops acting on the client's messages and closes with `code` at the
    /// next write (PROTOCOL.md section 5: the close frame reaches the client).
    private func refuse(_ connection: Connection, _ code: WebSocketCloseCode, _ reason: String) -> Int32 {
        connection.partial = []
        connection.close(code: code, reason: reason)
        logger.debug("closing", ["id": connection.participant.id, "code": "\(code)", "reason": reason])
        return 0
    }

    private func handleMessage(_ connection: Connection, _ bytes: UnsafeBufferPointer<UInt8>, binary: Bool) -> Int32 {
        switch connection.kind {
        case .echo:
            send(OutboundFrame(payload: bytes, binary: binary), to: connection)
            return 0
        case .happy:
            guard connection.joined else {
                guard connection.early.count < Self.maxEarlyMessages else {
                    return refuse(connection, WebSocketCloseCode.policyViolation, "too many messages before the welcome")
                }
                connection.early.append(Array(bytes))
                return 0
            }
            if let close = handleClientMessage(connection, bytes) {
                connection.close(code: close.code, reason: close.reason, afterDrain: close.afterDrain)
            }
            return 0
        }
    }

    /// Decodes and acts on one message; returns a close request for floods
    /// (after the answers already queued, so the client sees every `rate_limited`).
    func handleClientMessage(_ connection: Connection, _ bytes: UnsafeBufferPointer<UInt8>) -> Connection.CloseRequest? {
        let now = SystemTime.monotonicSeconds()
        let decoded = ClientMessageDecoder.decode(bytes)
        guard connection.bucket.take(now: now) else {
            metrics.rateLimited += 1
            metrics.countError(.rateLimited)
            let id: String? = if case .success(.intent(let intent)) = decoded { intent.id } else { nil }
            if connection.flood.record(now: now) {
                metrics.floodCloses += 1
                logger.info("closing flooder", ["id": connection.participant.id, "peer": connection.peerAddress])
                return Connection.CloseRequest(code: WebSocketCloseCode.policyViolation,
                                               reason: "too many messages: over the rate limit for too long",
                                               afterDrain: true)
            }
            sendError(WireError(.rateLimited, "rate limit of \(config.limits.intentsPerSecond) messages/s exceeded; message dropped", id: id), to: connection)
            return nil
        }
        switch decoded {
        case .failure(let error):
            metrics.countError(error.code)
            sendError(error, to: connection)
        case .success(.ping(let id)):
            send(OutboundFrame(encoded: ServerMessageEncoder.pong(id: id, serverTime: SystemTime.wallMilliseconds(),
                                                                 headroom: OutboundFrame.headroom)),
                 to: connection)
        case .success(.intent(let intent)):
            if shuttingDown {
                metrics.countError(.unavailable)
                sendError(WireError(.unavailable, "server shutting down; nothing was applied", id: intent.id), to: connection)
            } else if let refusal = accessRefusal(for: intent.action, role: connection.role) {
                metrics.countError(.forbidden)
                sendError(WireError(.forbidden, refusal, id: intent.id), to: connection)
            } else if let runtime = connection.room {
                submitIntent(intent, in: runtime, sender: connection.participant, reply: .connection(connection))
            }
        }
        return nil
    }

    /// Why `role` may not perform `action`, or nil when it may.
    func accessRefusal(for action: Action, role: Role) -> String? {
        if !role.maySendIntents { return "viewers may not send intents" }
        if action.requiresAdmin && !config.auth.secret.isEmpty && role != .admin {
            return "\(action.wireName) needs the admin role"
        }
        return nil
    }
}
