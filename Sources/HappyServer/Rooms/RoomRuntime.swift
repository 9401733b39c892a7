import HappyCore

/// A room as the server runs it: the core `Room` (once loaded from the
/// store), its members here and on other nodes, and what waits for it to
/// load.
///
/// The parts other components own are values that anyone reads and only
/// their owner writes: a part changes through `modify`, which takes the
/// part's `Key`, and only the owner's file can make that key. The room's own
/// fields change through its methods, which take `RoomRuntime.Key`, made
/// only by `RoomDirectory`.
final class RoomRuntime {
    let name: String
    private(set) var loadError: StoreError?
    /// The clients in the room's presence (here), and those only watching it.
    private(set) var members: [Connection] = []
    private(set) var observers: [Connection] = []
    /// Callbacks waiting for the room to load.
    private var readyWaiters: [(RoomRuntime) -> Void] = []
    /// Connections admitted but not yet welcomed (the room is loading).
    private(set) var reservedSeats = 0
    /// When its last client left or it was read over HTTP.
    private var touchedAt: Double
    /// A client was admitted to it since it was loaded.
    private var hadSeats = false
    /// Clients of this room on other nodes (cluster mode), by id.
    private(set) var remoteMembers: [String: Participant] = [:]
    /// A cluster node waits for the room's remote presence before welcoming.
    private(set) var awaitingRemotePresence = false
    private var loadedButWaiting: Room<OutboundFrame>?

    /// The core room once loaded (committed and working state, history, the
    /// dragon's label): handed over by the load, then owned by the commit
    /// path (`CommitCoordinator`, which lends it to `RoomCatchUp`).
    private(set) var room: Room<OutboundFrame>?
    /// The room's broadcasts (events, presence), written by every member
    /// from its cursor: owned by `Broadcaster`.
    private(set) var log: BroadcastLog<OutboundFrame>
    /// Intents and the creation waiting for the store: owned by `CommitCoordinator`.
    private(set) var commits = RoomCommitState()
    /// Frame streams watching this room; they keep it in memory: owned by `FrameStreams`.
    private(set) var streams = RoomStreams()
    /// The members' live pointers (never events, never recorded): owned by `PointerService`.
    private(set) var pointers = RoomPointers()
    /// Delivery mode, load, and what waits for the next tick: owned by `CrowdDelivery`.
    private(set) var crowd: RoomCrowd
    /// The dragon votes of the current round: owned by `VoteCounter`.
    private(set) var votes = RoomVotes()
    /// Acks waiting for the room's next tick: owned by `Replies`.
    private(set) var heldReplies = HeldReplies()

    /// `awaitsRemotePresence`: a cluster node welcomes nobody before it knows who is on the other nodes.
    /// `delivery`: how its events reach its clients to begin with, `tickMs` its tick then.
    /// `room`: a room already in hand starts loaded.
    init(name: String, now: Double, logBytes: Int, awaitsRemotePresence: Bool = false, delivery: DeliveryMode = .each,
         tickMs: Int = 50, room: Room<OutboundFrame>? = nil) {
        self.name = name
        touchedAt = now
        log = BroadcastLog(byteLimit: logBytes)
        awaitingRemotePresence = awaitsRemotePresence
        crowd = RoomCrowd(mode: delivery, tickMs: tickMs)
        self.room = room
    }

    // MARK: parts

    /// Changes the loaded room in place; nil (and nothing done) while it is not loaded.
    @discardableResult
    func modify<R>(_ key: Room<OutboundFrame>.Key, _ body: (inout Room<OutboundFrame>) throws -> R) rethrows -> R? {
        guard room != nil else { return nil }
        return try body(&room!)
    }

    func modify<R>(_ key: BroadcastLog<OutboundFrame>.Key, _ body: (inout BroadcastLog<OutboundFrame>) throws -> R)
        rethrows -> R {
        try body(&log)
    }

