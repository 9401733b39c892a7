/// The server's configuration: `config.json`, keys and defaults of
/// PROTOCOL.md section 9. Every key is optional; unknown keys are errors.
public struct HappyConfig: Equatable, Sendable {
    /// Address to listen on (`host`, default `"127.0.0.1"`); `--host` overrides it.
    public var host = "127.0.0.1"
    /// Port to listen on (`port`, default 8080); 0 picks a free one. `--port` overrides it.
    public var port = 8080
    /// Folder served at `/` (`webRoot`, default `"web"`); a relative path is taken
    /// from the configuration file's folder.
    public var webRoot = "web"
    /// Where the room store lives (`dataDir`, default `"data"`); a relative path is
    /// taken from the configuration file's folder.
    public var dataDir = "data"
    /// Room of clients that name none (`defaultRoom`, default `"lobby"`).
    public var defaultRoom = "lobby"
    /// Reverse proxies (IP addresses) whose `X-Forwarded-For` names the client.
    public var trustedProxies: [String] = []
    /// Host names the server answers to beyond `host` (`publicHosts`): the operator API
    /// refuses a request whose `Host` names none of them (PROTOCOL.md section 13).
    public var publicHosts: [String] = []
    /// A new room's state, the face's scale range and the dragon scene's geometry (`scene`).
    public var scene = SceneSection()
    /// Caps, rate limits, timeouts and history sizes (`limits`).
    public var limits = LimitsSection()
    /// Whether and how rooms are recorded on disk (`persistence`).
    public var persistence = PersistenceSection()
    /// Access tokens and allowed browser origins (`auth`).
    public var auth = AuthSection()
    /// The PEM files that turn on `wss://` and `https://` (`tls`).
    public var tls = TLSSection()
    /// Offer permessage-deflate (`compression`, default false).
    public var compression = false
    /// The Autobahn conformance suite's endpoint (`conformance`).
    public var conformance = ConformanceSection()
    /// Sharing rooms between nodes through Redis (`cluster`).
    public var cluster = ClusterSection()
    /// How crowded rooms get their events and presence (`crowd`, PROTOCOL.md section 12).
    public var crowd = CrowdSection()
    /// Receivers of the rooms' news (PROTOCOL.md section 13).
    public var webhooks: [Webhook] = []
    /// Undelivered deliveries kept per webhook; past it the oldest are dropped.
    public var webhookQueueMax = 100_000
    /// Log level and format (`log`).
    public var log = LogSection()
    /// Online copies of the database (`backup`).
    public var backup = BackupSection()

    /// A configuration with every key at its default.
    public init() {}

    /// The `scene` keys: the state of a new room (and of `room.reset`), the face's
    /// scale range and the dragon scene's geometry (PROTOCOL.md sections 1 and 9).
    public struct SceneSection: Equatable, Sendable {
        /// A new room's face happiness, 0-100 (`scene.happiness`, default 50).
        public var happiness = 50
        /// A new room's face scale, within `scaleMin`...`scaleMax` (`scene.scale`, default 0.9).
        public var scale = 0.9
        /// Smallest face scale, greater than 0; `face.setScale` clamps to it (`scene.scaleMin`, default 0.1).
        public var scaleMin = 0.1
        /// Largest face scale; `face.setScale` clamps to it (`scene.scaleMax`, default 2.0).
        public var scaleMax = 2.0
        /// A new room's heart wave fill level, 0-1 (`scene.rate`, default 0.5).
        public var rate = 0.5
        /// A new room's heart fill colour, `#rgb` or `#rrggbb` (`scene.fillColor`, default `"#ff0000"`).
        public var fillColor = "#ff0000"
        /// A new room's heart outline colour, `#rgb` or `#rrggbb` (`scene.strokeColor`, default `"#000000"`).
        public var strokeColor = "#000000"
        /// A new room's heart line width, 0-20; 0 stands for 1 (`scene.lineWidth`, default 1).
        public var lineWidth = 1.0
        /// A new room's dragon x, its top-left corner (`scene.dragonX`, default 10).
        public var dragonX = 10.0
        /// A new room's dragon y, its top-left corner (`scene.dragonY`, default 10).
        public var dragonY = 10.0
        /// The dragon scene's width, sent in `welcome.scene` (`scene.width`, default 375).
        public var width = 375.0
        /// The dragon scene's height, sent in `welcome.scene` (`scene.height`, default 180).
        public var height = 180.0
        /// The square dragon's side, at most `width` (`scene.dragonSize`, default 100).
        public var dragonSize = 100.0
        /// How far `dragon.forward` and `dragon.back` move the dragon (`scene.step`, default 10).
        public var step = 10.0
    }

