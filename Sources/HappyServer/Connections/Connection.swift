import HappyCore

/// One WebSocket client. Owned by the service thread; the transport holds a
/// retained reference until the connection closes.
///
/// Its changing state comes in parts, each a value that anyone reads and
/// only its owner writes: a part changes through `modify`, which takes the
/// part's `Key`, and only the owner's file can make that key.
final class Connection: Attachment {
    enum Kind {
        /// The Happy protocol on `/ws`.
        case happy
        /// The conformance echo endpoint on `/echo`.
        case echo
    }

    /// About the size of the object, its parts inline (for cache hints).
    static let approximateBytes = 640

    let transport: any ConnectionTransport
    let kind: Kind
    let serial: UInt64
    let peerAddress: String
    /// lws's own framing must be used (an extension such as permessage-deflate
    /// transforms every frame); otherwise pre-framed frames are coalesced.
    let usesExtensions: Bool
    let openedAt: Double
    /// When it connected, for the operator API (milliseconds since 1970).
    let connectedAt: Int64

    /// Who the client is and whether it is admitted: owned by `ConnectionRegistry`.
    private(set) var membership: Membership
    /// Whether the peer is alive: owned by `ConnectionRegistry`.
    private(set) var keepalive: Keepalive
    /// Its place in a room: owned by the room (`RoomRuntime`).
    private(set) var seat = RoomSeat()
    /// Reassembly, messages before the welcome, rate limits: owned by `MessageIntake`.
    private(set) var intake: IntakeState
    /// The write path (queue, cursor, close): owned by `Broadcaster`.
    private(set) var output: WriteState
    /// Intents waiting for the store: owned by `CommitCoordinator`.
    private(set) var commits = IntentTally()
    /// Pointer rate and skipped batches: owned by `PointerService`.
    private(set) var pointerPace: PointerPace

    /// `idSuffix` keeps ids unique across the nodes of a cluster.
    init(transport: any ConnectionTransport, kind: Kind, serial: UInt64, idSuffix: String = "", peerAddress: String,
         usesExtensions: Bool, limits: HappyConfig.LimitsSection, now: Double, wallMilliseconds: Int64 = 0) {
        self.transport = transport
        self.kind = kind
        self.serial = serial
        self.peerAddress = peerAddress
        self.usesExtensions = usesExtensions
        openedAt = now
        connectedAt = wallMilliseconds
        membership = Membership(participant: Participant(id: "c\(serial)\(idSuffix)", name: "guest-c\(serial)\(idSuffix)"))
        keepalive = Keepalive(now: now)
        intake = IntakeState(kind: kind, limits: limits, now: now, bytesRead: transport.bytesRead,
                              compressed: usesExtensions)
        // The echo endpoint must hold a whole echoed message (Autobahn sends up to 16 MiB).
        output = WriteState(outboxLimit: kind == .echo ? 64 * 1024 * 1024 : limits.maxQueuedBytes, now: now)
        pointerPace = PointerPace(limits: limits, now: now)
        super.init(isConnection: true)
    }

    // MARK: parts

    // Each part changes only through its owner's key.
    func modify<R>(_ key: Membership.Key, _ body: (inout Membership) throws -> R) rethrows -> R {
        try body(&membership)
    }

    func modify<R>(_ key: Keepalive.Key, _ body: (inout Keepalive) throws -> R) rethrows -> R {
        try body(&keepalive)
    }

    func modify<R>(_ key: RoomSeat.Key, _ body: (inout RoomSeat) throws -> R) rethrows -> R {
        try body(&seat)
    }

    func modify<R>(_ key: IntakeState.Key, _ body: (inout IntakeState) throws -> R) rethrows -> R {
        try body(&intake)
    }

    func modify<R>(_ key: WriteState.Key, _ body: (inout WriteState) throws -> R) rethrows -> R {
        try body(&output)
    }

    func modify<R>(_ key: IntentTally.Key, _ body: (inout IntentTally) throws -> R) rethrows -> R {
        try body(&commits)
    }

    func modify<R>(_ key: PointerPace.Key, _ body: (inout PointerPace) throws -> R) rethrows -> R {
        try body(&pointerPace)
    }

    // MARK: read through

    var participant: Participant { membership.participant }
    var role: Role { membership.role }
    var isObserver: Bool { membership.observing }
    /// The room joined or joining; nil once the connection has closed.
    var room: RoomRuntime? { seat.room }
    /// In its room's member list (welcomed, not yet gone).
    var joined: Bool { seat.isMember }
    var isClosed: Bool { membership.isClosed }

    /// Drops the connection without a close handshake (dead or stuck peer).
    func kill() {
        guard !isClosed else { return }
        transport.kill()
    }
}

/// Who a connection is and how far its admission went. Owned by
/// `ConnectionRegistry`, the one holder of its `Key`.
struct Membership {
    private(set) var participant: Participant
    private(set) var role: Role = .player
    /// Watches the room without being in its presence (`observe=1`, section 13).
    private(set) var observing = false
    /// Counted among the admitted clients (until it closes).
    private(set) var admitted = false
    private(set) var roomName = ""
    /// The `since` and `epoch` of the upgrade request, for the welcome.
    private(set) var resume: (since: UInt64?, epoch: String?) = (nil, nil)
    /// Index in the registry's connection list, for O(1) removal.
    private(set) var listIndex = -1
    private(set) var isClosed = false

    init(participant: Participant) {
        self.participant = participant
    }

    mutating func listed(at index: Int) { listIndex = index }
    mutating func unlisted() { listIndex = -1 }

    /// Admitted into `room` as `role`, under `name` when one was given (or its token names it).
    mutating func admit(room: String, name: String?, role: Role, resume: (since: UInt64?, epoch: String?),
                        observing: Bool) {
        admitted = true
        if let name { participant.name = name }
        self.role = role
        self.observing = observing
        roomName = room
        self.resume = resume
    }

    /// Leaves the admitted count; true when it was in it.
    mutating func release() -> Bool {
        defer { admitted = false }
        return admitted
    }

    mutating func closed() { isClosed = true }
}
