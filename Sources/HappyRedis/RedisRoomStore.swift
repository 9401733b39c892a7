import Foundation
import HappyCore

/// Rooms in Redis, shared by every node. Per room:
/// - `happy:room:<room>`, a hash: `epoch`, `seq`, `scene`, `commit` (the
///   token of the last commit), and the room's recorded past: `first` (the
///   oldest seq held) and the state at `first` - 1, its base: `baseEvent`
///   (the event message whose `state` it is) or `baseScene` (a scene, when
///   the past starts at seq 0; neither: the defaults), and `baseStatus`
///   (the dragon's label then, "" for the initial one).
/// - `happy:events:<room>`, a stream of its newest events, ids `<seq>-1`,
///   fields `e` (the event as broadcast) and `s` (the label after it), so a
///   read by seq is an XRANGE from an id. It keeps `historyLimit` events,
///   or `historySize` if more (a resume replays the newest of those): then
///   only the newest `historyLimit` are history, the event before them its
///   base, as with a stream of exactly `historyLimit`.
///
/// A commit is one Lua script per room that checks the seq it was built on
/// (compare-and-set), writes state and events, trims the stream while moving
/// the base up in the same step, and publishes the events to the other
/// nodes; a room that moved on comes back as a conflict with its current
/// state, for the node to apply its intents again. With `replicaAcks` above
/// 0, a commit counts as recorded, and its events are published, only once
/// that many replicas confirm it (`RedisReplication`); what a node reads is
/// confirmed the same way before it is used.
///
/// Rooms recorded before the base was kept (no `first`) are not migrated:
/// their oldest stored event stands as the base, its label "" when it has
/// none, until their first trim writes a real one. All nodes of a cluster
/// must run the same version (an older one trims without moving the base).
public final class RedisRoomStore: RoomStore, @unchecked Sendable {
    public let endpoint: RedisEndpoint
    public let nodeID: String
    /// Replicas that must confirm each commit and read (`cluster.minReplicaAcks`).
    public let replicaAcks: Int
    public let historySize: Int
    /// Events kept per room for history and replay (section 11).
    public let historyLimit: Int
    private let connection: RedisConnection
    /// History reads come from another thread while a commit may be under way.
    let reads: RedisReadConnection
    private var scriptSHA: String?
    /// The webhooks whose outboxes are kept here.
    private let webhooks: RedisWebhookList
    /// Tells this process's commit tokens from those of an earlier run with the same node id.
    private let instance = Identifiers.newEpoch()

    /// Lua: the value of one field of a stream entry (`{id, {name, value, ...}}`).
    static let entryFieldFunction = """
        local function field(entry, name)
          local list = entry[2]
          for i = 1, #list - 1, 2 do
            if list[i] == name then return list[i + 1] end
          end
          return nil
        end

        """

    /// KEYS: room, events, then the webhook outbox of each delivery.
    /// ARGV: epoch, base seq, seq, scene, events kept, channel ('': publish
    /// nothing), message, token, the number of events, then (seq, event,
    /// label) for each event, then each delivery (its outbox is its key).
    static let commitScript = entryFieldFunction + """
        local epoch = redis.call('HGET', KEYS[1], 'epoch')
        local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
        local base = tonumber(ARGV[2])
        local count = tonumber(ARGV[9])
        if epoch then
          if epoch ~= ARGV[1] or seq ~= base then return 0 end
        else
          if base ~= 0 then return 0 end
          -- A new epoch: its past starts at seq 0, this scene when nothing happened yet.
          redis.call('DEL', KEYS[2])
          redis.call('HSET', KEYS[1], 'first', '1')
          if count == 0 then redis.call('HSET', KEYS[1], 'baseScene', ARGV[4]) end
        end
        redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'seq', ARGV[3], 'scene', ARGV[4], 'commit', ARGV[8])
        for i = 10, 9 + 3 * count, 3 do
          redis.call('XADD', KEYS[2], ARGV[i] .. '-1', 'e', ARGV[i + 1], 's', ARGV[i + 2], 't', ARGV[8])
        end
        for k = 3, #KEYS do
          redis.call('XADD', KEYS[k], '*', 'd', ARGV[7 + 3 * count + k])
        end
        local keep = tonumber(ARGV[5])
        if redis.call('XLEN', KEYS[2]) > keep then
          -- The newest event trimmed away becomes the base: the state before the oldest held.
          local boundary = tonumber(ARGV[3]) - keep
          local newest = nil
          if boundary > 0 then newest = redis.call('XREVRANGE', KEYS[2], tostring(boundary), '-', 'COUNT', 1)[1] end
          if newest then
            local newestSeq = tonumber(string.match(newest[1], '^%d+'))
            redis.call('HSET', KEYS[1], 'first', tostring(newestSeq + 1),
                       'baseEvent', field(newest, 'e') or '', 'baseStatus', field(newest, 's') or '')
            redis.call('HDEL', KEYS[1], 'baseScene')
          end
          redis.call('XTRIM', KEYS[2], 'MAXLEN', keep)
        end
        if count > 0 and ARGV[6] ~= '' then redis.call('PUBLISH', ARGV[6], ARGV[7]) end
        return 1
        """

