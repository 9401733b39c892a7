/// Events another node recorded in a shared store, as published to the others.
public struct RemoteEvents: Equatable, Sendable {
    /// The node that recorded the events (its `nodeID`); a node skips its own.
    public var origin: String
    /// The room's name.
    public var room: String
    /// The room's epoch.
    public var epoch: String
    /// The room's seq and scene after the last of `events`.
    public var seq: UInt64
    /// The room's scene after the last of `events`.
    public var scene: Scene
    /// The new events, oldest first, exactly as broadcast; their seqs run up to `seq`.
    public var events: [StoredEvent]

    /// A message from its parts.
    public init(origin: String, room: String, epoch: String, seq: UInt64, scene: Scene, events: [StoredEvent]) {
        self.origin = origin
        self.room = room
        self.epoch = epoch
        self.seq = seq
        self.scene = scene
        self.events = events
    }
}

/// Presence news from the cluster.
public enum RemotePresence: Equatable, Sendable {
    /// Everyone in the room on other nodes, right after watching it.
    case members(room: String, [Participant])
    /// A client joined the room on another node.
    case joined(room: String, Participant)
    /// A client left the room on another node (or that node stopped renewing it).
    case left(room: String, Participant)
}

/// How nodes sharing rooms hear of each other: events and presence of the
/// rooms they watch (every room a node holds in memory). Calls may come from any
/// thread; handlers run on the bus's own thread.
public protocol ClusterBus: AnyObject, Sendable {
    /// This node's identity, unique in the cluster.
    var nodeID: String { get }

    /// Starts the bus and sets its handlers: `events` for what other nodes record in
    /// watched rooms, `presence` for their clients, `reconnected` after an outage (the
    /// rooms in memory may have missed events). Called once.
    func start(events: @escaping @Sendable (RemoteEvents) -> Void,
               presence: @escaping @Sendable (RemotePresence) -> Void,
               reconnected: @escaping @Sendable () -> Void)
    /// Starts hearing `room`'s events and presence; the server watches every room it holds in memory.
    func watch(room: String)
    /// Stops hearing `room` (it left this node's memory).
    func unwatch(room: String)
    /// Tells the other nodes that `participant` joined `room` on this node (observers are not announced).
    func announce(joined participant: Participant, in room: String)
    /// Tells the other nodes that `participant` left `room` on this node.
    func announce(left participant: Participant, in room: String)
    /// Stops the bus at shutdown.
    func stop()
    /// Why the bus cannot hear other nodes right now (and since when), or
    /// nil while it is connected; read from any thread.
    var linkProblem: String? { get }
    /// The shared store's primary this node follows, and when it last
    /// switched; nil when the bus has none to tell. Read from any thread.
    var followedPrimary: FollowedPrimary? { get }
}

extension ClusterBus {
    /// Default: no problem to report.
    public var linkProblem: String? { nil }
    /// Default: no primary to report.
    public var followedPrimary: FollowedPrimary? { nil }
}

/// Which primary a node follows (for `/healthz` and `/metrics`).
public struct FollowedPrimary: Equatable, Sendable {
    /// `host:port`.
    public var address: String
    /// How it was found: `sentinel <master>` or `fixed`.
    public var source: String
    /// Times this node moved to another primary since it started.
    public var switches: Int
    /// When it last moved (wall clock, ms); nil before the first switch.
    public var lastSwitchMilliseconds: Int64?

    /// A report from its parts.
    public init(address: String, source: String, switches: Int = 0, lastSwitchMilliseconds: Int64? = nil) {
        self.address = address
        self.source = source
        self.switches = switches
        self.lastSwitchMilliseconds = lastSwitchMilliseconds
    }

    /// One line for `/healthz`.
    public func healthLine(now: Int64 = SystemTime.wallMilliseconds()) -> String {
        var line = "redis primary \(address) (\(source))"
        if let last = lastSwitchMilliseconds {
            let tenths = max(0, now - last) / 100
            let ago = "\(tenths / 10).\(tenths % 10)"
            line += ", switched \(switches) time\(switches == 1 ? "" : "s"), last \(ago) s ago"
        } else {
            line += ", never switched"
        }
        return line
    }

    /// Its samples in the Prometheus text format.
    public var prometheusText: String {
        // A host name or address holds no quote or backslash to escape.
        let last = lastSwitchMilliseconds.map { "\($0 / 1000).\(String(1000 + $0 % 1000).dropFirst())" } ?? "0"
        return """
            # HELP happy_redis_primary_info The Redis primary this node follows (value 1).
            # TYPE happy_redis_primary_info gauge
            happy_redis_primary_info{address="\(address)",source="\(source)"} 1
            # HELP happy_redis_primary_switches_total Times this node moved to another Redis primary.
            # TYPE happy_redis_primary_switches_total counter
            happy_redis_primary_switches_total \(switches)
            # HELP happy_redis_primary_last_switch_timestamp_seconds When this node last moved to another Redis primary (0: never).
            # TYPE happy_redis_primary_last_switch_timestamp_seconds gauge
            happy_redis_primary_last_switch_timestamp_seconds \(last)

            """
    }
}

/// The text form of published events: one line each for origin, room, epoch,
/// seq and scene, then one event JSON per line (JSON never holds a raw newline).
public enum RemoteEventsCodec {
    /// The published form of `events`.
    public static func encode(_ events: RemoteEvents) -> [UInt8] {
        var bytes: [UInt8] = []
        for line in [events.origin, events.room, events.epoch, String(events.seq)] {
            bytes += Array(line.utf8)
            bytes.append(0x0A)
        }
        bytes += ServerMessageEncoder.sceneJSON(events.scene)
        for event in events.events {
            bytes.append(0x0A)
            bytes += event.json
        }
        return bytes
    }

    /// Reads a published message; nil when it is malformed. The events are
    /// numbered consecutively, the last one `seq`.
    public static func decode(_ bytes: [UInt8]) -> RemoteEvents? {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard lines.count >= 5, let seq = UInt64(String(decoding: lines[3], as: UTF8.self)),
              let sceneJSON = try? JSONParser.parse(Array(lines[4])), let scene = Scene(json: sceneJSON) else {
            return nil
        }
        var events: [StoredEvent] = []
        guard UInt64(lines.count - 5) <= seq, seq < UInt64.max else { return nil }
        let first = seq + 1 - UInt64(lines.count - 5)
        for (index, line) in lines.dropFirst(5).enumerated() {
            events.append(StoredEvent(seq: first + UInt64(index), json: Array(line)))
        }
        return RemoteEvents(origin: String(decoding: lines[0], as: UTF8.self), room: String(decoding: lines[1], as: UTF8.self),
                            epoch: String(decoding: lines[2], as: UTF8.self), seq: seq, scene: scene, events: events)
    }
}
