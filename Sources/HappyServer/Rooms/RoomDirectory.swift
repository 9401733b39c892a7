import HappyCore

/// The rooms in memory: created on demand, loaded from the store, counted as
/// occupied while clients hold them, dropped when idle, trimmed when too
/// many sit empty. Seats connections in their rooms.
final class RoomDirectory {
    /// Seconds an empty room stays in memory before it is dropped (its state stays in the store).
    static let roomIdleSeconds = 60.0
    /// The same for a room that was only ever read over HTTP.
    static let unusedRoomIdleSeconds = 5.0

    private(set) var rooms: [String: RoomRuntime] = [:]
    /// Rooms with clients (connected or being admitted).
    private(set) var occupiedCount = 0

    private var config: HappyConfig

    /// Applies a configuration read again (SIGHUP) to what comes next.
    func reconfigure(_ config: HappyConfig) {
        self.config = config
        newRooms = NewRoomLimit(perMinute: config.limits.roomsPerAddress)
    }
    private let labels: DragonStatus
    private let store: any StoreAccess
    private let coordinator: CommitCoordinator
    private let webhooks: WebhookFeed
    private let clusterBus: (any ClusterBus)?
    private let clock: ServiceClock
    private let metrics: Metrics
    private let logger: Logger
    private var newRooms: NewRoomLimit
    private let runtimeKey = RoomRuntime.Key()

    /// `labels`: the dragon label's texts, from the art.
    init(config: HappyConfig, labels: DragonStatus, store: any StoreAccess, coordinator: CommitCoordinator,
         webhooks: WebhookFeed, clusterBus: (any ClusterBus)?, clock: ServiceClock, metrics: Metrics, logger: Logger) {
        self.webhooks = webhooks
        self.config = config
        self.labels = labels
        self.store = store
        self.coordinator = coordinator
        self.clusterBus = clusterBus
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        newRooms = NewRoomLimit(perMinute: config.limits.roomsPerAddress)
    }

    /// Rooms without clients kept in memory: `limits.maxRooms`, so that at
    /// most twice that many rooms are ever in memory (plus loads in flight).
    private var idleRoomCap: Int { config.limits.maxRooms }

    subscript(name: String) -> RoomRuntime? { rooms[name] }

    /// The room named `name`, created and loading if it was not in memory.
    func runtime(for name: String) -> RoomRuntime {
        if let runtime = rooms[name] {
            if runtime.loadError != nil {
                runtime.resetFailedLoad(runtimeKey)
                load(name)
            }
            return runtime
        }
        if rooms.count - occupiedCount >= idleRoomCap + idleRoomCap / 10 + 1 { trimIdleRooms() }
        // In a cluster, hear of the room's changes and presence from the
        // other nodes for as long as it is in memory; welcome nobody before that.
        let runtime = RoomRuntime(name: name, now: clock.fresh(), logBytes: config.limits.maxQueuedBytes,
                                  awaitsRemotePresence: clusterBus != nil,
                                  delivery: config.crowd.mode == .tick ? .tick : .each, tickMs: config.crowd.tickMs)
        rooms[name] = runtime
        clusterBus?.watch(room: name)
        load(name)
        return runtime
    }

    /// The room, marked as just used over HTTP (it stays a little while).
    func touchedRuntime(for name: String) -> RoomRuntime {
        let runtime = runtime(for: name)
        runtime.touch(now: clock.fresh(), runtimeKey)
        return runtime
    }

    private func load(_ name: String) {
        store.load(name) { [self] result in roomLoaded(name, result: result) }
    }

    /// The store's answer for a room being loaded.
    private func roomLoaded(_ name: String, result: Result<StoredRoom?, StoreError>) {
        guard let runtime = rooms[name], runtime.isLoading else { return }
        let capacity = config.limits.historySize
        switch result {
        case .success(let stored?):
            var room = Room<OutboundFrame>(
                name: name, epoch: stored.epoch, snapshot: RoomSnapshot(seq: stored.seq, scene: stored.scene),
                historyCapacity: capacity,
                history: stored.history.map { (seq: $0.seq, element: OutboundFrame(payload: $0.json, seq: $0.seq)) },
                labels: labels, dragonStatus: labels.recover(from: stored.history.lazy.map(\.json)))
            if let time = stored.history.last?.time { room.noteLastEvent(at: time) }
            runtime.loaded(room, runtimeKey)
        case .success(nil):
            let defaults = config.sceneRules.defaults
            let room = Room<OutboundFrame>(name: name, epoch: Identifiers.newEpoch(),
                                           snapshot: RoomSnapshot(seq: 0, scene: defaults),
                                           historyCapacity: capacity, labels: labels)
            coordinator.keepUnrecorded(RoomCommit(room: name, epoch: room.epoch, baseSeq: 0, seq: 0, scene: defaults,
                                                  events: []), of: runtime)
            runtime.loaded(room, runtimeKey)
        case .failure(let error):
            logger.error("room could not be loaded", ["room": name, "error": error.message])
            runtime.failedToLoad(error, runtimeKey)
        }
    }

