import HappyCore

/// A room as the server runs it: the core `Room` (once loaded from the
/// store), its members here and on other nodes, and what waits for it to
/// load. Its own fields change only through its methods; the parts other
/// components own are values written only by their owner (named on each).
final class RoomRuntime {
    let name: String
    /// The core room once loaded: committed and working state, history,
    /// the dragon's label. Handed over by the load, then owned by the commit
    /// path (`CommitCoordinator`, which lends it to `RoomCatchUp`).
    private var storedRoom: Room<OutboundFrame>?
    var room: Room<OutboundFrame>? { storedRoom }
    private(set) var loadError: StoreError?
    /// The clients in the room's presence (here), and those only watching it.
    private(set) var members: [Connection] = []
    private(set) var observers: [Connection] = []
    /// Callbacks waiting for the room to load.
    private var readyWaiters: [(RoomRuntime) -> Void] = []
    /// Connections admitted but not yet welcomed (the room is loading).
    private(set) var reservedSeats = 0
    private(set) var idleSince: Double
    /// Joined by a client or sent an intent since it was loaded. Rooms only
    /// ever read over HTTP, which anyone can name, leave memory sooner.
    private(set) var wasUsed = false
    /// Clients of this room on other nodes (cluster mode), by id.
    private(set) var remoteMembers: [String: Participant] = [:]
    /// A cluster node waits for the room's remote presence before welcoming.
    private(set) var awaitingRemotePresence = false
    private var loadedButWaiting: Room<OutboundFrame>?

    /// The room's broadcasts (events, presence), written by every member
    /// from its cursor. Owned by `Broadcaster`.
    var log: BroadcastLog<OutboundFrame>
    /// Intents and the creation waiting for the store. Owned by `CommitCoordinator`.
    var commits = RoomCommitState()
    /// Frame streams watching this room; they keep it in memory. Owned by `FrameStreams`.
    var streams = RoomStreams()
    /// The members' live pointers (never events, never recorded). Owned by `PointerService`.
    var pointers = RoomPointers()
    /// Delivery mode, load, and what waits for the next tick. Owned by `CrowdDelivery`.
    var crowd: RoomCrowd
    /// The dragon votes of the current round. Owned by `VoteCounter`.
    var votes = RoomVotes()
    /// Acks waiting for the room's next tick. Owned by `Replies`.
    private var storedHeldReplies = HeldReplies()
    var heldReplies: HeldReplies { storedHeldReplies }

    func modify<R>(_ key: HeldReplies.Key, _ body: (inout HeldReplies) throws -> R) rethrows -> R {
        try body(&storedHeldReplies)
    }

    /// Changes the loaded room in place; nil (and nothing done) while it is not loaded.
    @discardableResult
    func modify<R>(_ key: Room<OutboundFrame>.Key, _ body: (inout Room<OutboundFrame>) throws -> R) rethrows -> R? {
        guard storedRoom != nil else { return nil }
        return try body(&storedRoom!)
    }

    /// `awaitsRemotePresence`: a cluster node welcomes nobody before it knows who is on the other nodes.
    /// `delivery`: how its events reach its clients to begin with, `tickMs` its tick then.
    init(name: String, now: Double, logBytes: Int, awaitsRemotePresence: Bool = false, delivery: DeliveryMode = .each,
         tickMs: Int = 50) {
        self.name = name
        idleSince = now
        log = BroadcastLog(byteLimit: logBytes)
        awaitingRemotePresence = awaitsRemotePresence
        crowd = RoomCrowd(mode: delivery, tickMs: tickMs)
    }

    var isLoading: Bool { room == nil && loadError == nil }
    var isOccupied: Bool { !members.isEmpty || !observers.isEmpty || reservedSeats > 0 }
    /// Everyone here who gets the room's broadcasts.
    var listenerCount: Int { members.count + observers.count }
    /// Everyone in the room, on every node.
    var presenceCount: Int { members.count + remoteMembers.count }
    var participants: [Participant] { members.map(\.participant) }

    /// Nothing holds the room in memory: no clients, no load, no unrecorded work.
    var isEvictable: Bool {
        !isOccupied && !isLoading && commits.pendingIntents == 0 && !commits.creationPending && streams.isEmpty
    }

    /// Used (for how long it stays in memory once idle): joined or sent an intent.
    func markUsed() {
        wasUsed = true
    }

    /// Idle from `now` on (its last client or stream went, or it was read over HTTP).
    func touch(now: Double) {
        idleSince = now
    }

    // MARK: loading

    /// The creation of a room the store has never held, kept back while the
    /// room is only read: it is recorded when someone joins it or changes it,
    /// so that reading made-up rooms stores nothing.
    private(set) var unrecordedCreation: RoomCommit?

    /// Whether the store has never held the room (it exists in memory only).
    var isUnrecorded: Bool { unrecordedCreation != nil }

    /// The creation to record now that the room is used; nil when it is recorded already.
    func takeUnrecordedCreation() -> RoomCommit? {
        defer { unrecordedCreation = nil }
        return unrecordedCreation
    }

    /// The room is what the store holds after all (another node recorded it).
    func dropUnrecordedCreation() {
        unrecordedCreation = nil
    }

    /// Runs `body` once the room is loaded (now, if it already is).
    func whenReady(_ body: @escaping (RoomRuntime) -> Void) {
        if isLoading { readyWaiters.append(body) } else { body(self) }
    }

