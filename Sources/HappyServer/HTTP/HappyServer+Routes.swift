import CWebSockets
import HappyCore

/// The JSON API, health and metrics (PROTOCOL.md section 6).
extension HappyServer {
    func route(_ exchange: HTTPExchange) {
        switch (exchange.method, exchange.route) {
        case ("GET", "/healthz"), ("HEAD", "/healthz"):
            health(exchange)
        case ("GET", "/metrics"):
            respond(exchange, HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4",
                                           body: Array(renderMetrics().utf8)))
        case ("GET", "/api/state"):
            state(exchange)
        case ("POST", "/api/intent"):
            postIntent(exchange)
        case ("GET", let route) where route.hasPrefix("/frame/"):
            frameRequest(exchange)
        case ("GET", let route) where route.hasPrefix("/stream/"):
            streamRequest(exchange)
        case (_, "/api/state"), (_, "/api/intent"), (_, "/healthz"), (_, "/metrics"):
            respondError(exchange, status: 405, code: "method_not_allowed",
                         "\(exchange.method) is not allowed on \(exchange.route)")
        case (_, let route) where route.hasPrefix("/frame/") || route.hasPrefix("/stream/"):
            respondError(exchange, status: 405, code: "method_not_allowed",
                         "\(exchange.method) is not allowed on \(exchange.route)")
        default:
            respondError(exchange, status: 404, code: "not_found", "no route \(exchange.method) \(exchange.route)")
        }
    }

    private func health(_ exchange: HTTPExchange) {
        if storeHealthy {
            respond(exchange, HTTPResponse(status: 200, contentType: "text/plain", body: Array("ok".utf8)))
        } else {
            respond(exchange, HTTPResponse(status: 503, contentType: "text/plain",
                                           body: Array("unavailable: store \(storeWorker.store.kind): \(storeProblem)".utf8)))
        }
    }

    /// The `room` query argument, or the default room; nil (and a 400) when invalid.
    func roomArgument(_ exchange: HTTPExchange) -> String? {
        let name = exchange.query["room"] ?? config.defaultRoom
        guard Names.isValidRoom(name) else {
            respond(exchange, status: 400, json: ServerMessageEncoder.error(WireError(
                .invalidValue, "room must be 1-64 characters of A-Z a-z 0-9 _ -")))
            return nil
        }
        return name
    }

    private func state(_ exchange: HTTPExchange) {
        guard let name = roomArgument(exchange) else { return }
        guard let role = httpAccess(exchange, room: name) else { return }
        _ = role
        let runtime = runtime(for: name)
        runtime.idleSince = SystemTime.monotonicSeconds()
        runtime.whenReady { [self] runtime in
            guard !exchange.isClosed else { return }
            guard let room = runtime.room else {
                self.respond(exchange, status: 503, json: ServerMessageEncoder.error(WireError(
                    .unavailable, "room \(name) could not be loaded: \(runtime.loadError?.message ?? "")")))
                return
            }
            let body = ServerMessageEncoder.roomState(
                room: name, epoch: room.epoch, seq: room.committed.seq, state: room.committed.scene,
                presence: runtime.presenceList(limit: self.config.limits.presenceBroadcastMax),
                presenceCount: runtime.presenceCount)
            self.respond(exchange, status: 200, json: body)
        }
    }

    private func postIntent(_ exchange: HTTPExchange) {
        guard let name = roomArgument(exchange) else { return }
        guard let role = httpAccess(exchange, room: name) else { return }
        func fail(_ error: WireError) {
            metrics.countError(error.code)
            respond(exchange, status: error.code.httpStatus, json: ServerMessageEncoder.error(error))
        }
        let senderName = LWSHeaders.custom(exchange.wsi, "x-happy-name") ?? "http"
        guard Names.isValidDisplayName(senderName) else {
            return fail(WireError(.invalidValue, "X-Happy-Name must be 1-32 printable characters"))
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(exchange.body)
        } catch {
            return fail(WireError(.badJSON, "request body is not valid JSON: \(error)"))
        }
        guard json.isObject else { return fail(WireError(.badMessage, "the body must be an intent object")) }
        if let type = json["type"], type.stringValue != "intent" {
            return fail(WireError(.badMessage, "type must be \"intent\""))
        }
        let decoded = ClientMessageDecoder.decode(.object(
            [("type", .string("intent"))] + (json.objectMembers.filter { $0.key != "type" })))
        guard case .success(.intent(let intent)) = decoded else {
            if case .failure(let error) = decoded { fail(error) }
            return
        }
        if shuttingDown { return refuseDuringShutdown(intent, exchange) }
        guard takeHTTPToken(exchange.peerAddress) else {
            metrics.rateLimited += 1
            return fail(WireError(.rateLimited, "rate limit of \(config.limits.intentsPerSecond) intents/s per address exceeded", id: intent.id))
        }
        if let refusal = accessRefusal(for: intent.action, role: role) {
            return fail(WireError(.forbidden, refusal, id: intent.id))
        }
        let runtime = runtime(for: name)
        runtime.idleSince = SystemTime.monotonicSeconds()
        let sender = Participant(id: "http", name: senderName)
        runtime.whenReady { [self] runtime in
            guard !exchange.isClosed else { return }
            if self.shuttingDown { return self.refuseDuringShutdown(intent, exchange) }
            self.submitIntent(intent, in: runtime, sender: sender, reply: .http(exchange))
        }
    }

    /// While shutting down, new intents are refused, as on the WebSocket.
    private func refuseDuringShutdown(_ intent: Intent, _ exchange: HTTPExchange) {
        metrics.countError(.unavailable)
        let error = WireError(.unavailable, "server shutting down; nothing was applied", id: intent.id)
        respond(exchange, status: error.code.httpStatus, json: ServerMessageEncoder.error(error))
    }

    /// One token from the bucket of a client address (HTTP intents).
    private func takeHTTPToken(_ address: String) -> Bool {
        let now = SystemTime.monotonicSeconds()
        var entry = httpRateLimits[address]
            ?? HTTPRateLimit(bucket: TokenBucket(ratePerSecond: config.limits.intentsPerSecond,
                                                 burst: config.limits.intentBurst, now: now), lastUsed: now)
        let allowed = entry.bucket.take(now: now)
        entry.lastUsed = now
        httpRateLimits[address] = entry
        return allowed
    }
}

/// The rate-limit state of one client address on `POST /api/intent`.
struct HTTPRateLimit {
    var bucket: TokenBucket
    var lastUsed: Double
}

extension JSONValue {
    var objectMembers: [(key: String, value: JSONValue)] {
        if case .object(let members) = self { return members }
        return []
    }
}