    func modify<R>(_ key: RoomCommitState.Key, _ body: (inout RoomCommitState) throws -> R) rethrows -> R {
        try body(&commits)
    }

    func modify<R>(_ key: RoomStreams.Key, _ body: (inout RoomStreams) throws -> R) rethrows -> R {
        try body(&streams)
    }

    func modify<R>(_ key: RoomPointers.Key, _ body: (inout RoomPointers) throws -> R) rethrows -> R {
        try body(&pointers)
    }

    func modify<R>(_ key: RoomCrowd.Key, _ body: (inout RoomCrowd) throws -> R) rethrows -> R {
        try body(&crowd)
    }

    func modify<R>(_ key: RoomVotes.Key, _ body: (inout RoomVotes) throws -> R) rethrows -> R {
        try body(&votes)
    }

    func modify<R>(_ key: HeldReplies.Key, _ body: (inout HeldReplies) throws -> R) rethrows -> R {
        try body(&heldReplies)
    }

    // MARK: read through

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

    /// Joined by a client or sent an intent since it was loaded. Rooms only
    /// ever read over HTTP, which anyone can name, leave memory sooner.
    var wasUsed: Bool { hadSeats || commits.hadIntents }

    /// Idle since its last client left, it was read over HTTP, or a stream closed.
    var idleSince: Double { max(touchedAt, streams.lastClosedAt) }

    /// Idle from `now` on (its last client went, or it was read over HTTP).
    func touch(now: Double, _ key: Key) {
        touchedAt = now
    }

    // MARK: loading

    /// Whether the store has never held the room (it exists in memory only).
    var isUnrecorded: Bool { commits.isUnrecorded }

    /// Runs `body` once the room is loaded (now, if it already is).
    func whenReady(_ body: @escaping (RoomRuntime) -> Void) {
        if isLoading { readyWaiters.append(body) } else { body(self) }
    }

    /// Finishes loading once the room is read and, in a cluster, its remote presence known.
    func loaded(_ room: Room<OutboundFrame>, _ key: Key) {
        if awaitingRemotePresence { loadedButWaiting = room } else { finishLoading(room, error: nil) }
    }

    func failedToLoad(_ error: StoreError, _ key: Key) {
        finishLoading(nil, error: error)
    }

    private func finishLoading(_ room: Room<OutboundFrame>?, error: StoreError?) {
        self.room = room
        loadError = error
        let waiters = readyWaiters
        readyWaiters.removeAll()
        for waiter in waiters { waiter(self) }
    }

    /// Lets a failed load be tried again by the next visitor.
    func resetFailedLoad(_ key: Key) {
        loadError = nil
    }

    // MARK: seats

    private let seatKey = RoomSeat.Key()

    /// A connection admitted here waits for the room to load.
    func reserveSeat(for connection: Connection, _ key: Key) {
        reservedSeats += 1
        hadSeats = true
        connection.modify(seatKey) { $0.reserve(in: self) }
    }

    /// The wait for the load is over (the connection joins, or was closed meanwhile).
    func endReservation(_ key: Key) {
        reservedSeats -= 1
    }

    func add(_ connection: Connection, _ key: Key) {
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
    func remove(_ connection: Connection, _ key: Key) {
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
    func remoteMembersListed(_ list: [Participant], _ key: Key) {
        remoteMembers = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        presenceChanged(at: nil)
        awaitingRemotePresence = false
        if let room = loadedButWaiting {
            loadedButWaiting = nil
            finishLoading(room, error: nil)
        }
    }

    /// A client joined on another node; false when it was known.
    func remoteJoined(_ participant: Participant, _ key: Key) -> Bool {
        guard remoteMembers[participant.id] == nil else { return false }
        remoteMembers[participant.id] = participant
        presenceChanged(at: nil)
        return true
    }

    /// A client left another node; false when it was not known.
    func remoteLeft(_ participant: Participant, _ key: Key) -> Bool {
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
