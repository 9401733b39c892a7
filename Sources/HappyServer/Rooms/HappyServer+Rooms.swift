import HappyCore

/// Rooms: created on demand, loaded from the store off the service thread,
/// joined and left by connections, announced through presence messages.
extension HappyServer {
    /// Seconds an empty room stays in memory before it is dropped (its state stays in the store).
    static let roomIdleSeconds = 60.0
    /// The same for a room that was only ever read over HTTP.
    static let unusedRoomIdleSeconds = 5.0
    /// Rooms without clients kept in memory: `limits.maxRooms`, so that at
    /// most twice that many rooms are ever in memory (plus loads in flight).
    var idleRoomCap: Int { config.limits.maxRooms }

    // MARK: admission

    func admit(_ connection: Connection, query: [String: String]) {
        if shuttingDown {
            refuse(connection, WebSocketCloseCode.goingAway, "server shutting down", reason: "shutdown")
            return
        }
        let roomName = query["room"] ?? config.defaultRoom
        guard Names.isValidRoom(roomName) else {
            refuse(connection, WebSocketCloseCode.policyViolation, "invalid room name: use 1-64 characters of A-Z a-z 0-9 _ -",
                   reason: "room")
            return
        }
        if let name = query["name"] {
            guard Names.isValidDisplayName(name) else {
                refuse(connection, WebSocketCloseCode.policyViolation, "invalid name: use 1-32 printable characters",
                       reason: "name")
                return
            }
            connection.participant.name = name
        }
        switch authorize(connection, query: query, room: roomName) {
        case .allowed(let role, let name):
            connection.role = role
            // With access tokens the name is the token's subject, whatever `name=` says.
            if let name { connection.participant.name = name }
        case .refused(let message):
            refuse(connection, WebSocketCloseCode.policyViolation, message, reason: "token")
            return
        }
        guard admittedCount < config.limits.maxClients else {
            refuse(connection, WebSocketCloseCode.tryAgainLater, "server full: \(config.limits.maxClients) clients connected",
                   reason: "maxClients")
            return
        }
        let runtime = runtime(for: roomName)
        guard runtime.isOccupied || occupiedRoomCount < config.limits.maxRooms else {
            refuse(connection, WebSocketCloseCode.tryAgainLater, "too many rooms in use: \(config.limits.maxRooms)",
                   reason: "maxRooms")
            return
        }
        connection.admitted = true
        admittedCount += 1
        runtime.wasUsed = true
        connection.roomName = roomName
        connection.room = runtime
        connection.resume = (query["since"].flatMap { UInt64($0) }, query["epoch"])
        changeOccupancy(of: runtime) { runtime.reservedSeats += 1 }
        logger.info("open", ["id": connection.participant.id, "name": connection.participant.name,
                              "room": roomName, "peer": connection.peerAddress])
        // Strong captures: weak references would give these hot objects a
        // refcount side table, slowing every retain on the broadcast path.
        runtime.whenReady { [self] runtime in join(connection, runtime) }
    }

    private func refuse(_ connection: Connection, _ code: WebSocketCloseCode, _ message: String, reason: String) {
        metrics.countRefusal(reason)
        logger.info("refused", ["reason": reason, "code": "\(code)", "peer": connection.peerAddress, "detail": message])
        connection.close(code: code, reason: message)
    }

    private func join(_ connection: Connection, _ runtime: RoomRuntime) {
        changeOccupancy(of: runtime) { runtime.reservedSeats -= 1 }
        guard !connection.isClosed, connection.closeRequest == nil else { return }
        guard let room = runtime.room else {
            connection.close(code: WebSocketCloseCode.internalError,
                             reason: "room \(runtime.name) could not be loaded: \(runtime.loadError?.message ?? "unknown")")
            return
        }
        // The others hear of the newcomer first; the newcomer starts reading
        // the room's broadcasts after that, with its welcome.
        clusterBus?.announce(joined: connection.participant, in: runtime.name)
        if runtime.presenceCount + 1 <= config.limits.presenceBroadcastMax {
            broadcast(OutboundFrame(encoded: ServerMessageEncoder.presence(joined: connection.participant,
                                                                            headroom: OutboundFrame.headroom)),
                      in: runtime)
        }
        changeOccupancy(of: runtime) { runtime.add(connection) }
        connection.joined = true
        connection.cursor = runtime.log.end

        let decision = ResumeDecision.decide(since: connection.resume.since, epoch: connection.resume.epoch,
                                             roomEpoch: room.epoch, roomSeq: room.committed.seq,
                                             history: room.history)
        var welcome = Welcome(
            room: runtime.name, you: connection.participant, role: connection.role, epoch: room.epoch,
            seq: room.committed.seq, state: room.committed.scene, geometry: rules.geometry,
            presence: [], presenceCount: runtime.presenceCount, serverTime: SystemTime.wallMilliseconds(),
            recovered: decision.isRecovered, limits: config.welcomeLimits)
        welcome.encodedPresence = runtime.encodedPresenceList(limit: config.limits.presenceBroadcastMax)
        send(OutboundFrame(encoded: ServerMessageEncoder.welcome(welcome, headroom: OutboundFrame.headroom)),
             to: connection)
        if case .recovered(let replay) = decision {
            for frame in replay { send(frame, to: connection, droppable: true) }
        }
        let early = connection.early
        connection.early = []
        for message in early {
            if let close = message.withUnsafeBufferPointer({ handleClientMessage(connection, $0) }) {
                connection.close(code: close.code, reason: close.reason, afterDrain: close.afterDrain)
                break
            }
        }
    }

