import HappyCore

/// The JSON API, health and metrics (PROTOCOL.md section 6), one handler per route.
final class APIRoutes {
    private let config: HappyConfig
    private let directory: RoomDirectory
    private let access: AccessControl
    private let coordinator: CommitCoordinator
    private let history: RoomHistory
    private let lifecycle: ServerLifecycle
    private let responder: HTTPResponder
    private let metrics: Metrics
    private let clock: ServiceClock
    /// The `/metrics` text, rendered by its owner.
    private let renderMetrics: () -> String
    /// Rate-limit state of `POST /api/intent`, per client address.
    private var intentLimits: [String: HTTPRateLimit] = [:]

    init(config: HappyConfig, directory: RoomDirectory, access: AccessControl, coordinator: CommitCoordinator,
         history: RoomHistory, lifecycle: ServerLifecycle, responder: HTTPResponder, metrics: Metrics, clock: ServiceClock,
         renderMetrics: @escaping () -> String) {
        self.config = config
        self.directory = directory
        self.access = access
        self.coordinator = coordinator
        self.history = history
        self.lifecycle = lifecycle
        self.responder = responder
        self.metrics = metrics
        self.clock = clock
        self.renderMetrics = renderMetrics
    }

    func register(in router: inout HTTPRouter) {
        router.add(["GET", "HEAD"], .exact("/healthz")) { [unowned self] in health($0) }
        router.add(["GET"], .exact("/metrics")) { [unowned self] in
            responder.respond($0, HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4",
                                               body: Array(renderMetrics().utf8)))
        }
        router.add(["GET"], .exact("/api/state")) { [unowned self] in state($0) }
        router.add(["POST"], .exact("/api/intent")) { [unowned self] in postIntent($0) }
        router.add(["GET"], .exact("/api/history")) { [unowned self] in historyPage($0) }
    }

    /// `ok`, or 503 with one line per problem: the store failing, commits
    /// in doubt, the cluster subscriber disconnected (each with since when).
    private func health(_ exchange: HTTPExchange) {
        let problems = coordinator.healthProblems()
        if problems.isEmpty {
            responder.respond(exchange, HTTPResponse(status: 200, contentType: "text/plain", body: Array("ok".utf8)))
        } else {
            responder.respond(exchange, HTTPResponse(
                status: 503, contentType: "text/plain",
                body: Array(problems.map { "unavailable: \($0)" }.joined(separator: "\n").utf8)))
        }
    }

    /// The room a request names (`room`, else the default room) and the
    /// caller's role, or the error to answer.
    func roomAndRole(_ exchange: HTTPExchange) -> Result<(room: String, role: Role), HTTPError> {
        let name = exchange.query["room"] ?? config.defaultRoom
        guard Names.isValidRoom(name) else {
            return .failure(HTTPError(status: 400, WireError(.invalidValue, "room must be 1-64 characters of A-Z a-z 0-9 _ -")))
        }
        let token = AccessControl.token(query: exchange.query, authorization: exchange.headers["authorization"])
        return access.httpRole(token: token, room: name).map { (name, $0) }
    }

    /// The 503 for a room the store could not load.
    static func unloaded(_ runtime: RoomRuntime) -> HTTPError {
        HTTPError(status: 503, WireError(.unavailable, "room \(runtime.name) could not be loaded: \(runtime.loadError?.message ?? "")"))
    }

    private func state(_ exchange: HTTPExchange) {
        let name: String
        switch roomAndRole(exchange) {
        case .failure(let error): return responder.respond(exchange, error)
        case .success(let access): name = access.room
        }
        if exchange.query["seq"] != nil { return pastState(exchange, room: name) }
        let presenceMax = config.limits.presenceBroadcastMax
        directory.touchedRuntime(for: name).whenReady { [responder] runtime in
            guard !exchange.isClosed else { return }
            guard let room = runtime.room else { return responder.respond(exchange, Self.unloaded(runtime)) }
            let body = ServerMessageEncoder.roomState(
                room: name, epoch: room.epoch, seq: room.committed.seq, state: room.committed.scene,
                presence: runtime.presenceList(limit: presenceMax), presenceCount: runtime.presenceCount)
            responder.respond(exchange, status: 200, json: body)
        }
    }

    // MARK: history (section 11)

    /// `GET /api/state?seq=N`: the room right after event N, with the dragon's label then.
    private func pastState(_ exchange: HTTPExchange, room name: String) {
        let seq: UInt64
        do throws(FrameQuery.Refusal) {
            seq = try FrameQuery.sequenceNumber(exchange.query, "seq") ?? 0
        } catch {
            return responder.respond(exchange, HTTPError(status: error.status, code: error.code, error.message))
        }
        directory.touchedRuntime(for: name).whenReady { [history, responder] runtime in
            history.state(of: runtime, at: seq) { result in
                guard !exchange.isClosed else { return }
                switch result {
                case .failure(let error):
                    responder.respond(exchange, error)
                case .success(let past):
                    var w = JSONWriter(capacity: 512)
                    w.beginObject()
                    w.key("room"); w.string(name)
                    w.key("epoch"); w.string(past.epoch)
                    w.key("seq"); w.uint(past.seq)
                    w.key("state"); ServerMessageEncoder.scene(past.scene, into: &w)
                    w.key("dragonStatus"); w.string(past.dragonStatus)
                    w.endObject()
                    responder.respond(exchange, status: 200, json: w.bytes)
                }
            }
        }
    }

    /// `GET /api/history?room&since&limit`: events exactly as broadcast, oldest first.
    private func historyPage(_ exchange: HTTPExchange) {
        let name: String
        switch roomAndRole(exchange) {
        case .failure(let error): return responder.respond(exchange, error)
        case .success(let access): name = access.room
        }
        let since: UInt64?
        let limit: Int
        do throws(FrameQuery.Refusal) {
            since = try FrameQuery.sequenceNumber(exchange.query, "since")
            limit = try FrameQuery.integer(exchange.query, "limit", in: 1...RoomHistory.maxLimit) ?? RoomHistory.defaultLimit
        } catch {
            return responder.respond(exchange, HTTPError(status: error.status, code: error.code, error.message))
        }
        directory.touchedRuntime(for: name).whenReady { [history, responder] runtime in
            history.page(of: runtime, since: since, limit: limit) { result in
                guard !exchange.isClosed else { return }
                switch result {
                case .failure(let error):
                    responder.respond(exchange, error)
                case .success(let page):
                    var w = JSONWriter(capacity: 128 + page.events.reduce(0) { $0 + $1.json.count + 1 })
                    w.beginObject()
                    w.key("room"); w.string(name)
                    w.key("epoch"); w.string(page.epoch)
                    w.key("seq"); w.uint(page.seq)
                    w.key("first"); w.uint(page.first)
                    w.key("events")
                    w.beginArray()
                    for event in page.events { w.raw(event.json) }
                    w.endArray()
                    w.endObject()
                    responder.respond(exchange, status: 200, json: w.bytes)
                }
            }
        }
    }

    private func postIntent(_ exchange: HTTPExchange) {
        let name: String, role: Role
        switch roomAndRole(exchange) {
        case .failure(let error): return responder.respond(exchange, error)
        case .success(let access): (name, role) = access
        }
        switch decodeIntent(exchange, role: role) {
        case .failure(let error):
            metrics.countError(error.code)
            responder.respond(exchange, HTTPError(error))
        case .success(let (intent, sender)):
            directory.touchedRuntime(for: name).whenReady { [self] runtime in
                guard !exchange.isClosed else { return }
                if lifecycle.isShuttingDown { return refuseDuringShutdown(intent, exchange) }
                coordinator.submit(intent, in: runtime, sender: sender, reply: .http(exchange))
            }
        }
    }

    /// The intent in the body and its sender, or the protocol error to answer.
    private func decodeIntent(_ exchange: HTTPExchange, role: Role) -> Result<(Intent, Participant), WireError> {
        let senderName = exchange.headers["x-happy-name"] ?? "http"
        guard Names.isValidDisplayName(senderName) else {
            return .failure(WireError(.invalidValue, "X-Happy-Name must be 1-32 printable characters"))
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(exchange.body)
        } catch {
            return .failure(WireError(.badJSON, "request body is not valid JSON: \(error)"))
        }
        guard json.isObject else { return .failure(WireError(.badMessage, "the body must be an intent object")) }
        if let type = json["type"], type.stringValue != "intent" {
            return .failure(WireError(.badMessage, "type must be \"intent\""))
        }
        let decoded = ClientMessageDecoder.decode(.object(
            [("type", .string("intent"))] + (json.objectMembers.filter { $0.key != "type" })))
        guard case .success(.intent(let intent)) = decoded else {
            if case .failure(let error) = decoded { return .failure(error) }
            return .failure(WireError(.badMessage, "the body must be an intent object"))
        }
        if lifecycle.isShuttingDown {
            return .failure(WireError(.unavailable, "server shutting down; nothing was applied", id: intent.id))
        }
        guard takeIntentToken(exchange.peerAddress) else {
            metrics.rateLimited += 1
            return .failure(WireError(.rateLimited, "rate limit of \(config.limits.intentsPerSecond) intents/s per address exceeded",
                                      id: intent.id))
        }
        if let refusal = access.refusal(for: intent.action, role: role) {
            return .failure(WireError(.forbidden, refusal, id: intent.id))
        }
        return .success((intent, Participant(id: "http", name: senderName)))
    }

    /// While shutting down, new intents are refused, as on the WebSocket.
    private func refuseDuringShutdown(_ intent: Intent, _ exchange: HTTPExchange) {
        metrics.countError(.unavailable)
        responder.respond(exchange, HTTPError(WireError(.unavailable, "server shutting down; nothing was applied", id: intent.id)))
    }

    /// One token from the bucket of a client address.
    private func takeIntentToken(_ address: String) -> Bool {
        let now = clock.fresh()
        var entry = intentLimits[address]
            ?? HTTPRateLimit(bucket: TokenBucket(ratePerSecond: config.limits.intentsPerSecond,
                                                 burst: config.limits.intentBurst, now: now), lastUsed: now)
        let allowed = entry.bucket.take(now: now)
        entry.lastUsed = now
        intentLimits[address] = entry
        return allowed
    }

    /// Forgets addresses quiet for a minute (from the sweep).
    func sweep(now: Double) {
        intentLimits = intentLimits.filter { now - $0.value.lastUsed < 60 }
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
