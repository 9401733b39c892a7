import CHiredis
import Foundation
import HappyCore
import Synchronization

/// The primary that Redis Sentinel names (`redis+sentinel://`). Found at start
/// by asking the sentinels, then followed on a thread of its own: each
/// sentinel's `+switch-master` announcement (subscribed on every sentinel),
/// a check of the topology every `checkInterval` seconds in case one was
/// missed, and one at once when a connection finds the primary gone or
/// refusing as a primary would not.
///
/// A check asks every sentinel which address it names and moves only when
/// the primary followed no longer answers `ROLE` as a primary, or no
/// sentinel names it any more: a sentinel that has not heard of a failover
/// yet must not send the node back to an old primary cut off from its replicas.
public final class SentinelRedisEndpoint: RedisEndpoint, @unchecked Sendable {
    public let address: RedisSentinelURL
    static let checkInterval = 2.0
    /// The shortest time between two checks asked for by connections.
    static let soonestCheck = 0.25
    /// For each question to a sentinel or a candidate primary.
    static let probeTimeout = 0.5

    private struct Followed {
        var primary: RedisURL
        var generation: UInt64 = 1
        var switches = 0
        var lastSwitch: Int64?
    }

    private let state: Mutex<Followed>
    private let checkWanted = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)
    private let wake: (read: Int32, write: Int32)
    private var thread: Thread?
    /// Told of each switch, on the endpoint's thread: from, to, why.
    private let onSwitch: @Sendable (String, String, String) -> Void

    // The endpoint thread's own.
    private var queries: [RedisConnection?]
    private var subscribers: [RedisConnection?]
    private var lastSubscribeAttempt: [Double]
    private var lastCheck = 0.0

    /// Asks the sentinels for the primary; throws when none names one that answers as a primary.
    public init(_ address: RedisSentinelURL,
                onSwitch: @escaping @Sendable (_ from: String, _ to: String, _ why: String) -> Void = { _, _, _ in })
        throws(StoreError) {
        self.address = address
        self.onSwitch = onSwitch
        queries = Array(repeating: nil, count: address.sentinels.count)
        subscribers = Array(repeating: nil, count: address.sentinels.count)
        lastSubscribeAttempt = Array(repeating: 0, count: address.sentinels.count)
        state = Mutex(Followed(primary: address.primary(host: "", port: 0)))
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        wake = (fds[0], fds[1])
        let found = discover(current: nil)
        guard let primary = found.primary else {
            throw StoreError(.unreachable, "no sentinel of cluster.redis names a primary for \"\(address.master)\" "
                + "that answers as one: \(found.problems.joined(separator: "; ")); "
                + "check that the sentinels run and monitor \"\(address.master)\"")
        }
        state.withLock { $0.primary = primary }
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    private var sentinelNames: [String] { address.sentinels.map { "\($0.host):\($0.port)" } }

    public var current: (url: RedisURL, generation: UInt64) {
        state.withLock { ($0.primary, $0.generation) }
    }

    public var followed: FollowedPrimary {
        state.withLock {
            FollowedPrimary(address: $0.primary.address, source: "sentinel \(address.master)",
                            switches: $0.switches, lastSwitchMilliseconds: $0.lastSwitch)
        }
    }

    public func primaryLooksWrong(_ reason: String) {
        checkWanted.store(true, ordering: .sequentiallyConsistent)
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// Starts following the sentinels' announcements and checking on its own.
    public func start() {
        running.store(true, ordering: .sequentiallyConsistent)
        let thread = Thread { [self] in serve() }
        thread.name = "happy-sentinel"
        self.thread = thread
        thread.start()
    }

    public func stop() {
        running.store(false, ordering: .sequentiallyConsistent)
        primaryLooksWrong("stopping")
        while let thread, !thread.isFinished { Thread.sleep(forTimeInterval: 0.01) }
    }

    // MARK: the endpoint's thread

    private func serve() {
        lastCheck = SystemTime.monotonicSeconds()
        while running.load(ordering: .sequentiallyConsistent) {
            subscribe()
            var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            let listening = subscribers.indices.filter { subscribers[$0] != nil }
            fds += listening.map { pollfd(fd: subscribers[$0]!.fileDescriptor, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 250)
            if fds[0].revents != 0 { drainWake() }
            for (slot, index) in listening.enumerated() where fds[slot + 1].revents != 0 {
                readAnnouncements(from: index)
            }
            let now = SystemTime.monotonicSeconds()
            if now - lastCheck >= Self.checkInterval
                || (checkWanted.load(ordering: .sequentiallyConsistent) && now - lastCheck >= Self.soonestCheck) {
                check()
            }
        }
        subscribers.indices.forEach { subscribers[$0] = nil }
        queries.indices.forEach { queries[$0] = nil }
    }

    private func drainWake() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wake.read, &buffer, buffer.count) > 0 {}
    }

    /// Subscribes to `+switch-master` on each sentinel not subscribed yet (one try a second each).
    private func subscribe() {
        let now = SystemTime.monotonicSeconds()
        for (index, sentinel) in address.sentinels.enumerated() where subscribers[index] == nil {
            guard now - lastSubscribeAttempt[index] >= 1 else { continue }
            lastSubscribeAttempt[index] = now
            guard let connection = try? RedisConnection(url: RedisURL(host: sentinel.host, port: sentinel.port),
                                                        timeout: Self.probeTimeout),
                  connection.append(["SUBSCRIBE", "+switch-master"]), connection.flush() else { continue }
            subscribers[index] = connection
        }
    }

    /// `+switch-master` messages: `<master> <old ip> <old port> <new ip> <new port>`.
    private func readAnnouncements(from index: Int) {
        guard let replies = subscribers[index]?.readAvailable() else {
            subscribers[index] = nil
            return
        }
        for reply in replies {
            let parts = reply.elements
            guard parts.count == 3, parts[0].text == "message", let text = parts[2].text else { continue }
            let fields = text.split(separator: " ")
            guard fields.count == 5, fields[0] == Substring(address.master), let port = Int(fields[4]) else { continue }
            switchTo(address.primary(host: String(fields[3]), port: port),
                     why: "+switch-master from sentinel \(sentinelNames[index])")
        }
    }

    private func check() {
        lastCheck = SystemTime.monotonicSeconds()
        checkWanted.store(false, ordering: .sequentiallyConsistent)
        let found = discover(current: current.url)
        if let primary = found.primary, primary.address != current.url.address {
            switchTo(primary, why: "sentinels name it: \(found.problems.joined(separator: "; "))")
        }
    }

    private func switchTo(_ primary: RedisURL, why: String) {
        let previous = state.withLock { followed -> String? in
            guard followed.primary.address != primary.address else { return nil }
            let previous = followed.primary.address
            followed.primary = primary
            followed.generation += 1
            followed.switches += 1
            followed.lastSwitch = SystemTime.wallMilliseconds()
            return previous
        }
        if let previous { onSwitch(previous, primary.address, why) }
    }

    // MARK: asking the sentinels

    /// The primary to follow: `current` while it still answers as a primary
    /// and a sentinel names it, else the address most sentinels name that
    /// answers as a primary. `problems` says what was wrong on the way.
    private func discover(current: RedisURL?) -> (primary: RedisURL?, problems: [String]) {
        var votes: [String: (url: RedisURL, count: Int)] = [:]
        var problems: [String] = []
        for index in address.sentinels.indices {
            do throws(StoreError) {
                if queries[index] == nil {
                    let sentinel = address.sentinels[index]
                    queries[index] = try RedisConnection(url: RedisURL(host: sentinel.host, port: sentinel.port),
                                                         timeout: Self.probeTimeout)
                }
                let reply = try queries[index]!.command(["SENTINEL", "get-master-addr-by-name", address.master])
                let parts = reply.elements
                guard parts.count == 2, let host = parts[0].text, let port = parts[1].text.flatMap(Int.init) else {
                    problems.append("sentinel \(sentinelNames[index]) does not know \"\(address.master)\" (\(reply))")
                    continue
                }
                let url = address.primary(host: host, port: port)
                votes[url.address, default: (url, 0)].count += 1
            } catch {
                queries[index] = nil
                problems.append("sentinel \(sentinelNames[index]): \(error.message)")
            }
        }
        if let current, votes[current.address] != nil {
            let role = self.role(of: current)
            if role == "master" { return (current, problems) }
            problems.append("\(current.address) is \(role)")
        } else if let current {
            problems.append("\(current.address) is named by no sentinel")
        }
        let ranked = votes.values.sorted { a, b in a.count != b.count ? a.count > b.count : a.url.address < b.url.address }
        for candidate in ranked where candidate.url.address != current?.address {
            let role = self.role(of: candidate.url)
            if role == "master" { return (candidate.url, problems) }
            problems.append("\(candidate.url.address), named by \(candidate.count) sentinel(s), is \(role)")
        }
        return (nil, problems)
    }

    /// What `url` says it is (`master`, `slave`), or why it did not say.
    private func role(of url: RedisURL) -> String {
        do throws(StoreError) {
            let connection = try RedisConnection(url: url, timeout: Self.probeTimeout)
            let reply = try connection.command(["ROLE"])
            return reply.elements.first?.text ?? "not answering ROLE (\(reply))"
        } catch {
            return "unreachable (\(error.message))"
        }
    }
}