    /// The scene of a room nobody has used yet.
    public let defaults: Scene

    /// KEYS: room, events, then the outbox of each webhook told of new rooms.
    /// ARGV: epoch, scene, the `room.created` delivery.
    static let createScript = """
        if redis.call('EXISTS', KEYS[1]) == 0 then
          redis.call('DEL', KEYS[2])
          redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'seq', '0', 'scene', ARGV[2],
                     'first', '1', 'baseScene', ARGV[2])
          for k = 3, #KEYS do redis.call('XADD', KEYS[k], '*', 'd', ARGV[3]) end
        end
        return 1
        """

    /// KEYS: an outbox per delivery; ARGV: the deliveries.
    static let enqueueScript = """
        for k = 1, #KEYS do redis.call('XADD', KEYS[k], '*', 'd', ARGV[k]) end
        return #KEYS
        """

    /// `historySize`: events a resume may replay; `historyLimit`: events kept for history and replay.
    /// Unless `allowNonDurable`, Redis must keep every acknowledged write
    /// (see `checkDurability`). `replicaAcks`: replicas that confirm each commit.
    /// `webhooks`: the configuration's, whose outboxes are kept here (by URL, so
    /// every node's deliveries for one receiver share one outbox).
    public init(endpoint: RedisEndpoint, nodeID: String, historySize: Int, defaults: Scene,
                historyLimit: Int = 100_000, allowNonDurable: Bool = false, replicaAcks: Int = 0,
                webhooks: [HappyConfig.Webhook] = []) throws(StoreError) {
        self.endpoint = endpoint
        self.webhooks = RedisWebhookList(webhooks)
        self.nodeID = nodeID
        self.historySize = historySize
        self.historyLimit = historyLimit
        self.defaults = defaults
        self.replicaAcks = replicaAcks
        connection = try RedisConnection(endpoint: endpoint)
        reads = RedisReadConnection(endpoint: endpoint)
        if !allowNonDurable { try checkDurability() }
        try loadScript()
    }

    /// A node acks an intent once Redis has it: Redis must not lose it in a
    /// crash, which takes the append-only file synced on every write
    /// (`appendonly yes`, `appendfsync always`).
    private func checkDurability() throws(StoreError) {
        let server = "Redis at \(connection.url.address)"
        let fix = "set appendonly yes and appendfsync always in Redis, "
            + "or set cluster.allowNonDurableRedis to true to accept losing acknowledged intents in a Redis crash"
        func setting(_ name: String) throws(StoreError) -> String {
            let reply = try connection.command(["CONFIG", "GET", name]).elements
            guard reply.count == 2, let value = reply[1].text else {
                throw StoreError(.setup, "\(server) did not answer CONFIG GET \(name), so its durability is unknown; \(fix)")
            }
            return value
        }
        let appendOnly = try setting("appendonly"), appendFsync = try setting("appendfsync")
        guard appendOnly == "yes", appendFsync == "always" else {
            throw StoreError(.setup, "\(server) could lose acknowledged writes (appendonly \(appendOnly), "
                + "appendfsync \(appendFsync)); \(fix)")
        }
    }

    public var isSynchronous: Bool { false }
    public var kind: String { "redis" }
    public var keepsHistory: Bool { true }

    static func roomKey(_ room: String) -> String { "happy:room:\(room)" }
    static func eventsKey(_ room: String) -> String { "happy:events:\(room)" }
    static func channel(_ room: String) -> String { "happy:changes:\(room)" }

    private func loadScript() throws(StoreError) {
        let reply = try connection.command(["SCRIPT", "LOAD", Self.commitScript])
        guard let sha = reply.text, case .bulk = reply else {
            throw StoreError(.io, "Redis at \(connection.url.address) did not load the commit script: \(reply)")
        }
        scriptSHA = sha
    }

