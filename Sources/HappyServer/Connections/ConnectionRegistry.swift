import HappyCore

/// The WebSocket connections: opened and closed, admitted into a room
/// (name, token, `maxClients`, `maxRooms`), joined with a welcome, left with
/// a presence message, and swept once a second for keepalive and slow readers.
final class ConnectionRegistry {
    private(set) var connections: [Connection] = []
    /// Connections admitted into a room and not yet closed.
    private(set) var admittedCount = 0
    private var nextSerial: UInt64 = 0
    private var churnAtLastTrim = 0
    /// Every client is being closed (a shutdown or an upgrade): nobody stays to hear who left.
    private var closingEveryone = false

    private var config: HappyConfig

    /// Applies a configuration read again (SIGHUP) to what comes next.
    func reconfigure(_ config: HappyConfig) {
        self.config = config
        presenceListing = PresenceListing(config: config)
        welcomeConstants = ServerMessageEncoder.welcomeConstants(geometry: rules.geometry, limits: config.welcomeLimits)
    }
    private let rules: SceneRules
    private var presenceListing: PresenceListing
    /// The welcome's geometry and limits, encoded once.
    private lazy var welcomeConstants = ServerMessageEncoder.welcomeConstants(geometry: rules.geometry,
                                                                              limits: config.welcomeLimits)
    private let directory: RoomDirectory
    private let access: AccessControl
    private let intake: MessageIntake
    private let broadcaster: Broadcaster
    private let crowd: CrowdDelivery
    private let webhooks: WebhookFeed
    private let pointers: PointerService
    private let clusterBus: (any ClusterBus)?
    private let lifecycle: ServerLifecycle
    private let metrics: Metrics
    private let refusals: RefusalLog
    private let logger: Logger
    private let clock: ServiceClock
    /// Hands freed heap back to the system (the transport's allocator hook).
    private let releaseFreeMemory: () -> Void
    private let membershipKey = Membership.Key()
    private let keepaliveKey = Keepalive.Key()

    init(config: HappyConfig, directory: RoomDirectory, access: AccessControl, intake: MessageIntake,
         broadcaster: Broadcaster, crowd: CrowdDelivery, webhooks: WebhookFeed, pointers: PointerService,
         clusterBus: (any ClusterBus)?,
         lifecycle: ServerLifecycle, refusals: RefusalLog,
         metrics: Metrics, logger: Logger, clock: ServiceClock, releaseFreeMemory: @escaping () -> Void = {}) {
        self.refusals = refusals
        self.config = config
        rules = config.sceneRules
        presenceListing = PresenceListing(config: config)
        self.directory = directory
        self.access = access
        self.intake = intake
        self.broadcaster = broadcaster
        self.crowd = crowd
        self.webhooks = webhooks
        self.pointers = pointers
        self.clusterBus = clusterBus
        self.lifecycle = lifecycle
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.releaseFreeMemory = releaseFreeMemory
    }

    private var keepalivePolicy: Keepalive.Policy {
        Keepalive.Policy(pingInterval: config.limits.pingIntervalSeconds, pingTimeout: config.limits.pingTimeoutSeconds,
                         writeTimeout: config.limits.writeTimeoutSeconds)
    }

    // MARK: open and close

    /// A WebSocket handshake completed. `query` and `token` come from the
    /// upgrade request; echo connections are not admitted anywhere.
    @discardableResult
    func open(transport: any ConnectionTransport, kind: Connection.Kind, peerAddress: String, usesExtensions: Bool,
              query: [String: String], token: String?) -> Connection {
        nextSerial += 1
        let connection = Connection(
            transport: transport, kind: kind, serial: nextSerial, idSuffix: clusterBus.map { "-\($0.nodeID)" } ?? "",
            peerAddress: peerAddress, usesExtensions: usesExtensions, limits: config.limits, now: clock.fresh(),
            wallMilliseconds: clock.wallMilliseconds())
        connection.modify(membershipKey) { $0.listed(at: connections.count) }
        connections.append(connection)
        metrics.connectionsOpened += 1
        releaseMemoryAfterChurn(threshold: 512)
        if kind == .happy { admit(connection, query: query, token: token) }
        return connection
    }

