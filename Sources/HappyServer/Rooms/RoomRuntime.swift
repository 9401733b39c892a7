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
    /// Joined by a client or sent an intent since it was loaded. Rooms only
    /// ever read over HTTP, which anyone can name, leave memory sooner.
    var wasUsed = false
    /// Created here and not yet recorded by the store: dropping it now would
    /// let the next visitor create it again under another epoch.
    var creationPending = false

    init(name: String, now: Double) {
        self.name = name
        idleSince = now
    }

    var isLoading: Bool { room == nil && loadError == nil }
    var isOccupied: Bool { !members.isEmpty || reservedSeats > 0 }
    /// Nothing holds the room in memory: no clients, no load, no unrecorded work.
    var isEvictable: Bool { !isOccupied && !isLoading && pendingIntents == 0 && !creationPending }
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
    }
}
