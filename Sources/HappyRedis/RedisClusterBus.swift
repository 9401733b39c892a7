import CHiredis
import Foundation
import HappyCore
import Synchronization

/// The cluster bus on Redis: one subscriber connection on its own thread
/// (SUBSCRIBE per watched room), and a command connection for presence.
///
/// Presence lives in one sorted set per room, `happy:members:<room>`, whose
/// members are `<id>\t<name>` and whose scores are expiry times: every node
/// renews its own clients every `heartbeat` seconds, and sweeps out entries
/// past their expiry (publishing their `left`), so the clients of a node that
/// died leave within `presenceTTL` + `heartbeat` seconds.
///
/// Its connections follow the endpoint: when Sentinel names another primary
/// they are made again there, and every watched room is read again.
public final class RedisClusterBus: ClusterBus, @unchecked Sendable {
    public let nodeID: String
    public let endpoint: RedisEndpoint
    public static let heartbeat = 3.0
    public static let presenceTTL = 9.0
    /// A subscribed connection hears nothing when no room changes, so a
    /// link cut without a reset (packets dropped) would go unnoticed: it is
    /// pinged this often, and given up when a ping goes unanswered this long.
    static let pingInterval = 1.0
    static let pingDeadline = 3.0

    private enum Command {
        case watch(String), unwatch(String)
        case joined(String, Participant), left(String, Participant)
    }

    private let commands = Mutex<[Command]>([])
    private let wake: (read: Int32, write: Int32)
    private var thread: Thread?
    private let running = Atomic<Bool>(false)
    private var handlers: (events: @Sendable (RemoteEvents) -> Void, presence: @Sendable (RemotePresence) -> Void,
                           reconnected: @Sendable () -> Void)?

    // Subscriber-thread state.
    private var watched: Set<String> = []
    private var localMembers: [String: [String: Participant]] = [:]
    private var subscriber: RedisConnection?
    private var commandConnection: RedisConnection?
    private var lastHeartbeat = 0.0
    private var wasDisconnected = false
    private var lastPingSent = 0.0
    /// When the oldest unanswered ping was sent; nil when all were answered.
    private var pingOutstandingSince: Double?
    /// Since when (wall clock, ms) and why the subscriber is not connected; nil while connected.
    private let outage = Mutex<(since: Int64, reason: String)?>(nil)

    public var linkProblem: String? {
        outage.withLock { value in
            value.map { outage in
                let seconds = Double(SystemTime.wallMilliseconds() - outage.since) / 1000
                return "cluster subscriber disconnected from Redis at \(endpoint.current.url.address) for "
                    + "\(String(format: "%.1f", seconds)) s: \(outage.reason)"
            }
        }
    }

    private func noteOutage(_ reason: String) {
        outage.withLock { value in
            if value == nil { value = (SystemTime.wallMilliseconds(), reason) } else { value!.reason = reason }
        }
    }

    public var followedPrimary: FollowedPrimary? { endpoint.followed }