    /// The `limits` keys: caps, rate limits, timeouts and history sizes
    /// (see "Limits and timeouts" in docs/operations.md).
    public struct LimitsSection: Equatable, Sendable {
        /// Connected clients; past it new ones get close 1013 (`limits.maxClients`, default 10000).
        /// Also caps the open frame streams.
        public var maxClients = 10000
        /// Rooms with clients; past it a new room gets close 1013 (`limits.maxRooms`, default 1000).
        public var maxRooms = 1000
        /// Largest client message in bytes, after reassembly; a larger one closes with 1009
        /// (`limits.maxMessageBytes`, default 4096, 64-16777216). Sent in `welcome.limits`.
        public var maxMessageBytes = 4096
        /// Refill rate, tokens per second, of each connection's intent token bucket (and each
        /// address's on `POST /api/intent`) (`limits.intentsPerSecond`, default 60).
        public var intentsPerSecond = 60.0
        /// Size of that token bucket, in intents (`limits.intentBurst`, default 120).
        public var intentBurst = 120
        /// `rate_limited` answers within 10 s before close 1008 (`limits.floodLimit`, default 100).
        public var floodLimit = 100
        /// A client's outgoing queue, in bytes (`limits.maxQueuedBytes`, default 1048576): past it
        /// queued events become one `resync`. Also bounds each room's broadcast log.
        public var maxQueuedBytes = 1_048_576
        /// A client that reads nothing for this many seconds is dropped (`limits.writeTimeoutSeconds`, default 30).
        public var writeTimeoutSeconds = 30.0
        /// WebSocket keepalive: ping after this many seconds of silence (`limits.pingIntervalSeconds`, default 20).
        public var pingIntervalSeconds = 20.0
        /// Seconds a ping may go unanswered before the client is dropped (`limits.pingTimeoutSeconds`, default 10).
        public var pingTimeoutSeconds = 10.0
        /// Events kept per room for resuming clients, in memory and on disk (`limits.historySize`, default 1000).
        public var historySize = 1000
        /// Above this many clients in a room, no join/leave broadcasts (`limits.presenceBroadcastMax`, default 1000).
        public var presenceBroadcastMax = 1000
        /// Open TCP connections (WebSocket and HTTP) from one address; 0 means no cap.
        public var maxConnectionsPerAddress = 512
        /// Pointer messages one client may send per second; more are dropped silently.
        public var pointersPerSecond = 30.0
        /// At most one `pointers` message per room in this many milliseconds.
        public var pointerIntervalMs = 50
        /// Pointers in one `pointers` message (and in `welcome.pointers`).
        public var maxPointersPerBatch = 50
        /// Refill rate of each client address's HTTP token bucket (`limits.httpPerSecond`,
        /// default 50); a read takes one token, a frame more (docs/operations.md).
        public var httpPerSecond = 50.0
        /// Size of that bucket (`limits.httpBurst`, default 100).
        public var httpBurst = 100
        /// New rooms one client address may create a minute (`limits.roomsPerAddress`, default 50).
        public var roomsPerAddress = 50
        /// Frame streams (`/stream/`) one client address may hold open (`limits.streamsPerAddress`, default 8).
        public var streamsPerAddress = 8

        /// Descriptors the server asks for: one per WebSocket and as many again for frame
        /// streams (both capped by `maxClients`) and for HTTP requests and keep-alives, and a
        /// reserve for the store's files, Redis and webhook connections.
        public var descriptorsNeeded: Int {
            min(maxClients, Int.max / 4) * 3 + Self.reservedDescriptors
        }

        /// Descriptors beyond the clients' (`descriptorsNeeded`).
        static let reservedDescriptors = 1024
    }

    /// The `persistence` keys: recording rooms in SQLite under `dataDir`.
    public struct PersistenceSection: Equatable, Sendable {
        /// Record rooms in SQLite under `dataDir`; false keeps them in memory only
        /// (`persistence.enabled`, default true).
        public var enabled = true
        /// Sync the write-ahead log on every group commit (`persistence.fsync`, default true).
        public var fsync = true
        /// Events a room keeps on disk for history and replay.
        public var historyLimit = 100_000
    }

    /// The `auth` keys: access tokens and browser origins (PROTOCOL.md section 7).
    public struct AuthSection: Equatable, Sendable {
        /// HS256 secret; when set, clients need a token (`auth.secret`, default empty: no tokens).
        public var secret = ""
        /// Origins a browser may connect from, import `/js/` from and read the API from (CORS);
        /// empty allows any (`auth.allowedOrigins`, default `[]`).
        public var allowedOrigins: [String] = []
        /// When set, a token must carry this `aud` claim (`auth.audience`, default empty: not checked).
        public var audience = ""
        /// When set, a token must carry this `iss` claim (`auth.issuer`, default empty: not checked).
        public var issuer = ""
    }

    /// The `backup` keys: periodic online copies of the SQLite database.
    public struct BackupSection: Equatable, Sendable {
        /// Folder the copies go to (`backup.dir`, default empty: no periodic backups).
        public var dir = ""
        /// Seconds between copies (`backup.everySeconds`, default 0: none).
        public var everySeconds = 0
        /// Copies kept; older ones are deleted (`backup.keep`, default 7).
        public var keep = 7
    }

