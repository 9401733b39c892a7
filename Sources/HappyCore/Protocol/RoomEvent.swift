/// One numbered change of a room, broadcast to all its clients.
public struct RoomEvent: Equatable, Sendable {
    public var seq: UInt64
    public var time: Int64
    public var room: String
    public var name: EventName
    public var sender: Participant
    public var changes: [SceneChange]
    public var state: Scene
    /// A voted event (section 12): sent with `"sender": null` and its votes.
    public var votes: VoteTally?

    public init(seq: UInt64, time: Int64, room: String, name: EventName, sender: Participant,
                changes: [SceneChange], state: Scene, votes: VoteTally? = nil) {
        self.seq = seq
        self.time = time
        self.room = room
        self.name = name
        self.sender = sender
        self.changes = changes
        self.state = state
        self.votes = votes
    }
}

/// The content of a `welcome` message.
public struct Welcome: Sendable {
    public var room: String
    public var you: Participant
    public var role: Role
    public var epoch: String
    public var seq: UInt64
    public var state: Scene
    public var geometry: SceneGeometry
    public var presence: [Participant]
    /// The presence list already encoded as a JSON array (shared by many
    /// welcomes); used instead of `presence` when set.
    public var encodedPresence: [UInt8]?
    /// `state` already encoded as a JSON object (shared by the welcomes
    /// until the next event); used instead of `state` when set.
    public var encodedState: [UInt8]?
    public var presenceCount: Int
    public var serverTime: Int64
    public var recovered: Bool
    public var limits: WelcomeLimits
    /// The room's visible pointers, already encoded as a JSON array (section 10).
    public var encodedPointers: [UInt8] = [UInt8]("[]".utf8)
    /// Clients watching the room without being in its presence (section 13).
    public var observerCount = 0
    /// How the room's events reach its clients now, and the tick's length (section 12).
    public var delivery = DeliveryMode.each
    public var tickMs = 50
    /// `geometry` and `limits` already encoded (`ServerMessageEncoder.welcomeConstants`):
    /// they change only with the configuration, so one encoding serves every welcome.
    public var encodedConstants: WelcomeConstants?

    public init(room: String, you: Participant, role: Role, epoch: String, seq: UInt64, state: Scene,
                geometry: SceneGeometry, presence: [Participant], presenceCount: Int, serverTime: Int64,
                recovered: Bool, limits: WelcomeLimits) {
        self.room = room
        self.you = you
        self.role = role
        self.epoch = epoch
        self.seq = seq
        self.state = state
        self.geometry = geometry
        self.presence = presence
        self.presenceCount = presenceCount
        self.serverTime = serverTime
        self.recovered = recovered
        self.limits = limits
    }
}

/// A welcome's `scene` and `limits` objects, encoded once: they change only
/// with the configuration.
public struct WelcomeConstants: Equatable, Sendable {
    public let geometry: [UInt8]
    public let limits: [UInt8]
}

/// The limits a client is told about in `welcome`.
public struct WelcomeLimits: Equatable, Sendable {
    public var intentsPerSecond: Double
    public var intentBurst: Int
    public var maxMessageBytes: Int

    public init(intentsPerSecond: Double, intentBurst: Int, maxMessageBytes: Int) {
        self.intentsPerSecond = intentsPerSecond
        self.intentBurst = intentBurst
        self.maxMessageBytes = maxMessageBytes
    }
}