    /// The connection is gone (closed by either side or dropped).
    func closed(_ connection: Connection) {
        connection.modify(membershipKey) { $0.closed() }
        removeFromList(connection)
        metrics.connectionsClosed += 1
        leave(connection)
        if connection.kind == .happy {
            logger.info("close", ["id": connection.participant.id, "room": connection.membership.roomName,
                                  "code": connection.output.closeRequest.map { "\($0.code)" } ?? "by peer",
                                  "seconds": String(format: "%.1f", clock.fresh() - connection.openedAt)])
        }
    }

    private func removeFromList(_ connection: Connection) {
        let index = connection.membership.listIndex
        guard index >= 0, index < connections.count, connections[index] === connection else { return }
        let last = connections.removeLast()
        if index < connections.count {
            connections[index] = last
            last.modify(membershipKey) { $0.listed(at: index) }
        }
        connection.modify(membershipKey) { $0.unlisted() }
    }

    /// Every client not yet closing closes with `code` once it has what was recorded.
    func closeAll(code: WebSocketCloseCode, reason: String) {
        closingEveryone = true
        for connection in connections where connection.output.closeRequest == nil {
            broadcaster.close(connection, code: code, reason: reason, afterDrain: true)
        }
    }

    /// A client that sent an intent this recently is a writer in a restart's first wave.
    static let recentWriterSeconds = 10.0
    /// How long the others wait for their close after the writers' (`closeAll`, by the server's timer).
    static let restartWaveDelay = 0.05

    /// A restart's first wave: the clients that wrote lately close now, the
    /// others `restartWaveDelay` later. The writers then find the process
    /// taking over quiet, and write again soonest; the others lose nothing
    /// by waiting, since nothing happens here any more and they resume where
    /// they were. False when nobody wrote lately (then close everyone at once).
    func closeRecentWriters(code: WebSocketCloseCode, reason: String) -> Bool {
        let since = clock.now() - Self.recentWriterSeconds
        let writers = connections.filter { $0.commits.lastAppliedAt >= since }
        guard !writers.isEmpty, writers.count < connections.count else { return false }
        closingEveryone = true
        for connection in writers { broadcaster.close(connection, code: code, reason: reason, afterDrain: true) }
        return true
    }

    // MARK: admission

    private func admit(_ connection: Connection, query: [String: String], token: String?) {
        if lifecycle.isShuttingDown {
            return refuse(connection, .goingAway, "server shutting down", reason: "shutdown")
        }
        let roomName = query["room"] ?? config.defaultRoom
        guard Names.isValidRoom(roomName) else {
            return refuse(connection, .policyViolation, "invalid room name: use 1-64 characters of A-Z a-z 0-9 _ -",
                          reason: "room")
        }
        if let name = query["name"], !Names.isValidDisplayName(name) {
            return refuse(connection, .policyViolation, "invalid name: use 1-32 printable characters", reason: "name")
        }
        let role: Role, name: String?
        switch access.check(token, for: .webSocket(room: roomName)) {
        case .success(let grant):
            role = grant.role
            // With access tokens the name is the token's subject, whatever `name=` says.
            name = grant.name ?? query["name"]
        case .failure(let refusal):
            // Unauthorized or forbidden alike: after the handshake, a close with the reason says it.
            return refuse(connection, .policyViolation, refusal.message, reason: "token")
        }
        guard admittedCount < config.limits.maxClients else {
            return refuse(connection, .tryAgainLater, "server full: \(config.limits.maxClients) clients connected",
                          reason: "maxClients")
        }
        let runtime = directory.runtime(for: roomName)
        guard runtime.isOccupied || directory.occupiedCount < config.limits.maxRooms else {
            return refuse(connection, .tryAgainLater, "too many rooms in use: \(config.limits.maxRooms)", reason: "maxRooms")
        }
        let resume = (since: query["since"].flatMap { UInt64($0) }, epoch: query["epoch"])
        let observing = ["1", "true"].contains(query["observe"] ?? "")
        connection.modify(membershipKey) {
            $0.admit(room: roomName, name: name, role: role, resume: resume, observing: observing)
        }
        admittedCount += 1
        directory.reserveSeat(for: connection, in: runtime)
        logger.info("open", ["id": connection.participant.id, "name": connection.participant.name,
                              "room": roomName, "peer": connection.peerAddress])
        // Strong captures: weak references would give these hot objects a
        // refcount side table, slowing every retain on the broadcast path.
        runtime.whenReady { [self] runtime in join(connection, runtime) }
    }