    /// The `tls` keys: PEM files for `wss://` and `https://`; both or neither.
    public struct TLSSection: Equatable, Sendable {
        /// The certificate's PEM file (`tls.cert`, default empty: no TLS).
        public var cert = ""
        /// The private key's PEM file (`tls.key`, default empty).
        public var key = ""
        /// Whether the server speaks TLS: a certificate is set (`validate()` requires the key with it).
        public var isEnabled: Bool { !cert.isEmpty }
    }

    /// The `conformance` keys (docs/conformance.md).
    public struct ConformanceSection: Equatable, Sendable {
        /// Enable the `/echo` endpoint the Autobahn suite uses (`conformance.echo`, default false).
        public var echo = false
    }

    /// The `cluster` keys: sharing rooms between nodes through Redis.
    public struct ClusterSection: Equatable, Sendable {
        /// `redis://[:password@]host:port/db`, or the Sentinel form read by `RedisTarget`
        /// (`cluster.redis`, default empty: this node alone, no Redis).
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
        /// How a room's events reach its clients (`crowd.mode`).
        public enum Mode: String, Equatable, Sendable, CaseIterable {
            /// Ticks while a room's delivery load is above `tickAbove`.
            case auto
            /// Always one message per tick.
            case tick
            /// Always one message per event.
            case each
        }

        /// How a room applies dragon intents (`crowd.dragon`).
        public enum DragonMode: String, Equatable, Sendable, CaseIterable {
            /// Every dragon intent is applied on its own.
            case each
            /// Dragon intents are votes; each tick applies the majority.
            case vote
        }

        /// How a room's events reach its clients (`crowd.mode`, default `auto`).
        public var mode = Mode.auto
        /// A tick's length in milliseconds, 10-1000: at most one tick (and one presence batch)
        /// per room in that time (`crowd.tickMs`, default 50).
        public var tickMs = 50
        /// Events per second × clients above which `auto` switches to ticks.
        public var tickAbove = 20_000
        /// Clients in a room above which joins and leaves are sent in batches.
        public var presenceBatchAbove = 100
        /// Whether dragon moves apply one by one or by vote (`crowd.dragon`, default `each`).
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
        /// Where batches are POSTed: an `http://` or `https://` URL (`webhooks[].url`).
        public var url: String
        /// The delivery types this webhook gets; at least one (`webhooks[].events`).
        public var events: [WebhookEventType]
        /// Key of the HMAC-SHA256 in each batch's `X-Happy-Signature`; must not be empty
        /// (`webhooks[].secret`).
        public var secret: String

        /// A webhook from its three keys.
        public init(url: String, events: [WebhookEventType], secret: String) {
            self.url = url
            self.events = events
            self.secret = secret
        }

        /// Its identity in the routing, deliveries, senders and outboxes (see `WebhookKey`).
        public var key: Int { WebhookKey.of(url: url) }

        /// `url` for logs: without credentials (`user:pass@`), query or fragment, which may hold secrets.
        public var redactedURL: String {
            guard let schemeEnd = url.firstIndex(of: ":"), url[schemeEnd...].hasPrefix("://") else { return "(not a URL)" }
            let afterScheme = url.index(schemeEnd, offsetBy: 3)
            var rest = url[afterScheme...]
            if let cut = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<cut] + "?…" }
            let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") { rest = "…@" + rest[rest.index(after: at)...] }
            return String(url[..<afterScheme]) + rest
        }
    }

    /// The `log` keys.
    public struct LogSection: Equatable, Sendable {
        /// `debug`, `info`, `warn` or `error` (`log.level`, default `"info"`).
        public var level = "info"
        /// `text`, or `json` for one object per line (`log.format`, default `"text"`).
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

    /// The limits every client is told in `welcome.limits`.
    public var welcomeLimits: WelcomeLimits {
        WelcomeLimits(intentsPerSecond: limits.intentsPerSecond, intentBurst: limits.intentBurst,
                      maxMessageBytes: limits.maxMessageBytes)
    }
}

/// A configuration problem, naming the key and what is wrong with it.
public struct ConfigError: Error, Equatable, CustomStringConvertible {
    /// The text for the operator; those of `parse` and `validate` start with the file's name.
    public let message: String
    /// The key at fault (`limits.maxClients`, `webhooks[0].url`, `tls` for a rule between its
    /// keys), when the problem is one key's; nil for text that is not JSON or an unreadable file.
    public let key: String?
    /// An error with this text, about `key` when given.
    public init(_ message: String, key: String? = nil) {
        self.message = message
        self.key = key
    }
    /// The message.
    public var description: String { message }
}

/// What a webhook delivery reports (PROTOCOL.md section 13).
public enum WebhookEventType: String, Equatable, Sendable, CaseIterable {
    /// `room.created`: a room started a new epoch (also after a `DELETE`).
    case roomCreated = "room.created"
    /// `room.emptied`: a room's last client on this node left.
    case roomEmptied = "room.emptied"
    /// `presence.joined`: a client (not an observer) joined a room.
    case presenceJoined = "presence.joined"
    /// `presence.left`: a client (not an observer) left a room.
    case presenceLeft = "presence.left"
    /// `event`: an event, exactly as it was broadcast.
    case event
}
