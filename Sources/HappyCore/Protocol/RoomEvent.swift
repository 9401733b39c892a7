/// One numbered change of a room, broadcast to all its clients.
public struct RoomEvent: Equatable, Sendable {
    /// The event's number in the room: 1 more than the previous event's within an epoch.
    public var seq: UInt64
    /// When the event happened, in milliseconds since 1970.
    public var time: Int64
    /// The room's name.
    public var room: String
    /// The delegate-style name (section 3), such as `faceView:didChangeHappiness:`.
    public var name: EventName
    /// Who sent the intent; not written for a voted event, which is sent with `"sender": null`.
    public var sender: Participant
    /// The fields the event changed, in `ScenePath` order; empty for a dragon button
    /// press that did not move the dragon.
    public var changes: [SceneChange]
    /// The whole scene after the event.
    public var state: Scene
    /// A voted event (section 12): sent with `"sender": null` and its votes.
    public var votes: VoteTally?

    /// Creates an event; `votes` is set only for a voted dragon event.
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
    /// The room joined.
    public var room: String
    /// The joining client's own id and display name.
    public var you: Participant
    /// The client's role (`player` for everyone when auth is off).
    public var role: Role
    /// The room's history epoch; it changes only when history is lost.
    public var epoch: String
    /// The room's current seq.
    public var seq: UInt64
    /// The room's current scene (not read when `encodedState` is set).
    public var state: Scene
    /// The scene's geometry, sent as `scene` (not read when `encodedConstants` is set).
    public var geometry: SceneGeometry
    /// The clients to list in `presence` (not read when `encodedPresence` is set).
    public var presence: [Participant]
    /// The presence list already encoded as a JSON array (shared by many
    /// welcomes); used instead of `presence` when set.
    public var encodedPresence: [UInt8]?
    /// `state` already encoded as a JSON object (shared by the welcomes
    /// until the next event); used instead of `state` when set.
    public var encodedState: [UInt8]?
    /// The number of clients in the room's presence (observers are not counted).
    public var presenceCount: Int
    /// The server's clock in milliseconds since 1970 (section 8).
    public var serverTime: Int64
    /// Whether the resume succeeded, so that the missed events follow the welcome.
    public var recovered: Bool
    /// The limits the client must respect (not read when `encodedConstants` is set).
    public var limits: WelcomeLimits
    /// The room's visible pointers, already encoded as a JSON array (section 10).
    public var encodedPointers: [UInt8] = [UInt8]("[]".utf8)
    /// Clients watching the room without being in its presence (section 13).
    public var observerCount = 0
    /// How the room's events reach its clients now, and the tick's length (section 12).
    public var delivery = DeliveryMode.each
    /// The room's tick, in milliseconds.
    public var tickMs = 50
    /// `geometry` and `limits` already encoded (`ServerMessageEncoder.welcomeConstants`):
    /// they change only with the configuration, so one encoding serves every welcome.
    public var encodedConstants: WelcomeConstants?

    /// Creates a welcome; the other fields keep their defaults (no pointers, no observers,
    /// `each` delivery, nothing pre-encoded).
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
    /// The encoded `scene` object (see `SceneGeometry`).
    public let geometry: [UInt8]
    /// The encoded `limits` object (see `WelcomeLimits`).
    public let limits: [UInt8]
}

/// The limits a client is told about in `welcome`.
public struct WelcomeLimits: Equatable, Sendable {
    /// The rate at which the connection's intent token bucket refills, per second.
    public var intentsPerSecond: Double
    /// The token bucket's size: how many intents may arrive at once.
    public var intentBurst: Int
    /// The largest message accepted, in UTF-8 bytes; a larger one closes the connection with 1009.
    public var maxMessageBytes: Int

    /// Creates the limits from the configuration's values.
    public init(intentsPerSecond: Double, intentBurst: Int, maxMessageBytes: Int) {
        self.intentsPerSecond = intentsPerSecond
        self.intentBurst = intentBurst
        self.maxMessageBytes = maxMessageBytes
    }
}