    /// Queues deliveries no commit carries, in one script.
    public func enqueue(_ deliveries: [OutboxDelivery]) throws(StoreError) {
        guard !deliveries.isEmpty else { return }
        let keys = try deliveries.map { delivery throws(StoreError) in try webhooks.outboxKey(delivery.webhook) }
        let reply = try connection.command(bytes: [Array("EVAL".utf8), Array(Self.enqueueScript.utf8),
                                                    Array(String(keys.count).utf8)]
                                           + keys.map { Array($0.utf8) } + deliveries.map(\.json))
        if case .error(let message) = reply {
            throw StoreError(.io, "Redis at \(connection.url.address) refused webhook deliveries: \(message)")
        }
    }

    /// The outboxes in Redis, shared by every node; one node sends each webhook's (its lease).
    public func webhookOutbox() throws(StoreError) -> any WebhookOutbox {
        RedisWebhookOutbox(endpoint: endpoint, webhooks: webhooks)
    }

    /// Deliveries for the reloaded list go to their URLs' outboxes; those
    /// made before it for a removed webhook still reach its outbox.
    public func configureWebhooks(_ webhooks: [HappyConfig.Webhook]) {
        self.webhooks.update(webhooks)
    }

    /// Forgets a room's state and events. Nodes that hold it find out at
    /// their next commit (a conflict with no room: a new epoch). With replica
    /// acks, only once the replicas have the deletion too (or a failover
    /// would bring the room back).
    public func deleteRoom(named name: String) throws(StoreError) {
        _ = try connection.command(["DEL", Self.roomKey(name), Self.eventsKey(name)])
        try RedisReplication.confirm(on: connection, serial: connection.serial, replicas: replicaAcks, fence: false)
    }

    /// Refuses: the rooms are Redis's, shared by every node, and Redis keeps
    /// them durable and copyable itself.
    public func backup(to path: String) throws(StoreError) {
        throw StoreError(.unsupported, "the rooms are in Redis (cluster.redis): back up Redis itself, "
            + "from its RDB snapshots or its append-only file (see Backups in docs/operations.md)")
    }

    /// Loads a room, creating it first when Redis has none: nodes opening a
    /// new room at the same moment then agree on one epoch. With replica
    /// acks, only once the replicas confirm what was read.
    public func loadRoom(named name: String) throws(StoreError) -> StoredRoom? {
        let room = try readRoom(named: name)
        try RedisReplication.confirm(on: connection, serial: readSerial, replicas: replicaAcks, fence: true)
        return room
    }

    /// The connection `readRoom` read on (to confirm the read there).
    private var readSerial: UInt64 = 0

    /// The room as the primary holds it, replicated or not.
    private func readRoom(named name: String) throws(StoreError) -> StoredRoom? {
        var fields = try connection.command(["HMGET", Self.roomKey(name), "epoch", "seq", "scene"]).elements
        if fields.count == 3, fields[0].text == nil {
            let epoch = Identifiers.newEpoch()
            let told = webhooks.createdOutboxKeys
            _ = try connection.command(bytes: [
                Array("EVAL".utf8), Array(Self.createScript.utf8), Array(String(2 + told.count).utf8),
                Array(Self.roomKey(name).utf8), Array(Self.eventsKey(name).utf8),
            ] + told.map { Array($0.utf8) } + [
                Array(epoch.utf8), ServerMessageEncoder.sceneJSON(defaults),
                WebhookEncoder.created(room: name, epoch: epoch, time: SystemTime.wallMilliseconds()),
            ])
            fields = try connection.command(["HMGET", Self.roomKey(name), "epoch", "seq", "scene"]).elements
        }
        readSerial = connection.serial
        guard fields.count == 3, let epoch = fields[0].text else { return nil }
        guard let seq = fields[1].integer, let sceneText = fields[2].text,
              let json = try? JSONParser.parse(sceneText), let scene = Scene(json: json) else {
            throw StoreError(.damaged, "room \(name) in Redis is damaged (happy:room:\(name) has no readable seq or scene)")
        }
        // The newest historySize events, read by id from the seq the hash holds
        // (a commit landing meanwhile may add newer ones: they are left out).
        var history: [StoredEvent] = []
        if historySize > 0 && seq > 0 {
            let from = max(1, seq - Int64(historySize) + 1)
            let entries = try connection.command(["XRANGE", Self.eventsKey(name), String(from), String(seq)]).elements
            // Read on another connection (the first broke): possibly from another primary.
            guard replicaAcks == 0 || connection.serial == readSerial else {
                throw StoreError(.unreachable, "the connection to Redis broke while room \(name) was read")
            }
            for entry in entries {
                guard let event = Self.storedEvent(entry) else {
                    throw StoreError(.damaged, "room \(name) in Redis is damaged (an entry of happy:events:\(name) is unreadable)")
                }
                history.append(event)
            }
        }
        return StoredRoom(name: name, epoch: epoch, seq: UInt64(seq), scene: scene, history: history)
    }

