import HappyCore

/// A room as the server runs it: the core `Room` (once loaded from the
/// store), its connected members, and what waits for it to load.
final class RoomRuntime {
    let name: String
    private(set) var room: Room<OutboundFrame>?
    private(set) var loadError: StoreError?
    private(set) var members: [Connection] = []
    /// Callbacks waiting for the room to load.
    private var readyWaiters: [(RoomRuntime) -> Void] = []
    /// Connections admitted but not yet welcomed (the room is loading).
    var reservedSeats = 0
    /// Intents applied but not yet recorded or answered.
    var pendingIntents = 0
    var idleSince: Double
    /// The dragon panel's status label (the last dragon delegate event), kept from load on.
    var dragonStatus = ""
    /// Frame streams watching this room; they keep it in memory.
    var frameStreams: [FrameStream] = []
    /// Joined by a client or sent an intent since it was loaded. Rooms only
    /// ever read over HTTP, which anyone can name, leave memory sooner.
    var wasUsed = false
    /// Created here and not yet recorded by the store: dropping it now would
    /// let the next visitor create it again under another epoch.
    var creationPending = false

    /// The room's broadcasts (events, presence), written by every member from its cursor.
    var log: BroadcastLog<OutboundFrame>
    /// The members' live pointers (never events, never recorded).
    var pointers = RoomPointers()
    /// When the last `pointers` message went out (monotonic seconds).
    var lastPointerBatchAt = -Double.infinity

    init(name: String, now: Double, logBytes: Int) {
        self.name = name
        idleSince = now
        log = BroadcastLog(byteLimit: logBytes)
    }

    var isLoading: Bool { room == nil && loadError == nil }
    var isOccupied: Bool { !members.isEmpty || reservedSeats > 0 }
    /// Clients of this room on other nodes (cluster mode), by id.
    var remoteMembers: [String: Participant] = [:] {
        didSet { presenceChanged(at: nil) }
    }
    /// A cluster node waits for the room's remote presence before welcoming.
    var awaitingRemotePresence = false
    private var loadedButWaiting: Room<OutboundFrame>?

    /// Everyone in the room, on every node.
    var presenceCount: Int { members.count + remoteMembers.count }

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
    func presenceChanged(at index: Int?) {
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

    /// Finishes loading once the room is read and, in a cluster, its remote presence known.
    func loaded(_ room: Room<OutboundFrame>) {
        if awaitingRemotePresence { loadedButWaiting = room } else { finishLoading(room, error: nil) }
    }

    func remotePresenceArrived() {
        awaitingRemotePresence = false
        if let room = loadedButWaiting {
            loadedButWaiting = nil
            finishLoading(room, error: nil)
        }
    }

    /// Nothing holds the room in memory: no clients, no load, no unrecorded work.
    var isEvictable: Bool {
        !isOccupied && !isLoading && pendingIntents == 0 && !creationPending && frameStreams.isEmpty
    }
    var participants: [Participant] { members.map(\.participant) }

    /// Runs `body` once the room is loaded (now, if it already is).
    func whenReady(_ body: @escaping (RoomRuntime) -> Void) {
        if isLoading { readyWaiters.append(body) } else { body(self) }
    }

    func finishLoading(_ room: Room<OutboundFrame>?, error: StoreError?) {
        self.room = room
        loadError = error
        let waiters = readyWaiters
        readyWaiters.removeAll()
        for waiter in waiters { waiter(self) }
    }

    /// Lets a failed load be tried again by the next visitor.
    func resetFailedLoad() {
        loadError = nil
    }

    func add(_ connection: Connection) {
        connection.memberIndex = members.count
        connection.room = self
        members.append(connection)
        presenceAppended(at: connection.memberIndex)
    }

    func remove(_ connection: Connection) {
        let index = connection.memberIndex
        guard index >= 0, index < members.count, members[index] === connection else { return }
        let last = members.removeLast()
        if index < members.count {
            members[index] = last
            last.memberIndex = index
        }
        connection.memberIndex = -1
        presenceChanged(at: index)
    }
}
