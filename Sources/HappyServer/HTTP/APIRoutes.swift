import HappyCore

/// The JSON API (PROTOCOL.md sections 6 and 11), one handler per route.
final class APIRoutes {
    private var config: HappyConfig

    /// Applies a configuration read again (SIGHUP) to what comes next.
    func reconfigure(_ config: HappyConfig) {
        self.config = config
    }
    private let directory: RoomDirectory
    private let roomAccess: RoomAccess
    private let admission: IntentAdmission
    private let router: IntentRouter
    private let history: RoomHistory
    private let responder: HTTPResponder
    private let metrics: Metrics
    private let clock: ServiceClock
    /// Rate-limit state of `POST /api/intent`, per client address.
    private var intentLimits: [String: HTTPRateLimit] = [:]

    init(config: HappyConfig, directory: RoomDirectory, roomAccess: RoomAccess, admission: IntentAdmission,
         router: IntentRouter, history: RoomHistory, responder: HTTPResponder, metrics: Metrics, clock: ServiceClock) {
        self.config = config
        self.directory = directory
        self.roomAccess = roomAccess
        self.admission = admission
        self.router = router
        self.history = history
        self.responder = responder
        self.metrics = metrics
        self.clock = clock
    }

    func register(in router: inout HTTPRouter) {
        router.add(["GET"], .exact("/api/state"), parameters: ["room", "token", "seq"],
                   readableFromOtherOrigins: true) { [self] in state($0) }
        router.add(["POST"], .exact("/api/intent"), parameters: ["room", "token"]) { [self] in postIntent($0) }
        router.add(["GET"], .exact("/api/history"), parameters: ["room", "token", "since", "limit"],
                   readableFromOtherOrigins: true) { [self] in historyPage($0) }
    }

    private func state(_ request: HTTPRequest) {
        let name: String
        switch roomAccess.check(request) {
        case .failure(let error): return responder.respond(request.exchange, error)
        case .success(let access): name = access.room
        }
        if request.query["seq"] != nil { return pastState(request, room: name) }
        let listing = PresenceListing(config: config)
        directory.touchedRuntime(for: name).whenReady { [responder] runtime in
            guard !request.exchange.isClosed else { return }
            guard let room = runtime.room else { return responder.respond(request.exchange, .unloaded(runtime)) }
            let body = ServerMessageEncoder.roomState(
                room: name, epoch: room.epoch, seq: room.committed.seq, state: room.committed.scene,
                presence: runtime.presenceList(limit: listing.limit(count: runtime.presenceCount)),
                presenceCount: runtime.presenceCount)
            responder.respond(request.exchange, status: 200, json: body)
        }
    }

    // MARK: history (section 11)

    /// `GET /api/state?seq=N`: the room right after event N, with the dragon's label then.
    private func pastState(_ request: HTTPRequest, room name: String) {
        let seq: UInt64
        do throws(HTTPError) {
            seq = try QueryArgument.sequenceNumber(request.query, "seq") ?? 0
        } catch {
            return responder.respond(request.exchange, error)
        }
        directory.touchedRuntime(for: name).whenReady { [history, responder] runtime in
            history.state(of: runtime, at: seq) { result in
                guard !request.exchange.isClosed else { return }
                switch result {
                case .failure(let error):
                    responder.respond(request.exchange, error)
                case .success(let past):
                    var w = JSONWriter(capacity: 512)
                    w.beginObject()
                    w.key("room"); w.string(name)
                    w.key("epoch"); w.string(past.epoch)
                    w.key("seq"); w.uint(past.seq)
                    w.key("state"); ServerMessageEncoder.scene(past.scene, into: &w)
                    w.key("dragonStatus"); w.string(past.dragonStatus)
                    w.endObject()
                    responder.respond(request.exchange, status: 200, json: w.bytes)
                }
            }
        }
    }

    /// `GET /api/history?room&since&limit`: events exactly as broadcast, oldest first.
    private func historyPage(_ request: HTTPRequest) {
        let name: String
        switch roomAccess.check(request) {
        case .failure(let error): return responder.respond(request.exchange, error)
        case .success(let access): name = access.room
        }
        let since: UInt64?
        let limit: Int
        do throws(HTTPError) {
            since = try QueryArgument.sequenceNumber(request.query, "since")
            limit = try QueryArgument.integer(request.query, "limit", in: 1...RoomHistory.maxLimit)
                ?? RoomHistory.defaultLimit
        } catch {
            return responder.respond(request.exchange, error)
        }
        directory.touchedRuntime(for: name).whenReady { [history, responder] runtime in
            history.page(of: runtime, since: since, limit: limit) { result in
                guard !request.exchange.isClosed else { return }
                switch result {
                case .failure(let error):
                    responder.respond(request.exchange, error)
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
                    responder.respond(request.exchange, status: 200, json: w.bytes)
                }
            }
        }
    }

    private func postIntent(_ request: HTTPRequest) {
        let name: String, role: Role, tokenName: String?
        switch roomAccess.checkChange(request) {
        case .failure(let error): return responder.respond(request.exchange, error)
        case .success(let access): (name, role, tokenName) = access
        }
        switch decodeIntent(request, tokenName: tokenName) {
        case .failure(let error):
            metrics.countError(error.code)
            responder.respond(request.exchange, HTTPError(error))
        case .success(let (intent, sender)):
            let address = request.peerAddress
            directory.touchedRuntime(for: name).whenReady { [self] runtime in
                guard !request.exchange.isClosed else { return }
                if let refusal = admission.refusal(for: intent, role: role, takeToken: { takeIntentToken(address) }) {
                    return responder.respond(request.exchange, HTTPError(refusal))
                }
                guard directory.mayCreate(runtime, by: address) else {
                    let wait = directory.secondsUntilNewRoom(by: address)
                    return responder.respond(request.exchange, HTTPError(.rateLimited,
                        "too many new rooms from \(address): \(config.limits.roomsPerAddress) a minute; try again in \(wait) s"),
                        headers: [("Retry-After", "\(wait)")])
                }
                router.route(intent, in: runtime, sender: sender, reply: .http(request.exchange),
                             voterKey: "http \(address)")
            }
        }
    }

    /// The intent in the body and its sender, or the protocol error to answer. A token's
    /// name is the sender's, as on a WebSocket; `X-Happy-Name` only names a caller no token names.
    private func decodeIntent(_ request: HTTPRequest, tokenName: String?) -> Result<(Intent, Participant), WireError> {
        let senderName = tokenName ?? request.headers["x-happy-name"] ?? "http"
        guard Names.isValidDisplayName(senderName) else {
            return .failure(WireError(.invalidValue, "X-Happy-Name must be 1-32 printable characters"))
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(request.body)
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
        return .success((intent, Participant(id: "http", name: senderName)))
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

extension JSONValue {
    var objectMembers: [(key: String, value: JSONValue)] {
        if case .object(let members) = self { return members }
        return []
    }
}