    /// Records each room's commit with its compare-and-set script.
    ///
    /// A commit's token names this process and the commit's serial, so the
    /// same commit sent again carries the same token, and no other does:
    /// a commit whose reply was lost is sent again, and when Redis refuses it
    /// because the room moved on, the token (kept with the room and with each
    /// event) says whether that was this very commit landing earlier.
    ///
    /// Throws `.inDoubt` when something was sent without a definite answer
    /// for every commit: the caller keeps the intents unanswered and calls
    /// again with the same commits until it gets one. Only when nothing was
    /// sent at all does it throw the connection's error (nothing recorded).
    @discardableResult
    public func commit(_ commits: [RoomCommit]) throws(StoreError) -> [CommitConflict] {
        var conflicts: [CommitConflict] = []
        var recorded: [RoomCommit] = []
        var sent = false
        /// The connection everything since the first send went through, and
        /// whether the last of it was a read (which the fence confirms).
        var serial: UInt64?
        var readSinceWrite = false
        func note(read: Bool) throws(StoreError) {
            if serial == nil { serial = connection.serial }
            guard replicaAcks == 0 || serial == connection.serial else {
                throw StoreError(.unreachable, "the connection to Redis was made again during a commit")
            }
            readSinceWrite = read
        }
        for commit in commits {
            let token = self.token(commit)
            do throws(StoreError) {
                if try run(commit, token: token, sent: &sent) {
                    try note(read: false)
                    recorded.append(commit)
                } else if try landed(commit, token: token) {
                    try note(read: true)
                    recorded.append(commit)
                } else {
                    let current = try readRoom(named: commit.room)
                    try note(read: true)
                    conflicts.append(CommitConflict(room: commit.room, current: current))
                }
            } catch {
                guard sent else { throw error }
                throw inDoubt(commit, error)
            }
        }
        guard replicaAcks > 0, let serial else { return conflicts }
        do throws(StoreError) {
            if !Self.plantedAckBeforeWait {
                try RedisReplication.confirm(on: connection, serial: serial, replicas: replicaAcks, fence: readSinceWrite)
            }
            // Other nodes hear of events only once they are confirmed.
            for commit in recorded {
                let reply = try connection.command(bytes: [Array("PUBLISH".utf8), Array(Self.channel(commit.room).utf8),
                                                           message(commit)])
                if case .error(let text) = reply {
                    throw StoreError(.unreachable, "Redis refused to publish the events of room \(commit.room): \(text)")
                }
            }
        } catch {
            throw inDoubt(commits.last!, error)
        }
        return conflicts
    }

    #if HAPPY_PLANTED_ACK_BEFORE_WAIT
    /// DELIBERATE DEFECT, built only with `-Xswiftc -DHAPPY_PLANTED_ACK_BEFORE_WAIT`
    /// for `make chaos-planted`, to prove the chaos checker catches it: a commit
    /// counts as recorded as soon as the primary has it, before any replica
    /// confirms it, so a failover loses acknowledged intents.
    static let plantedAckBeforeWait = true
    #else
    static let plantedAckBeforeWait = false
    #endif

    private func inDoubt(_ commit: RoomCommit, _ error: StoreError) -> StoreError {
        StoreError(.inDoubt, "commit of room \(commit.room) (seq \(commit.baseSeq + 1)-\(commit.seq)) "
            + "sent without a definite answer: \(error.message)")
    }

    /// The events of a commit as other nodes receive them.
    private func message(_ commit: RoomCommit) -> [UInt8] {
        RemoteEventsCodec.encode(RemoteEvents(
            origin: nodeID, room: commit.room, epoch: commit.epoch, seq: commit.seq, scene: commit.scene,
            events: commit.events))
    }

    func token(_ commit: RoomCommit) -> String {
        "\(nodeID)-\(instance):\(commit.serial):\(commit.baseSeq)-\(commit.seq)"
    }