    // MARK: new rooms

    /// Records a room the store has never held now that someone joins it,
    /// unless `address` has already made `limits.roomsPerAddress` new rooms
    /// in the last minute (then false, and the room stays unrecorded).
    func recordIfNew(_ runtime: RoomRuntime, creator address: String) -> Bool {
        guard runtime.isUnrecorded else { return true }
        guard newRooms.allows(address, now: clock.now()) else { return false }
        if let creation = coordinator.recordUnrecordedCreation(of: runtime) {
            logger.debug("room created", ["room": runtime.name, "epoch": creation.epoch, "by": address])
        }
        return true
    }

    /// Whether `address` may make `runtime` a new room by changing it (counted as one if so).
    func mayCreate(_ runtime: RoomRuntime, by address: String) -> Bool {
        !runtime.isUnrecorded || newRooms.allows(address, now: clock.now())
    }

    /// Seconds until `address` may make a new room again.
    func secondsUntilNewRoom(by address: String) -> Int {
        newRooms.secondsUntilNext(address, now: clock.now())
    }

    // MARK: seats

    /// An admitted connection waits for its room to load.
    func reserveSeat(for connection: Connection, in runtime: RoomRuntime) {
        changeOccupancy(of: runtime) { runtime.reserveSeat(for: connection, runtimeKey) }
    }

    /// The room loaded (or failed to) while the connection waited.
    func endReservation(in runtime: RoomRuntime) {
        changeOccupancy(of: runtime) { runtime.endReservation(runtimeKey) }
    }

    /// The connection's reservation becomes its seat, in one step: the room
    /// never looks empty in between.
    func takeReservedSeat(_ connection: Connection, in runtime: RoomRuntime) {
        changeOccupancy(of: runtime) {
            runtime.endReservation(runtimeKey)
            runtime.add(connection, runtimeKey)
        }
    }

    /// The connection closed: out of its room, welcomed or not.
    func unseat(_ connection: Connection, from runtime: RoomRuntime) {
        changeOccupancy(of: runtime) { runtime.remove(connection, runtimeKey) }
    }

    /// Applies `change` and keeps `occupiedCount` (rooms with clients) right.
    private func changeOccupancy(of runtime: RoomRuntime, _ change: () -> Void) {
        let before = runtime.isOccupied
        change()
        let after = runtime.isOccupied
        if before != after {
            occupiedCount += after ? 1 : -1
            if !after {
                runtime.touch(now: clock.fresh(), runtimeKey)
                webhooks.emptied(runtime)
            }
        }
    }

    // MARK: other nodes' clients (cluster mode)

    /// Everyone on the other nodes, as the bus listed them when the room was watched.
    func remoteMembersListed(_ list: [Participant], in name: String) {
        rooms[name]?.remoteMembersListed(list, runtimeKey)
    }

    /// A client joined the room on another node; false when it was known.
    func remoteJoined(_ participant: Participant, in runtime: RoomRuntime) -> Bool {
        runtime.remoteJoined(participant, runtimeKey)
    }

    /// A client left the room on another node; false when it was not known.
    func remoteLeft(_ participant: Participant, in runtime: RoomRuntime) -> Bool {
        runtime.remoteLeft(participant, runtimeKey)
    }

    // MARK: leaving memory

    /// Drops a room from memory now (an operator deleted it): the next
    /// visitor starts it again from what the store holds.
    func forget(_ name: String) {
        guard rooms.removeValue(forKey: name) != nil else { return }
        clusterBus?.unwatch(room: name)
    }

    /// Drops rooms that have been empty and quiet for a while.
    func evictIdleRooms(now: Double) {
        newRooms.sweep(now: now)
        for (name, runtime) in rooms where runtime.isEvictable
            && now - runtime.idleSince > (runtime.wasUsed ? Self.roomIdleSeconds : Self.unusedRoomIdleSeconds) {
            rooms.removeValue(forKey: name)
            clusterBus?.unwatch(room: name)
        }
    }

    /// Rooms without clients wait to leave memory (the sweep then runs every second).
    var holdsIdleRooms: Bool { rooms.count > occupiedCount }

    /// Past the cap of rooms without clients (a flood of `GET /api/state`
    /// for made-up rooms, say), drops the longest idle ones down to the cap;
    /// the slack above the cap keeps this O(1) per room created on average.
    private func trimIdleRooms() {
        let excess = rooms.count - occupiedCount - idleRoomCap
        guard excess > 0 else { return }
        let idle = rooms.values.filter(\.isEvictable).sorted { $0.idleSince < $1.idleSince }
        for runtime in idle.prefix(excess) {
            rooms.removeValue(forKey: runtime.name)
            clusterBus?.unwatch(room: runtime.name)
        }
        metrics.roomsTrimmed += min(excess, idle.count)
    }
}

extension RoomRuntime {
    /// Made only here: `RoomDirectory` alone loads a room, seats its clients,
    /// keeps its remote presence and idle time.
    struct Key { fileprivate init() {} }
}
