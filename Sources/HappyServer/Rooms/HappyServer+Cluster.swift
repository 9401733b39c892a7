import HappyCore

/// Cluster mode: the other nodes' events and presence, arriving through the
/// bus, applied on the service thread.
extension HappyServer {
    /// Connects the bus's handlers to the inbox. Called by `start()`.
    func startClusterBus() {
        guard let clusterBus else { return }
        let inbox = self.inbox
        clusterBus.start(
            events: { events in inbox.post(.task(ServiceThreadTask { [self] in remoteEvents(events) })) },
            presence: { presence in inbox.post(.task(ServiceThreadTask { [self] in remotePresence(presence) })) },
            reconnected: { inbox.post(.task(ServiceThreadTask { [self] in clusterReconnected() })) })
    }

    /// Events another node recorded: the local clients get them as they were broadcast there.
    func remoteEvents(_ events: RemoteEvents) {
        guard let runtime = rooms[events.room], let room = runtime.room else { return }
        // Events published while this node was not listening (a bus outage)
        // are missing before these: the store still holds them, so read the
        // room again instead of resyncing the clients and losing the history.
        if events.epoch == room.epoch, let first = events.events.first?.seq, first > room.committed.seq + 1 {
            storeWorker.refresh(events.room)
            return
        }
        advance(runtime, to: StoredRoom(name: events.room, epoch: events.epoch, seq: events.seq,
                                        scene: events.scene, history: events.events))
    }

    func remotePresence(_ presence: RemotePresence) {
        switch presence {
        case .members(let room, let list):
            guard let runtime = rooms[room] else { return }
            runtime.remoteMembers = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            runtime.remotePresenceArrived()
        case .joined(let room, let participant):
            guard let runtime = rooms[room], runtime.remoteMembers[participant.id] == nil else { return }
            runtime.remoteMembers[participant.id] = participant
            if runtime.presenceCount <= config.limits.presenceBroadcastMax {
                broadcastPresence(ServerMessageEncoder.presence(joined: participant, headroom: OutboundFrame.headroom),
                                  in: runtime)
            }
        case .left(let room, let participant):
            guard let runtime = rooms[room], runtime.remoteMembers[participant.id] != nil else { return }
            let countBefore = runtime.presenceCount
            runtime.remoteMembers[participant.id] = nil
            if countBefore <= config.limits.presenceBroadcastMax {
                broadcastPresence(ServerMessageEncoder.presence(left: participant, headroom: OutboundFrame.headroom),
                                  in: runtime)
            }
        }
    }

    private func broadcastPresence(_ encoded: [UInt8], in runtime: RoomRuntime) {
        broadcast(OutboundFrame(encoded: encoded), in: runtime)
    }

    /// After an outage the rooms in memory may be behind: read them again.
    func clusterReconnected() {
        logger.info("cluster bus reconnected; refreshing rooms", ["rooms": "\(rooms.count)"])
        for runtime in rooms.values where runtime.room != nil {
            storeWorker.refresh(runtime.name)
        }
    }

    /// A room read again from the shared store.
    func roomRefreshed(_ name: String, result: Result<StoredRoom?, StoreError>) {
        guard let runtime = rooms[name], runtime.room != nil, case .success(let stored) = result else { return }
        advance(runtime, to: stored)
    }
}