    public init(endpoint: RedisEndpoint, nodeID: String) {
        self.endpoint = endpoint
        self.nodeID = nodeID
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        wake = (fds[0], fds[1])
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    static func changesChannel(_ room: String) -> String { RedisRoomStore.channel(room) }
    static func presenceChannel(_ room: String) -> String { "happy:presence:\(room)" }
    static func membersKey(_ room: String) -> String { "happy:members:\(room)" }

    public func start(events: @escaping @Sendable (RemoteEvents) -> Void,
                      presence: @escaping @Sendable (RemotePresence) -> Void,
                      reconnected: @escaping @Sendable () -> Void) {
        handlers = (events, presence, reconnected)
        running.store(true, ordering: .sequentiallyConsistent)
        let thread = Thread { [self] in serve() }
        thread.name = "happy-cluster"
        self.thread = thread
        thread.start()
    }

    public func stop() {
        running.store(false, ordering: .sequentiallyConsistent)
        signal()
        while let thread, !thread.isFinished { Thread.sleep(forTimeInterval: 0.01) }
    }

    public func watch(room: String) { post(.watch(room)) }
    public func unwatch(room: String) { post(.unwatch(room)) }
    public func announce(joined participant: Participant, in room: String) { post(.joined(room, participant)) }
    public func announce(left participant: Participant, in room: String) { post(.left(room, participant)) }

    private func post(_ command: Command) {
        commands.withLock { $0.append(command) }
        signal()
    }

    private func signal() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    // MARK: subscriber thread

    private func serve() {
        while running.load(ordering: .sequentiallyConsistent) {
            if subscriber == nil || commandConnection == nil {
                guard connect() else {
                    drainWake()
                    applyCommandsWhileDisconnected()
                    Thread.sleep(forTimeInterval: 0.5)
                    continue
                }
            }
            if subscriber!.isStale {
                disconnected(reason: "the Redis primary moved to \(endpoint.current.url.address)")
                continue
            }
            let ready = happy_redis_wait(subscriber!.fileDescriptor, wake.read, 250)
            if ready & 2 != 0 { drainWake() }
            applyCommands()
            if ready & 1 != 0 { readMessages() }
            checkLink()
            if SystemTime.monotonicSeconds() - lastHeartbeat >= Self.heartbeat { heartbeat() }
        }
        applyCommands()  // last leaves of a clean shutdown
        subscriber?.close()
        commandConnection?.close()
    }

    /// Pings the subscribed connection; one unanswered for `pingDeadline` means the link is dead.
    private func checkLink() {
        guard let subscriber else { return }
        let now = SystemTime.monotonicSeconds()
        if let since = pingOutstandingSince, now - since > Self.pingDeadline {
            return disconnected(reason: "no answer to a ping within \(Int(Self.pingDeadline)) s")
        }
        guard now - lastPingSent >= Self.pingInterval else { return }
        lastPingSent = now
        if pingOutstandingSince == nil { pingOutstandingSince = now }
        _ = subscriber.append(["PING"])
        guard subscriber.flush() else { return disconnected(reason: "the connection broke") }
    }

    private func connect() -> Bool {
        do {
            let subscriber = try RedisConnection(endpoint: endpoint)
            let commandConnection = try RedisConnection(endpoint: endpoint)
            self.subscriber = subscriber
            self.commandConnection = commandConnection
            for room in watched {
                _ = subscriber.append(["SUBSCRIBE", Self.changesChannel(room), Self.presenceChannel(room)])
            }
            _ = subscriber.flush()
            // Members may have come and gone while we were away.
            for room in watched { renewAndSnapshot(room) }
            // Redis can go away again between the connect and the first command
            // (the kernel completes a handshake while a killed server is still closing).
            guard self.subscriber != nil, self.commandConnection != nil else { return false }
            pingOutstandingSince = nil
            lastPingSent = SystemTime.monotonicSeconds()
            outage.withLock { $0 = nil }
            if wasDisconnected {
                wasDisconnected = false
                handlers?.reconnected()
            }
            return true
        } catch {
            wasDisconnected = true
            subscriber = nil
            commandConnection = nil
            noteOutage(error.message)
            return false
        }
    }

    private func disconnected(reason: String) {
        noteOutage(reason)
        subscriber?.close()
        subscriber = nil
        commandConnection?.close()
        commandConnection = nil
        wasDisconnected = true
    }

    private func drainWake() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wake.read, &buffer, buffer.count) > 0 {}
    }

    private func takeCommands() -> [Command] {
        commands.withLock { list in
            let taken = list
            list.removeAll()
            return taken
        }
    }

    /// Keeps the bookkeeping right while Redis is away; it is replayed on reconnect.
    private func applyCommandsWhileDisconnected() {
        for command in takeCommands() { record(command) }
    }

    private func record(_ command: Command) {
        switch command {
        case .watch(let room): watched.insert(room)
        case .unwatch(let room): watched.remove(room); localMembers[room] = nil
        case .joined(let room, let p): localMembers[room, default: [:]][p.id] = p
        case .left(let room, let p): localMembers[room]?[p.id] = nil
        }
    }

    private func applyCommands() {
        for command in takeCommands() {
            record(command)
            guard let subscriber, let commandConnection else { continue }
            do {
                switch command {
                case .watch(let room):
                    _ = subscriber.append(["SUBSCRIBE", Self.changesChannel(room), Self.presenceChannel(room)])
                    guard subscriber.flush() else { return disconnected(reason: "the subscribed connection broke") }
                    renewAndSnapshot(room)
                case .unwatch(let room):
                    _ = subscriber.append(["UNSUBSCRIBE", Self.changesChannel(room), Self.presenceChannel(room)])
                    guard subscriber.flush() else { return disconnected(reason: "the subscribed connection broke") }
                case .joined(let room, let p):
                    try commandConnection.command(["ZADD", Self.membersKey(room), expiry(), member(p)])
                    try commandConnection.command(["PUBLISH", Self.presenceChannel(room), "joined\t\(nodeID)\t\(member(p))"])
                case .left(let room, let p):
                    try commandConnection.command(["ZREM", Self.membersKey(room), member(p)])
                    try commandConnection.command(["PUBLISH", Self.presenceChannel(room), "left\t\(nodeID)\t\(member(p))"])
                }
            } catch {
                return disconnected(reason: error.message)
            }
        }
    }

    private func member(_ participant: Participant) -> String { "\(participant.id)\t\(participant.name)" }

    private func participant(_ member: String) -> Participant? {
        let parts = member.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        return Participant(id: String(parts[0]), name: String(parts[1]))
    }

    private func expiry() -> String {
        String(SystemTime.wallMilliseconds() + Int64(Self.presenceTTL * 1000))
    }

    /// Renews this node's clients of `room` and reports everyone else there.
    private func renewAndSnapshot(_ room: String) {
        guard let commandConnection else { return }
        do {
            for p in (localMembers[room] ?? [:]).values {
                try commandConnection.command(["ZADD", Self.membersKey(room), expiry(), member(p)])
            }
            let now = String(SystemTime.wallMilliseconds())
            let others = try commandConnection.command(["ZRANGEBYSCORE", Self.membersKey(room), now, "+inf"]).elements
                .compactMap { $0.text.flatMap(participant) }
                .filter { localMembers[room]?[$0.id] == nil }
            handlers?.presence(.members(room: room, others))
        } catch {
            disconnected(reason: error.message)
        }
    }

    /// Renews this node's clients everywhere and sweeps out the expired.
    private func heartbeat() {
        lastHeartbeat = SystemTime.monotonicSeconds()
        guard let commandConnection else { return }
        do {
            let now = String(SystemTime.wallMilliseconds())
            for room in watched {
                for p in (localMembers[room] ?? [:]).values {
                    try commandConnection.command(["ZADD", Self.membersKey(room), expiry(), member(p)])
                }
                let expired = try commandConnection.command(["ZRANGEBYSCORE", Self.membersKey(room), "-inf", "(" + now]).elements
                for entry in expired {
                    guard let text = entry.text else { continue }
                    // Whoever removes it announces it, once.
                    if try commandConnection.command(["ZREM", Self.membersKey(room), text]).integer == 1 {
                        try commandConnection.command(["PUBLISH", Self.presenceChannel(room), "left\texpired\t\(text)"])
                    }
                }
            }
        } catch {
            disconnected(reason: error.message)
        }
    }

    private func readMessages() {
        guard let subscriber, let replies = subscriber.readAvailable() else {
            return disconnected(reason: "the subscribed connection broke")
        }
        for reply in replies {
            let parts = reply.elements
            if parts.first?.text == "pong" {
                pingOutstandingSince = nil
                continue
            }
            guard parts.count == 3, parts[0].text == "message", let channel = parts[1].text,
                  case .bulk(let payload) = parts[2] else { continue }
            if channel.hasPrefix("happy:changes:") {
                guard let events = RemoteEventsCodec.decode(payload), events.origin != nodeID else { continue }
                handlers?.events(events)
            } else if channel.hasPrefix("happy:presence:") {
                let room = String(channel.dropFirst("happy:presence:".count))
                let fields = String(decoding: payload, as: UTF8.self).split(separator: "\t", maxSplits: 2,
                                                                            omittingEmptySubsequences: false)
                guard fields.count == 3, fields[1] != Substring(nodeID),
                      let who = participant(String(fields[2])) else { continue }
                if localMembers[room]?[who.id] != nil { continue }
                handlers?.presence(fields[0] == "joined" ? .joined(room: room, who) : .left(room: room, who))
            }
        }
    }
}