    /// Takes a closed connection out of its room and tells the others.
    func leave(_ connection: Connection) {
        guard connection.admitted else { return }
        connection.admitted = false
        admittedCount -= 1
        guard let runtime = connection.room else { return }
        connection.room = nil
        guard connection.joined else { return }
        let countBefore = runtime.presenceCount
        runtime.log.abandon(from: connection.cursor)
        changeOccupancy(of: runtime) { runtime.remove(connection) }
        clusterBus?.announce(left: connection.participant, in: runtime.name)
        if countBefore <= config.limits.presenceBroadcastMax {
            broadcast(OutboundFrame(encoded: ServerMessageEncoder.presence(left: connection.participant,
                                                                            headroom: OutboundFrame.headroom)),
                      in: runtime)
        }
    }

    /// Applies `change` and keeps `occupiedRoomCount` (rooms with clients) right.
    func changeOccupancy(of runtime: RoomRuntime, _ change: () -> Void) {
        let before = runtime.isOccupied
        change()
        let after = runtime.isOccupied
        if before != after {
            occupiedRoomCount += after ? 1 : -1
            if !after { runtime.idleSince = SystemTime.monotonicSeconds() }
        }
    }

    // MARK: loading

    /// The room named `name`, created and loading if it was not in memory.
    func runtime(for name: String) -> RoomRuntime {
        if let runtime = rooms[name] {
            if runtime.loadError != nil {
                runtime.resetFailedLoad()
                startLoading(runtime)
            }
            return runtime
        }
        if rooms.count - occupiedRoomCount >= idleRoomCap + idleRoomCap / 10 + 1 { trimIdleRooms() }
        let runtime = RoomRuntime(name: name, now: SystemTime.monotonicSeconds(), logBytes: config.limits.maxQueuedBytes)
        rooms[name] = runtime
        if let clusterBus {
            // Hear of the room's changes and presence from the other nodes
            // for as long as it is in memory; welcome nobody before that.
            runtime.awaitingRemotePresence = true
            clusterBus.watch(room: name)
        }
        startLoading(runtime)
        return runtime
    }

    private func startLoading(_ runtime: RoomRuntime) {
        if storeWorker.isSynchronous {
            let result: Result<StoredRoom?, StoreError>
            do throws(StoreError) { result = .success(try storeWorker.store.loadRoom(named: runtime.name)) } catch { result = .failure(error) }
            roomLoaded(runtime.name, result: result)
        } else {
            storeWorker.load(runtime.name)
        }
    }

    func roomLoaded(_ name: String, result: Result<StoredRoom?, StoreError>) {
        guard let runtime = rooms[name], runtime.isLoading else { return }
        let capacity = config.limits.historySize
        switch result {
        case .success(let stored?):
            let room = Room<OutboundFrame>(name: name, epoch: stored.epoch,
                                           snapshot: RoomSnapshot(seq: stored.seq, scene: stored.scene),
                                           historyCapacity: capacity)
            for event in stored.history {
                room.history.append(seq: event.seq, OutboundFrame(payload: event.json, seq: event.seq))
            }
            recoverDragonStatus(runtime, history: stored.history)
            runtime.loaded(room)
        case .success(nil):
            let room = Room<OutboundFrame>(name: name, epoch: Identifiers.newEpoch(),
                                           snapshot: RoomSnapshot(seq: 0, scene: rules.defaults),
                                           historyCapacity: capacity)
            pipeline.appendCreation(RoomCommit(room: name, epoch: room.epoch, baseSeq: 0, seq: 0,
                                               scene: rules.defaults, events: []))
            logger.debug("room created", ["room": name, "epoch": room.epoch])
            runtime.creationPending = true
            recoverDragonStatus(runtime, history: [])
            runtime.loaded(room)
        case .failure(let error):
            logger.error("room could not be loaded", ["room": name, "error": error.message])
            runtime.finishLoading(nil, error: error)
        }
    }

    /// Drops rooms that have been empty and quiet for a while.
    func evictIdleRooms(now: Double) {
        for (name, runtime) in rooms where runtime.isEvictable
            && now - runtime.idleSince > (runtime.wasUsed ? Self.roomIdleSeconds : Self.unusedRoomIdleSeconds) {
            rooms.removeValue(forKey: name)
            clusterBus?.unwatch(room: name)
        }
    }

    /// Past the cap of rooms without clients (a flood of `GET /api/state`
    /// for made-up rooms, say), drops the longest idle ones down to the cap;
    /// the slack above the cap keeps this O(1) per room created on average.
    private func trimIdleRooms() {
        let excess = rooms.count - occupiedRoomCount - idleRoomCap
        guard excess > 0 else { return }
        let idle = rooms.values.filter(\.isEvictable).sorted { $0.idleSince < $1.idleSince }
        for runtime in idle.prefix(excess) { rooms.removeValue(forKey: runtime.name) }
        metrics.roomsTrimmed += min(excess, idle.count)
    }
}