    /// Whether a commit Redis refused had landed before (an earlier send
    /// whose reply was lost): its token is the room's last, or the one its
    /// last event was written with.
    private func landed(_ commit: RoomCommit, token: String) throws(StoreError) -> Bool {
        if try connection.command(["HGET", Self.roomKey(commit.room), "commit"]).text == token { return true }
        guard let last = commit.events.last else { return false }
        let id = "\(last.seq)-1"
        let entry = try connection.command(["XRANGE", Self.eventsKey(commit.room), id, id]).elements.first
        let fields = entry?.elements.dropFirst().first?.elements ?? []
        for index in stride(from: 0, to: fields.count - 1, by: 2) where fields[index].text == "t" {
            return fields[index + 1].text == token
        }
        return false
    }

    /// One room's compare-and-set; false on a refusal (a conflict, or this
    /// commit landing earlier). A send without an answer is made once more
    /// on a new connection (a Redis restarted since the last command).
    /// `sent` becomes true once the command may have reached Redis.
    private func run(_ commit: RoomCommit, token: String, sent: inout Bool) throws(StoreError) -> Bool {
        if scriptSHA == nil { try loadScript() }
        // With replica acks, the events are published once confirmed (in `commit`).
        let publishes = replicaAcks == 0
        let outboxes = try commit.deliveries.map { delivery throws(StoreError) in try webhooks.outboxKey(delivery.webhook) }
        var arguments: [[UInt8]] = [
            Array("EVALSHA".utf8), Array(scriptSHA!.utf8), Array(String(2 + outboxes.count).utf8),
            Array(Self.roomKey(commit.room).utf8), Array(Self.eventsKey(commit.room).utf8),
        ]
        arguments += outboxes.map { Array($0.utf8) }
        arguments += [
            Array(commit.epoch.utf8), Array(String(commit.baseSeq).utf8), Array(String(commit.seq).utf8),
            ServerMessageEncoder.sceneJSON(commit.scene), Array(String(eventsKept).utf8),
            publishes ? Array(Self.channel(commit.room).utf8) : [], publishes ? message(commit) : [],
            Array(token.utf8), Array(String(commit.events.count).utf8),
        ]
        for event in commit.events {
            arguments += [Array(String(event.seq).utf8), event.json, Array(event.dragonStatus.utf8)]
        }
        arguments += commit.deliveries.map(\.json)
        var reply: RedisValue?
        for attempt in 0..<2 where reply == nil {
            switch connection.send(bytes: arguments) {
            case .reply(let value):
                sent = true
                reply = value
            case .notSent(let error, let connecting):
                // A send that failed on a connection found broken is tried
                // once more, on a new one; a connect that fails ends it.
                if attempt == 1 || connecting { throw error }
            case .unknown(let error):
                sent = true
                if attempt == 1 { throw error }
            }
        }
        switch reply {
        case .integer(let result)?:
            return result == 1
        case .error(let message)? where message.hasPrefix("NOSCRIPT"):
            scriptSHA = nil
            return try run(commit, token: token, sent: &sent)
        case .error(let message)? where ["READONLY", "NOREPLICAS", "MASTERDOWN"].contains(where: message.hasPrefix):
            // Not a primary (any more), or one without its replicas: ask Sentinel now.
            endpoint.primaryLooksWrong("\(connection.url.address) refused a commit: \(message)")
            throw StoreError(.io, "Redis at \(connection.url.address) refused the commit of room \(commit.room): \(message)")
        case let other:
            throw StoreError(.io, "Redis refused the commit of room \(commit.room): \(other.map { "\($0)" } ?? "no reply")")
        }
    }

    /// The stream keeps the history and, when it is the longer, what a resume needs.
    var eventsKept: Int { max(historyLimit, historySize, 0) }

    /// One stream entry (`[id, [field, value, ...]]`) as an event; nil when unreadable.
    static func storedEvent(_ entry: RedisValue) -> StoredEvent? {
        let parts = entry.elements
        guard parts.count == 2, let id = parts[0].text, let seq = UInt64(id.prefix { $0 != "-" }) else { return nil }
        let fields = parts[1].elements
        var json: [UInt8]?
        var label = ""
        for index in stride(from: 0, to: fields.count - 1, by: 2) {
            switch fields[index].text {
            case "e": if case .bulk(let bytes) = fields[index + 1] { json = bytes }
            case "s": label = fields[index + 1].text ?? ""
            default: break
            }
        }
        guard let json else { return nil }
        return StoredEvent(seq: seq, json: json, dragonStatus: label)
    }

    public func close() {
        connection.close()
        reads.close()
    }
}