    private func refuse(_ connection: Connection, _ code: WebSocketCloseCode, _ message: String, reason: String) {
        metrics.countRefusal(reason)
        refusals.note(reason, ["code": "\(code)", "peer": connection.peerAddress, "detail": message])
        broadcaster.close(connection, code: code, reason: message)
    }

    private func join(_ connection: Connection, _ runtime: RoomRuntime) {
        guard !connection.isClosed, connection.output.closeRequest == nil else {
            return directory.endReservation(in: runtime)
        }
        guard let room = runtime.room else {
            directory.endReservation(in: runtime)
            broadcaster.close(connection, code: .internalError,
                              reason: "room \(runtime.name) could not be loaded: \(runtime.loadError?.message ?? "unknown")")
            return
        }
        // Joining makes a new room a stored one (watching does not), within the address's allowance.
        if !connection.isObserver && !directory.recordIfNew(runtime, creator: connection.peerAddress) {
            directory.endReservation(in: runtime)
            let wait = directory.secondsUntilNewRoom(by: connection.peerAddress)
            return refuse(connection, .tryAgainLater, "too many new rooms from your address: "
                          + "\(config.limits.roomsPerAddress) a minute; try again in \(wait) s", reason: "roomsPerAddress")
        }
        // The others hear of the newcomer first (an observer is in nobody's
        // presence); the newcomer starts reading the room's broadcasts after
        // that, with its welcome.
        if !connection.isObserver {
            clusterBus?.announce(joined: connection.participant, in: runtime.name)
            crowd.joined(connection.participant, in: runtime, countAfter: runtime.presenceCount + 1)
            webhooks.presence(.presenceJoined, connection.participant, in: runtime)
        }
        directory.takeReservedSeat(connection, in: runtime)
        broadcaster.joined(connection, runtime)

        let resume = connection.membership.resume
        let decision = ResumeDecision.decide(since: resume.since, epoch: resume.epoch,
                                             roomEpoch: room.epoch, roomSeq: room.committed.seq,
                                             history: room.history)
        var welcome = Welcome(
            room: runtime.name, you: connection.participant, role: connection.role, epoch: room.epoch,
            seq: room.committed.seq, state: room.committed.scene, geometry: rules.geometry,
            presence: [], presenceCount: runtime.presenceCount, serverTime: clock.wallMilliseconds(),
            recovered: decision.isRecovered, limits: config.welcomeLimits)
        welcome.observerCount = runtime.observers.count
        welcome.delivery = runtime.crowd.mode
        welcome.tickMs = runtime.crowd.tickMs
        welcome.encodedPresence = runtime.encodedPresenceList(limit: presenceListing.limit(count: runtime.presenceCount))
        welcome.encodedState = runtime.encodedStateObject(room.committed.scene)
        welcome.encodedPointers = pointers.welcomeList(for: connection, in: runtime)
        welcome.encodedConstants = welcomeConstants
        broadcaster.send(OutboundFrame(encoded: ServerMessageEncoder.welcome(welcome, headroom: OutboundFrame.headroom)),
                         to: connection)
        if case .recovered(let replay) = decision {
            for frame in replay { broadcaster.send(frame, to: connection, droppable: true) }
        }
        intake.replayEarlyMessages(of: connection)
    }

