import HappyCore

/// Rooms shared with other nodes: their events and presence arrive through
/// the cluster bus and are applied on the service thread; a room another
/// node moved on is brought up to what the shared store holds. Sendable
/// because the bus's handlers capture it; they only post to the inbox, and
/// it runs on the service thread.
final class ClusterLink: @unchecked Sendable {
    private let bus: (any ClusterBus)?
    private let directory: RoomDirectory
    private let coordinator: CommitCoordinator
    private let broadcaster: Broadcaster
    private let streams: FrameStreams
    private let rules: SceneRules
    private let presenceBroadcastMax: Int
    private let metrics: Metrics
    private let logger: Logger

    init(bus: (any ClusterBus)?, directory: RoomDirectory, coordinator: CommitCoordinator, broadcaster: Broadcaster,
         streams: FrameStreams, config: HappyConfig, metrics: Metrics, logger: Logger) {
        self.bus = bus
        self.directory = directory
        self.coordinator = coordinator
        self.broadcaster = broadcaster
        self.streams = streams
        rules = config.sceneRules
        presenceBroadcastMax = config.limits.presenceBroadcastMax
        self.metrics = metrics
        self.logger = logger
        if let bus { coordinator.healthChecks.append { bus.linkProblem } }
    }

    /// Connects the bus's handlers to the service thread's inbox.
    func start(inbox: WakeInbox) {
        guard let bus else { return }
        bus.start(
            events: { events in inbox.post(.task(ServiceThreadTask { [self] in remoteEvents(events) })) },
            presence: { presence in inbox.post(.task(ServiceThreadTask { [self] in remotePresence(presence) })) },
            reconnected: { inbox.post(.task(ServiceThreadTask { [self] in reconnected() })) })
    }

    func stop() {
        bus?.stop()
    }

    /// Events another node recorded: the local clients get them as they were broadcast there.
    func remoteEvents(_ events: RemoteEvents) {
        guard let runtime = directory[events.room], let room = runtime.room else { return }
        // Events published while this node was not listening (a bus outage)
        // are missing before these: the store still holds them, so read the
        // room again instead of resyncing the clients and losing the history.
        if events.epoch == room.epoch, let first = events.events.first?.seq, first > room.committed.seq + 1 {
            coordinator.refresh(events.room)
            return
        }
        advance(runtime, to: StoredRoom(name: events.room, epoch: events.epoch, seq: events.seq,
                                        scene: events.scene, history: events.events))
    }

    func remotePresence(_ presence: RemotePresence) {
        switch presence {
        case .members(let room, let list):
            guard let runtime = directory[room] else { return }
            runtime.remoteMembers = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            runtime.remotePresenceArrived()
        case .joined(let room, let participant):
            guard let runtime = directory[room], runtime.remoteMembers[participant.id] == nil else { return }
            runtime.remoteMembers[participant.id] = participant
            if runtime.presenceCount <= presenceBroadcastMax {
                broadcaster.broadcast(OutboundFrame(encoded: ServerMessageEncoder.presence(
                    joined: participant, headroom: OutboundFrame.headroom)), in: runtime)
            }
        case .left(let room, let participant):
            guard let runtime = directory[room], runtime.remoteMembers[participant.id] != nil else { return }
            let countBefore = runtime.presenceCount
            runtime.remoteMembers[participant.id] = nil
            if countBefore <= presenceBroadcastMax {
                broadcaster.broadcast(OutboundFrame(encoded: ServerMessageEncoder.presence(
                    left: participant, headroom: OutboundFrame.headroom)), in: runtime)
            }
        }
    }

    /// After an outage the rooms in memory may be behind: read them again.
    private func reconnected() {
        logger.info("cluster bus reconnected; refreshing rooms", ["rooms": "\(directory.rooms.count)"])
        for runtime in directory.rooms.values where runtime.room != nil {
            coordinator.refresh(runtime.name)
        }
    }

    /// A room read again from the shared store. A read that failed (the
    /// store still away) is tried again later; a room with intents waiting
    /// for the store is read again once they are settled, since the store
    /// may already hold their events and they would come back as another
    /// node's.
    func roomRefreshed(_ name: String, result: Result<StoredRoom?, StoreError>) {
        guard let runtime = directory[name], runtime.room != nil else { return }
        switch result {
        case .failure:
            coordinator.refreshLater(name)
        case .success(let stored):
            coordinator.storeAnswered()
            guard runtime.pendingIntents == 0 else { return coordinator.refreshLater(name) }
            advance(runtime, to: stored)
        }
    }

    /// Moves `runtime` to `stored`. Local clients get the events they missed
    /// when they follow on directly, or one resync when the gap cannot be
    /// filled (history trimmed, epoch changed). `nil` means the store lost the
    /// room: it starts again from the defaults with a new epoch.
    func advance(_ runtime: RoomRuntime, to stored: StoredRoom?, refusedBase: UInt64? = nil) {
        guard let room = runtime.room else { return }
        guard let stored else {
            let epoch = Identifiers.newEpoch()
            room.replace(epoch: epoch, snapshot: RoomSnapshot(seq: 0, scene: rules.defaults))
            coordinator.recordCreation(RoomCommit(room: runtime.name, epoch: epoch, baseSeq: 0, seq: 0,
                                                  scene: rules.defaults, events: []))
            broadcaster.resyncMembers(of: runtime)
            return
        }
        let current = room.committed.seq
        if stored.epoch == room.epoch && stored.seq <= current {
            // Usually a read or a bus message older than what this node holds by
            // now. But Redis holding less than a refused commit was built on (read
            // after the refusal) means it lost events it had recorded (no append-only
            // file synced on every write): keeping this node's seq would refuse every
            // commit from now on, and Redis is the record, so follow it.
            guard let refusedBase, stored.seq < refusedBase else {
                room.rollback()
                return
            }
            logger.error("Redis is behind this node: it lost recorded events; following Redis",
                         ["room": runtime.name, "redisSeq": "\(stored.seq)", "nodeSeq": "\(current)",
                          "fix": "run Redis with appendonly yes and appendfsync always"])
        }
        let missing = stored.history.filter { $0.seq > current }
        let contiguous = stored.epoch == room.epoch && missing.first?.seq == current + 1
            && missing.last?.seq == stored.seq && missing.count == Int(stored.seq - current)
        if contiguous {
            let frames = missing.map { (seq: $0.seq, element: OutboundFrame(payload: $0.json, seq: $0.seq)) }
            room.catchUp(to: RoomSnapshot(seq: stored.seq, scene: stored.scene), events: frames)
            metrics.events += frames.count
            for frame in frames { broadcaster.broadcast(frame.element, in: runtime) }
            followDragonStatus(runtime, events: missing)
            streams.refreshStreams(of: runtime)
            return
        }
        room.replace(epoch: stored.epoch, snapshot: RoomSnapshot(seq: stored.seq, scene: stored.scene))
        for event in stored.history {
            room.history.append(seq: event.seq, OutboundFrame(payload: event.json, seq: event.seq))
        }
        runtime.dragonStatus = directory.dragonStatus.recover(from: stored.history.lazy.map(\.json))
        broadcaster.resyncMembers(of: runtime)
        streams.refreshStreams(of: runtime)
    }

    /// Follows events recorded by another node, keeping the label when none
    /// of them is a dragon event.
    private func followDragonStatus(_ runtime: RoomRuntime, events: [StoredEvent]) {
        let status = directory.dragonStatus
        let text = status.recover(from: events.lazy.map(\.json))
        if text != status.initial || events.contains(where: { DragonStatus.isReset($0.json) }) {
            runtime.dragonStatus = text
        }
    }
}
