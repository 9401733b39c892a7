/// The server's configuration: `config.json`, keys and defaults of
/// PROTOCOL.md section 9. Every key is optional; unknown keys are errors.
public struct HappyConfig: Equatable, Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var webRoot = "web"
    public var dataDir = "data"
    public var defaultRoom = "lobby"
    /// Reverse proxies (IP addresses) whose `X-Forwarded-For` names the client.
    public var trustedProxies: [String] = []
    public var scene = SceneSection()
    public var limits = LimitsSection()
    public var persistence = PersistenceSection()
    public var auth = AuthSection()
    public var tls = TLSSection()
    public var compression = false
    public var conformance = ConformanceSection()
    public var cluster = ClusterSection()
    public var crowd = CrowdSection()
    /// Receivers of the rooms' news (PROTOCOL.md section 13).
    public var webhooks: [Webhook] = []
    /// Undelivered deliveries kept per webhook; past it the oldest are dropped.
    public var webhookQueueMax = 100_000
    public var log = LogSection()

    public init() {}

    public struct SceneSection: Equatable, Sendable {
        public var happiness = 50
        public var scale = 0.9
        public var scaleMin = 0.1
        public var scaleMax = 2.0
        public var rate = 0.5
        public var fillColor = "#ff0000"
        public var strokeColor = "#000000"
        public var lineWidth = 1.0
        public var dragonX = 10.0
        public var dragonY = 10.0
        public var width = 375.0
        public var height = 180.0
        public var dragonSize = 100.0
        public var step = 10.0
    }

    public struct LimitsSection: Equatable, Sendable {
        public var maxClients = 10000
        public var maxRooms = 1000
        public var maxMessageBytes = 4096
        public var intentsPerSecond = 60.0
        public var intentBurst = 120
        public var floodLimit = 100
        public var maxQueuedBytes = 1_048_576
        public var writeTimeoutSeconds = 30.0
        public var pingIntervalSeconds = 20.0
        public var pingTimeoutSeconds = 10.0
        public var historySize = 1000
        public var presenceBroadcastMax = 1000
        /// Open TCP connections (WebSocket and HTTP) from one address; 0 means no cap.
        public var maxConnectionsPerAddress = 512
        /// Pointer messages one client may send per second; more are dropped silently.
        public var pointersPerSecond = 30.0
        /// At most one `pointers` message per room in this many milliseconds.
        public var pointerIntervalMs = 50
        /// Pointers in one `pointers` message (and in `welcome.pointers`).
        public var maxPointersPerBatch = 50
    }

    public struct PersistenceSection: Equatable, Sendable {
        public var enabled = true
        public var fsync = true
        /// Events a room keeps on disk for history and replay.
        public var historyLimit = 100_000
    }

    public struct AuthSection: Equatable, Sendable {
        public var secret = ""
        public var allowedOrigins: [String] = []
    }

    public struct TLSSection: Equatable, Sendable {
        public var cert = ""
        public var key = ""
        public var isEnabled: Bool { !cert.isEmpty }
    }

    public struct ConformanceSection: Equatable, Sendable {
        public var echo = false
    }

    public struct ClusterSection: Equatable, Sendable {
        public var redis = ""
        /// Run against a Redis that could lose acknowledged writes (no
        /// append-only file synced on every write); off by default.
        public var allowNonDurableRedis = false
        /// Replicas that must confirm a commit (`WAIT`) before its intents
        /// are acked; nil: 1 with a Sentinel address, 0 with a plain one.
        public var minReplicaAcks: Int?

        /// `minReplicaAcks` as it applies to `redis`.
        public var replicaAcks: Int {
            minReplicaAcks ?? (RedisTarget(redis)?.usesSentinel == true ? 1 : 0)
        }
    }

    /// Crowd rooms (PROTOCOL.md section 12): tick delivery, presence batches, votes.
    public struct CrowdSection: Equatable, Sendable {
        public enum Mode: String, Equatable, Sendable, CaseIterable {
            /// Ticks while a room's delivery load is above `tickAbove`.
            case auto
            /// Always one message per tick.
            case tick
            /// Always one message per event.
            case each
        }

        public enum DragonMode: String, Equatable, Sendable, CaseIterable {
            /// Every dragon intent is applied on its own.
            case each
            /// Dragon intents are votes; each tick applies the majority.
            case vote
        }

        public var mode = Mode.auto
        public var tickMs = 50
        /// Events per second × clients above which `auto` switches to ticks.
        public var tickAbove = 20_000
        /// Clients in a room above which joins and leaves are sent in batches.
        public var presenceBatchAbove = 100
        public var dragon = DragonMode.each
        /// Tick messages a second one room may send (clients × ticks a
        /// second); a bigger room ticks less often. 0: always `tickMs`.
        public var tickWritesPerSecond = 100_000

        /// A room's tick with `clients` clients: `tickMs`, or longer (in
        /// steps of 10 ms) so that its ticks stay within `tickWritesPerSecond`.
        public func tickMilliseconds(clients: Int) -> Int {
            guard tickWritesPerSecond > 0 else { return tickMs }
            let needed = (clients * 1000 + tickWritesPerSecond - 1) / tickWritesPerSecond
            return min(1000, max(tickMs, (needed + 9) / 10 * 10))
        }
    }

    /// One webhook: where to POST, which deliveries, and the secret that signs them.
    public struct Webhook: Equatable, Sendable {
        public var url: String
        public var events: [WebhookEventType]
        public var secret: String

        public init(url: String, events: [WebhookEventType], secret: String) {
            self.url = url
            self.events = events
            self.secret = secret
        }
    }

    public struct LogSection: Equatable, Sendable {
        public var level = "info"
        public var format = "text"
    }

    /// `trustedProxies` read as addresses (none if an entry is not one; `validate()` refuses that).
    public var proxies: TrustedProxies { TrustedProxies(trustedProxies) ?? TrustedProxies() }

    /// The reducer's rules derived from the `scene` section.
    public var sceneRules: SceneRules {
        let defaults = Scene(
            face: Scene.Face(happiness: scene.happiness, scale: scene.scale),
            heart: Scene.Heart(rate: scene.rate,
                               fillColor: RGBColor(hex: scene.fillColor) ?? RGBColor(red: 255, green: 0, blue: 0),
                               strokeColor: RGBColor(hex: scene.strokeColor) ?? RGBColor(red: 0, green: 0, blue: 0),
                               lineWidth: scene.lineWidth == 0 ? 1 : scene.lineWidth),
            dragon: Scene.Dragon(x: scene.dragonX, y: scene.dragonY, hidden: false))
        return SceneRules(defaults: defaults,
                          geometry: SceneGeometry(width: scene.width, height: scene.height,
                                                  dragonSize: scene.dragonSize, step: scene.step),
                          scaleMin: scene.scaleMin, scaleMax: scene.scaleMax)
    }

    public var welcomeLimits: WelcomeLimits {
        WelcomeLimits(intentsPerSecond: limits.intentsPerSecond, intentBurst: limits.intentBurst,
                      maxMessageBytes: limits.maxMessageBytes)
    }
}

/// A configuration problem, naming the key and what is wrong with it.
public struct ConfigError: Error, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What a webhook delivery reports (PROTOCOL.md section 13).
public enum WebhookEventType: String, Equatable, Sendable, CaseIterable {
    case roomCreated = "room.created"
    case roomEmptied = "room.emptied"
    case presenceJoined = "presence.joined"
    case presenceLeft = "presence.left"
    case event
}