    /// Takes a closed connection out of its room and tells the others.
    private func leave(_ connection: Connection) {
        guard connection.modify(membershipKey, { $0.release() }) else { return }
        admittedCount -= 1
        guard let runtime = connection.room else { return }
        guard connection.joined else { return directory.unseat(connection, from: runtime) }
        let countBefore = runtime.presenceCount
        broadcaster.left(connection, runtime)
        // Before the room may be reported emptied.
        if !connection.isObserver { webhooks.presence(.presenceLeft, connection.participant, in: runtime) }
        directory.unseat(connection, from: runtime)
        guard !connection.isObserver else { return pointers.left(connection, room: runtime) }
        clusterBus?.announce(left: connection.participant, in: runtime.name)
        // Those still here are being closed too: a leave for each of them would only delay their close.
        guard !closingEveryone else { return }
        pointers.left(connection, room: runtime)
        crowd.left(connection.participant, in: runtime, countBefore: countBefore)
    }

    // MARK: keepalive and sweep

    /// Anything from the peer (a message or a pong) shows it is alive.
    @inline(__always)
    func noteAlive(_ connection: Connection) {
        connection.modify(keepaliveKey) { $0.received(at: clock.now()) }
    }

    /// How often the sweep runs for keepalive and slow readers: half the
    /// ping interval, the ping timeout, a third of the write timeout, at
    /// most 10 s (at the defaults a silent client is pinged after 20-30 s
    /// of silence and dropped by the first sweep past `pingTimeoutSeconds`).
    /// Each sweep walks every connection and its pings wake the loop to
    /// write them and read the pongs, so it runs no more often than needed.
    var sweepInterval: Double {
        let limits = config.limits
        let needed = min(limits.pingIntervalSeconds / 2, limits.pingTimeoutSeconds, limits.writeTimeoutSeconds / 3)
        return min(10, max(0.25, needed))
    }

    /// Every `sweepInterval`: keepalive pings, dead and stuck peers. One pass over
    /// all connections replaces per-connection validity timers, which would
    /// re-sort a shared list on every received frame.
    func sweep(now: Double) {
        let policy = keepalivePolicy
        // A connection whose close frame is out ends on the close timeout.
        for connection in connections where !connection.isClosed && !connection.output.closeFrameSent {
            // A flood of pings shows in no callback, only in the socket's count.
            if connection.output.closeRequest == nil && !intake.checkWire(connection) { continue }
            let readingPaused = connection.output.readingPaused, stalledSince = connection.output.stalledSince
            let caughtUp = broadcaster.isCaughtUp(connection)
            let action = connection.modify(keepaliveKey) {
                $0.sweep(now: now, policy: policy, readingPaused: readingPaused, caughtUp: caughtUp,
                         stalledSince: stalledSince)
            }
            switch action {
            case .none:
                break
            case .sendPing:
                broadcaster.sendPing(to: connection, now: now)
            case .dropUnresponsive:
                metrics.pingTimeouts += 1
                logger.info("dropping unresponsive client", ["id": connection.participant.id,
                                                             "peer": connection.peerAddress])
                connection.kill()
            case .dropSlowReader:
                metrics.slowReaderCloses += 1
                logger.info("dropping client that stopped reading", ["id": connection.participant.id,
                                                                     "queued": queuedDescription(connection)])
                connection.kill()
            }
        }
        releaseMemoryAfterChurn()
    }

    /// What a client has not read: bytes queued, or that it fell out of the log.
    private func queuedDescription(_ connection: Connection) -> String {
        let replies = connection.output.outbox.queuedBytes
        guard let unread = broadcaster.unreadBytes(of: connection) else { return "\(replies) and a resync" }
        return "\(unread)"
    }

    /// Welcomes and presence messages of a crowd joining or leaving are big,
    /// short-lived allocations; once the churn has passed, hand the freed
    /// heap back to the system instead of keeping it as resident memory.
    /// Called by the sweep (after any churn of 64 or more) and while a crowd
    /// is still arriving (every `threshold` connections).
    private func releaseMemoryAfterChurn(threshold: Int = 64) {
        let churn = metrics.connectionsOpened + metrics.connectionsClosed
        guard churn - churnAtLastTrim >= threshold else { return }
        churnAtLastTrim = churn
        releaseFreeMemory()
    }
}

extension Membership {
    /// Made only here: `ConnectionRegistry` alone changes a connection's `membership`.
    struct Key { fileprivate init() {} }
}

extension Keepalive {
    /// Made only here: `ConnectionRegistry` alone changes a connection's `keepalive`.
    struct Key { fileprivate init() {} }
}
