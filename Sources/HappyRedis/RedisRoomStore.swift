import Foundation
import HappyCore

/// Rooms in Redis, shared by every node: per room a hash (epoch, seq, scene)
/// and a stream of the last `historySize` events (ids `<seq>-1`). A commit is
/// one Lua script per room that checks the seq it was built on
/// (compare-and-set), writes state and events, and publishes them to the
/// other nodes; a room that moved on comes back as a conflict with its
/// current state, for the node to apply its intents again.
public final class RedisRoomStore: RoomStore, @unchecked Sendable {
    public let url: RedisURL
    public let nodeID: String
    public let historySize: Int
    private let connection: RedisConnection
    private var scriptSHA: String?
    private var commitCounter: UInt64 = 0

    static let commitScript = """
        local epoch = redis.call('HGET', KEYS[1], 'epoch')
        local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
        local base = tonumber(ARGV[2])
        if epoch then
          if epoch ~= ARGV[1] or seq ~= base then return 0 end
        else
          if base ~= 0 then return 0 end
          redis.call('DEL', KEYS[2])
        end
        redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'seq', ARGV[3], 'scene', ARGV[4], 'commit', ARGV[8])
        local keep = tonumber(ARGV[5])
        for i = 9, #ARGV do
          if keep > 0 then
            redis.call('XADD', KEYS[2], 'MAXLEN', '=', keep, (base + i - 8) .. '-1', 'e', ARGV[i])
          end
        end
        if #ARGV >= 9 then redis.call('PUBLISH', ARGV[6], ARGV[7]) end
        return 1
        """

    /// The scene of a room nobody has used yet.
    public let defaults: Scene

    static let createScript = """
        if redis.call('EXISTS', KEYS[1]) == 0 then
          redis.call('DEL', KEYS[2])
          redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'seq', '0', 'scene', ARGV[2])
        end
        return 1
        """

    public init(url: RedisURL, nodeID: String, historySize: Int, defaults: Scene) throws(StoreError) {
        self.url = url
        self.nodeID = nodeID
        self.historySize = historySize
        self.defaults = defaults
        connection = try RedisConnection(url: url)
        try loadScript()
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
            throw StoreError(.io, "Redis at \(url.host):\(url.port) did not load the commit script: \(reply)")
        }
        scriptSHA = sha
    }

    /// Loads a room, creating it first when Redis has none: nodes opening a
    /// new room at the same moment then agree on one epoch.
    public func loadRoom(named name: String) throws(StoreError) -> StoredRoom? {
        var fields = try connection.command(["HMGET", Self.roomKey(name), "epoch", "seq", "scene"]).elements
        if fields.count == 3, fields[0].text == nil {
            try connection.command(bytes: [
                Array("EVAL".utf8), Array(Self.createScript.utf8), Array("2".utf8),
                Array(Self.roomKey(name).utf8), Array(Self.eventsKey(name).utf8),
                Array(Identifiers.newEpoch().utf8), ServerMessageEncoder.sceneJSON(defaults),
            ])
            fields = try connection.command(["HMGET", Self.roomKey(name), "epoch", "seq", "scene"]).elements
        }
        guard fields.count == 3, let epoch = fields[0].text else { return nil }
        guard let seq = fields[1].integer, let sceneText = fields[2].text,
              let json = try? JSONParser.parse(sceneText), let scene = Scene(json: json) else {
            throw StoreError(.damaged, "room \(name) in Redis is damaged (happy:room:\(name) has no readable seq or scene)")
        }
        var history: [StoredEvent] = []
        if historySize > 0 {
            let entries = try connection.command(["XRANGE", Self.eventsKey(name), "-", "+"]).elements
            for entry in entries {
                let parts = entry.elements
                guard parts.count == 2, let id = parts[0].text, let eventSeq = UInt64(id.split(separator: "-")[0]),
                      case .bulk(let payload) = parts[1].elements.last ?? .null else { continue }
                history.append(StoredEvent(seq: eventSeq, json: payload))
            }
            history = history.filter { $0.seq <= UInt64(seq) && $0.seq + UInt64(historySize) > UInt64(seq) }
        }
        return StoredRoom(name: name, epoch: epoch, seq: UInt64(seq), scene: scene, history: history)
    }

    @discardableResult
    public func commit(_ commits: [RoomCommit]) throws(StoreError) -> [CommitConflict] {
        var conflicts: [CommitConflict] = []
        for commit in commits {
            commitCounter += 1
            let token = "\(nodeID):\(commitCounter)"
            if try !run(commit, token: token) {
                // A commit whose reply was lost in a broken connection was sent
                // again and "conflicted" with itself: the token says it landed.
                let landed = try connection.command(["HGET", Self.roomKey(commit.room), "commit"]).text == token
                if !landed {
                    conflicts.append(CommitConflict(room: commit.room, current: try loadRoom(named: commit.room)))
                }
            }
        }
        return conflicts
    }

    /// One room's compare-and-set; false on a conflict.
    private func run(_ commit: RoomCommit, token: String) throws(StoreError) -> Bool {
        if scriptSHA == nil { try loadScript() }
        let message = RemoteEventsCodec.encode(RemoteEvents(
            origin: nodeID, room: commit.room, epoch: commit.epoch, seq: commit.seq, scene: commit.scene,
            events: commit.events))
        var arguments: [[UInt8]] = [
            Array("EVALSHA".utf8), Array(scriptSHA!.utf8), Array("2".utf8),
            Array(Self.roomKey(commit.room).utf8), Array(Self.eventsKey(commit.room).utf8),
            Array(commit.epoch.utf8), Array(String(commit.baseSeq).utf8), Array(String(commit.seq).utf8),
            ServerMessageEncoder.sceneJSON(commit.scene), Array(String(historySize).utf8),
            Array(Self.channel(commit.room).utf8), message, Array(token.utf8),
        ]
        arguments += commit.events.map(\.json)
        switch try connection.command(bytes: arguments) {
        case .integer(let result):
            return result == 1
        case .error(let message) where message.hasPrefix("NOSCRIPT"):
            scriptSHA = nil
            return try run(commit, token: token)
        case let other:
            throw StoreError(.io, "Redis refused the commit of room \(commit.room): \(other)")
        }
    }

    public func close() {
        connection.close()
    }
}
