import HappyCore

/// Rooms shared with other nodes: their events and presence arrive through
/// the cluster bus and are applied on the service thread; a room another
/// node moved on is brought up to what the shared store holds (through the
/// commit path, which owns the room's state). Sendable
/// because the bus's handlers capture it; they only post to the inbox, and
/// it runs on the service thread.
final class ClusterLink: @unchecked Sendable {
    /// Seconds before a failed read of a room is tried again.
    static let refreshRetrySeconds = 1.0

    private let bus: (any ClusterBus)?
    private let inbox: WakeInbox
    private let directory: RoomDirectory
    private let coordinator: CommitCoordinator
    private let store: any StoreAccess
    private let crowd: CrowdDelivery
    private let logger: Logger
    /// Rooms to read again once no intent of theirs waits for the store.
    private var refreshesAfterCommit: Set<String> = []

    init(bus: (any ClusterBus)?, inbox: WakeInbox, directory: RoomDirectory, coordinator: CommitCoordinator,
         store: any StoreAccess, crowd: CrowdDelivery, logger: Logger) {
        self.bus = bus
        self.inbox = inbox
        self.directory = directory
        self.coordinator = coordinator
        self.store = store
        self.crowd = crowd
        self.logger = logger
    }

    /// Why the bus cannot hear the other nodes right now, or nil.
    var linkProblem: String? { bus?.linkProblem }
    /// Other nodes serve the same rooms (cluster mode).
    var sharesRooms: Bool { bus != nil }
    /// The Redis primary the bus follows, for `/healthz` and `/metrics`.
    var followedPrimary: FollowedPrimary? { bus?.followedPrimary }

    /// Connects the bus's handlers to the service thread's inbox.
    func start() {
        guard let bus else { return }
        let inbox = self.inbox
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
            return refresh(runtime)
        }
        coordinator.follow(runtime, to: StoredRoom(name: events.room, epoch: events.epoch, seq: events.seq,
                                                   scene: events.scene, history: events.events))
    }

    func remotePresence(_ presence: RemotePresence) {
        switch presence {
        case .members(let room, let list):
            directory.remoteMembersListed(list, in: room)
        case .joined(let room, let participant):
            guard let runtime = directory[room], directory.remoteJoined(participant, in: runtime) else { return }
            crowd.joined(participant, in: runtime, countAfter: runtime.presenceCount)
        case .left(let room, let participant):
            guard let runtime = directory[room], directory.remoteLeft(participant, in: runtime) else { return }
            crowd.left(participant, in: runtime, countBefore: runtime.presenceCount + 1)
        }
    }

    /// After an outage the rooms in memory may be behind: read them again.
    func reconnected() {
        logger.info("cluster bus reconnected; refreshing rooms", ["rooms": "\(directory.rooms.count)"])
        for runtime in directory.rooms.values where runtime.room != nil {
            refresh(runtime)
        }
    }

    /// Reads the room again from the shared store, `delay` seconds from now.
    private func refresh(_ runtime: RoomRuntime, after delay: Double = 0) {
        let name = runtime.name
        store.load(name, after: delay) { [self] result in roomRefreshed(name, result: result) }
    }

    /// A room read again from the shared store. A read that failed (the
    /// store still away) is tried again later; a room with intents waiting
    /// for the store is read again once they are settled, since the store
    /// may already hold their events and they would come back as another
    /// node's.
    private func roomRefreshed(_ name: String, result: Result<StoredRoom?, StoreError>) {
        guard let runtime = directory[name], runtime.room != nil else { return }
        switch result {
        case .failure:
            refreshLater(runtime)
        case .success(let stored):
            coordinator.storeAnswered()
            guard runtime.commits.pendingIntents == 0 else { return refreshLater(runtime) }
            coordinator.follow(runtime, to: stored)
        }
    }

    /// Reads the room again later: once the batch in flight is answered when
    /// the room has intents waiting for the store (reading it now could show
    /// their own events as another node's), else in a while.
    private func refreshLater(_ runtime: RoomRuntime) {
        guard coordinator.hasBatchInFlight, runtime.commits.pendingIntents > 0 else {
            return refresh(runtime, after: Self.refreshRetrySeconds)
        }
        guard refreshesAfterCommit.insert(runtime.name).inserted else { return }
        coordinator.whenBatchFinishes { [self] in retryAfterCommit(runtime.name) }
    }

    private func retryAfterCommit(_ name: String) {
        guard let runtime = directory[name] else {
            refreshesAfterCommit.remove(name)
            return
        }
        if runtime.commits.pendingIntents == 0 || !coordinator.hasBatchInFlight {
            refreshesAfterCommit.remove(name)
            refresh(runtime)
        } else {
            coordinator.whenBatchFinishes { [self] in retryAfterCommit(name) }
        }
    }
}