    /// Finishes loading once the room is read and, in a cluster, its remote presence known.
    /// `creation`: the store holds no such room; it is recorded when first used.
    func loaded(_ room: Room<OutboundFrame>, unrecorded creation: RoomCommit? = nil) {
        unrecordedCreation = creation
        if awaitingRemotePresence { loadedButWaiting = room } else { finishLoading(room, error: nil) }
    }

    func failedToLoad(_ error: StoreError) {
        finishLoading(nil, error: error)
    }

    private func finishLoading(_ room: Room<OutboundFrame>?, error: StoreError?) {
        storedRoom = room
        loadError = error
        let waiters = readyWaiters
        readyWaiters.removeAll()
        for waiter in waiters { waiter(self) }
    }

    /// Lets a failed load be tried again by the next visitor.
    func resetFailedLoad() {
        loadError = nil
    }

    // MARK: seats

    private let seatKey = RoomSeat.Key()

    /// A connection admitted here waits for the room to load.
    func reserveSeat(for connection: Connection) {
        reservedSeats += 1
        wasUsed = true
        connection.modify(seatKey) { $0.reserve(in: self) }
    }

    /// The wait for the load is over (the connection joins, or was closed meanwhile).
    func endReservation() {
        reservedSeats -= 1
    }

    func add(_ connection: Connection) {
        if connection.isObserver {
            connection.modify(seatKey) { $0.seated(at: observers.count) }
            observers.append(connection)
            return
        }
        let index = members.count
        connection.modify(seatKey) { $0.seated(at: index) }
        members.append(connection)
        presenceAppended(at: index)
    }

    /// Takes the connection out of the room (its entry, if welcomed, and its seat).
    func remove(_ connection: Connection) {
        let index = connection.seat.memberIndex
        connection.modify(seatKey) { $0.vacate() }
        if connection.isObserver {
            guard index >= 0, index < observers.count, observers[index] === connection else { return }
            let last = observers.removeLast()
            if index < observers.count {
                observers[index] = last
                last.modify(seatKey) { $0.seated(at: index) }
            }
            return
        }
        guard index >= 0, index < members.count, members[index] === connection else { return }
        let last = members.removeLast()
        if index < members.count {
            members[index] = last
            last.modify(seatKey) { $0.seated(at: index) }
        }
        presenceChanged(at: index)
    }

    /// Runs `body` for every client that gets the room's broadcasts.
    @inline(__always)
    func forEachListener(_ body: (Connection) -> Void) {
        for member in members { body(member) }
        for observer in observers { body(observer) }
    }

    // MARK: remote presence (cluster mode)

    /// Everyone on the other nodes, as the bus listed them when the room was watched.
    func remoteMembersListed(_ list: [Participant]) {
        remoteMembers = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        presenceChanged(at: nil)
        awaitingRemotePresence = false
        if let room = loadedButWaiting {
            loadedButWaiting = nil
            finishLoading(room, error: nil)
        }
    }

    /// A client joined on another node; false when it was known.
    func remoteJoined(_ participant: Participant) -> Bool {
        guard remoteMembers[participant.id] == nil else { return false }
        remoteMembers[participant.id] = participant
        presenceChanged(at: nil)
        return true
    }

    /// A client left another node; false when it was not known.
    func remoteLeft(_ participant: Participant) -> Bool {
        guard remoteMembers.removeValue(forKey: participant.id) != nil else { return false }
        presenceChanged(at: nil)
        return true
    }

    // MARK: presence as welcomes carry it

    /// The presence list of welcomes, encoded once until the listed clients
    /// change; a client joining is appended to it (one entry, not the list).
    private var encodedPresence: (limit: Int, bytes: [UInt8])?

    func encodedPresenceList(limit: Int) -> [UInt8] {
        if let cached = encodedPresence, cached.limit == limit { return cached.bytes }
        let bytes = ServerMessageEncoder.presenceArray(presenceList(limit: limit))
        encodedPresence = (limit, bytes)
        return bytes
    }

    /// The committed scene as welcomes carry it, encoded once per change.
    private var encodedState: (scene: Scene, bytes: [UInt8])?

    func encodedStateObject(_ scene: Scene) -> [UInt8] {
        if let cached = encodedState, cached.scene == scene { return cached.bytes }
        let bytes = ServerMessageEncoder.sceneObject(scene)
        encodedState = (scene, bytes)
        return bytes
    }

    /// A local client joined at `index`: the end of the listed part, when
    /// no remote clients follow it there, takes one more entry in place.
    private func presenceAppended(at index: Int) {
        guard let limit = encodedPresence?.limit, index < limit, remoteMembers.isEmpty,
              var bytes = encodedPresence?.bytes else {
            return presenceChanged(at: index)
        }
        // Let go of the cached copy first, so that the bytes grow in place.
        encodedPresence = nil
        ServerMessageEncoder.appendPresenceEntry(members[index].participant, to: &bytes)
        encodedPresence = (limit, bytes)
    }

    /// Forgets the encoded list when a change touches the listed part.
    private func presenceChanged(at index: Int?) {
        guard let cached = encodedPresence else { return }
        if let index, index >= cached.limit, members.count >= cached.limit { return }
        encodedPresence = nil
    }

    /// The presence list a client gets: local clients first, at most `limit`.
    func presenceList(limit: Int) -> [Participant] {
        var list = members.prefix(limit).map(\.participant)
        if list.count < limit {
            list += remoteMembers.values.sorted { $0.id < $1.id }.prefix(limit - list.count)
        }
        return list
    }
}

extension RoomSeat {
    /// Made only here: `RoomRuntime` alone changes a connection's `seat`.
    struct Key { fileprivate init() {} }
}
