import Foundation
import Glibc
import HappyCore
import Synchronization

/// The upgrade workload's shape (`--upgrade-*`).
struct UpgradeShape {
    var clients = 1000
    var writers = 100
    /// Intents a second per writer.
    var rate = 5.0
    var upgrades = 5
    var rooms = 10
    /// Seconds between upgrades (and before the first).
    var interval = 6.0
}

/// Upgrades that nobody notices (issue: run it as a service): clients in
/// rooms, some writing, while the server is upgraded in place (SIGUSR2)
/// several times in a row. Shows that no connection attempt is refused,
/// that no acked intent is lost or applied twice, that every client comes
/// back resumed (`recovered: true`) with no gap in its seqs, and how long
/// writes pause at each upgrade (from the last ack before it to the first after).
final class UpgradeWorkload: @unchecked Sendable {
    let port: Int
    private let loops: [CrowdSocketLoop]
    private let tallies: [UpgradeTally]
    private let closing = Atomic<Bool>(false)
    private let welcomed = Atomic<Int>(0)

    var isClosing: Bool { closing.load(ordering: .relaxed) }

    private init(port: Int, loops: [CrowdSocketLoop]) {
        self.port = port
        self.loops = loops
        tallies = loops.map { _ in UpgradeTally() }
    }

    func loop(for index: Int) -> CrowdSocketLoop { loops[index % loops.count] }
    func tally(for index: Int) -> UpgradeTally { tallies[index % tallies.count] }
    func didWelcome() { welcomed.add(1, ordering: .relaxed) }

    func after(_ seconds: Double, _ body: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: body)
    }

    /// What one run showed, and whether it met the issue's bar.
    struct Result {
        var lines: [String]
        var json: [String: Any]
        var passed: Bool
    }

    static func run(server binary: String, web: String, shape: UpgradeShape, cpu: Int?) throws -> Result {
        let server = try ServerUnderTest(binary: binary, settings: [
            "webRoot": web, "log": ["level": "info"],
            "limits": ["maxConnectionsPerAddress": 0, "maxClients": 20000, "maxRooms": 1000],
        ], cpu: cpu)
        defer { server.stopAll() }
        let workload = UpgradeWorkload(port: server.port, loops: try (0..<2).map { try CrowdSocketLoop(name: "upgrade.\($0)") })
        let clients = (0..<shape.clients).map { index in
            UpgradeClient(index: index, room: "room\(index % shape.rooms)",
                          writer: index < shape.writers ? index : nil, workload: workload,
                          tally: workload.tally(for: index))
        }
        for client in clients { workload.loop(for: client.index).perform { client.connect() } }
        let joinDeadline = Date(timeIntervalSinceNow: 60)
        while workload.welcomed.load(ordering: .relaxed) < shape.clients && Date() < joinDeadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        guard workload.welcomed.load(ordering: .relaxed) == shape.clients else {
            throw BenchError("upgrade: only \(workload.welcomed.load(ordering: .relaxed)) of \(shape.clients) clients joined")
        }
        progress("upgrade: \(shape.clients) clients in \(shape.rooms) rooms, \(shape.writers) writing \(shape.rate)/s; upgrades ")

        // Writers, one intent at a time round the writers, on their loops.
        let pacing = Atomic<Bool>(true)
        let writers = Array(clients.prefix(shape.writers))
        let pacer = Thread {
            let step = 1 / (Double(shape.writers) * shape.rate)
            var next = DispatchTime.now().uptimeNanoseconds
            var turn = 0
            while pacing.load(ordering: .relaxed) {
                let writer = writers[turn % writers.count]
                workload.loop(for: writer.index).perform { writer.sendIntent() }
                turn += 1
                next += UInt64(step * 1e9)
                let now = DispatchTime.now().uptimeNanoseconds
                if next > now { usleep(UInt32((next - now) / 1000)) }
            }
        }
        pacer.start()

        var upgradeTimes: [UInt64] = []
        var handovers: [Double] = []
        for number in 1...shape.upgrades {
            Thread.sleep(forTimeInterval: shape.interval)
            let old = try server.currentPid()
            let started = CrowdDriver.now()
            upgradeTimes.append(started)
            kill(old, SIGUSR2)
            let deadline = Date(timeIntervalSinceNow: 30)
            while Date() < deadline, (try? server.currentPid()) == old || server.processExists(old) {
                Thread.sleep(forTimeInterval: 0.01)
            }
            guard !server.processExists(old) else { throw BenchError("upgrade \(number): the old server did not stop") }
            handovers.append(Double(CrowdDriver.now() - started) / 1e9)
            progress(".")
        }
        Thread.sleep(forTimeInterval: shape.interval)
        pacing.store(false, ordering: .relaxed)
        pacer.cancel()
        Thread.sleep(forTimeInterval: 1)
        workload.closing.store(true, ordering: .relaxed)
        for loop in workload.loops { loop.shutdown() }
        progress("\n")
        return try workload.report(shape: shape, server: server, upgradeTimes: upgradeTimes, handovers: handovers)
    }

    private func report(shape: UpgradeShape, server: ServerUnderTest, upgradeTimes: [UInt64], handovers: [Double])
        throws -> Result {
        let sum = { (key: KeyPath<UpgradeTally, Int>) in self.tallies.reduce(0) { $0 + $1[keyPath: key] } }
        let first = { (key: KeyPath<UpgradeTally, String?>) in self.tallies.compactMap { $0[keyPath: key] }.first }
        let acks = tallies.flatMap(\.acks).sorted { $0.at < $1.at }
        let duplicates = Dictionary(grouping: acks, by: { "\($0.writer)/\($0.id)" }).values.filter { $0.count > 1 }.count
        let (lost, unacked) = try Self.checkHistory(acks: acks, shape: shape, port: server.port)
        let restarts = tallies.flatMap(\.writerRestarts).sorted()
        let windows = upgradeTimes.map { start -> (pause: Double, slowest: Double, slowestAt: Double) in
            let end = start + UInt64(shape.interval * 1e9)
            let window = acks.filter { $0.at + 1_000_000_000 >= start && $0.at <= end }
            let gaps = zip(window, window.dropFirst()).map { (from: $0.at, ms: Double($1.at - $0.at) / 1e6) }
            // The pause: from the last ack before the handover (the first 1012) to the first ack after it.
            guard let handover = restarts.first(where: { $0 > start && $0 < end }),
                  let pause = gaps.first(where: { $0.from <= handover && $0.from + UInt64($0.ms * 1e6) > handover }) else {
                return (gaps.map(\.ms).max() ?? 0, 0, 0)
            }
            // Besides, the longest wait between acks in the second after it (while everyone comes back).
            let after = gaps.filter { $0.from >= handover && $0.from < handover + 1_000_000_000 }
            let slowest = after.max { $0.ms < $1.ms }
            return (pause.ms, slowest?.ms ?? 0, slowest.map { Double($0.from - handover) / 1e6 } ?? 0)
        }
        let pauses = windows.map(\.pause).sorted()
        let sentAt = tallies.reduce(into: [String: UInt64]()) { $0.merge($1.sentAt) { a, _ in a } }
        let breakdown = Self.breakdown(upgradeTimes: upgradeTimes, acks: acks.map { ($0.at, sentAt[$0.id] ?? 0) },
                                       restarts: restarts,
                                       rejoins: tallies.flatMap { zip($0.writerRejoins, $0.writerReconnectStarts) }
                                           .sorted { $0.0 < $1.0 }, interval: shape.interval)
        let median = pauses.isEmpty ? 0 : pauses[pauses.count / 2]
        let p99 = pauses.last ?? 0
        let expectedRejoins = shape.clients * shape.upgrades
        var checks: [(String, Bool)] = [
            ("connection attempts refused: \(sum(\.refused))" + (first(\.firstRefusal).map { " (\($0))" } ?? ""), sum(\.refused) == 0),
            ("clients dropped (not by 1012): \(sum(\.dropped))" + (first(\.firstDrop).map { " (\($0))" } ?? ""), sum(\.dropped) == 0),
            ("1012 closes: \(sum(\.restarts)) of \(expectedRejoins)", sum(\.restarts) == expectedRejoins),
            ("rejoins resumed (recovered: true): \(sum(\.recovered)) of \(sum(\.rejoins))",
             sum(\.recovered) == sum(\.rejoins) && sum(\.rejoins) == expectedRejoins),
            ("gaps in a client's seqs: \(sum(\.gaps))" + (first(\.firstGap).map { " (\($0))" } ?? ""), sum(\.gaps) == 0),
            ("acked intents lost: \(lost), applied twice: \(duplicates) (of \(acks.count) acked)", lost == 0 && duplicates == 0),
            ("intents applied without their ack: \(unacked)", unacked == 0),
            (String(format: "write pause per upgrade: median %.0f ms (≤ 100), p99 %.0f ms (≤ 300); each: %@", median, p99,
                    pauses.map { String(format: "%.0f", $0) }.joined(separator: " ")), median <= 100 && p99 <= 300),
        ]
        checks.append(("intents refused unavailable while the store changed hands, sent again after the rejoin: \(sum(\.resent))", true))
        checks.append(("errors: \(sum(\.errors))" + (first(\.firstError).map { " (\($0))" } ?? ""), sum(\.errors) == 0))
        let lines = checks.map { "  \($0.1 ? "ok  " : "FAIL") \($0.0)" }
            + [String(format: "  upgrades took %@ s (SIGUSR2 to the old process gone)",
                      handovers.map { String(format: "%.2f", $0) }.joined(separator: " ")),
               "  phases (ms, from the server's log): " + Self.phases(server.logText),
               "  longest wait between acks in the second after each handover (ms, at ms after it): "
                   + windows.map { String(format: "%.0f at %.0f", $0.slowest, $0.slowestAt) }.joined(separator: "  "),
               "  pause made of (ms): last ack before → a writer's first 1012 → a writer back (its jitter/its connection) → first intent sent after → its ack: "
                   + breakdown]
        let json: [String: Any] = [
            "clients": shape.clients, "writers": shape.writers, "rate": shape.rate, "upgrades": shape.upgrades,
            "refused": sum(\.refused), "dropped": sum(\.dropped), "restarts": sum(\.restarts),
            "rejoins": sum(\.rejoins), "recovered": sum(\.recovered), "gaps": sum(\.gaps), "acks": acks.count,
            "lost": lost, "duplicated": duplicates, "appliedWithoutAck": unacked, "resentAfterUnavailable": sum(\.resent),
            "pauseMs": pauses, "pauseMedianMs": median, "pauseP99Ms": p99, "handoverSeconds": handovers,
            "longestAckWaitAfterMs": windows.map(\.slowest),
        ]
        return Result(lines: lines, json: json, passed: checks.allSatisfy(\.1))
    }

    /// Where each pause went: from the last ack before it to the first writer's 1012,
    /// to the first writer welcomed back, to the first intent sent after that, to its ack.
    static func breakdown(upgradeTimes: [UInt64], acks: [(at: UInt64, sent: UInt64)], restarts: [UInt64],
                          rejoins: [(at: UInt64, started: UInt64)], interval: Double) -> String {
        upgradeTimes.compactMap { start -> String? in
            let end = start + UInt64(interval * 1e9)
            guard let restart = restarts.first(where: { $0 > start && $0 < end }),
                  let lastAck = acks.last(where: { $0.at <= restart }),
                  let rejoin = rejoins.first(where: { $0.at > restart && $0.at < end }),
                  let nextAck = acks.first(where: { $0.at > rejoin.at }) else { return nil }
            let ms = { (from: UInt64, to: UInt64) in String(format: "%.0f", Double(Int64(bitPattern: to &- from)) / 1e6) }
            return "\(ms(lastAck.at, restart))+\(ms(restart, rejoin.started))/\(ms(rejoin.started, rejoin.at))"
                + "+\(ms(rejoin.at, nextAck.sent))+\(ms(nextAck.sent, nextAck.at))"
        }.joined(separator: "  ")
    }

    /// From each `started the new process` line: to `ready`, to `store released`, to `serves`, to `stopped`.
    static func phases(_ log: String) -> String {
        let marks = ["upgrade: started the new process", "upgrade: the new process is ready", "upgrade: store released",
                     "upgrade: the new process serves", " stopped "]
        var runs: [[Double]] = []
        for line in log.split(separator: "\n") {
            guard let mark = marks.firstIndex(where: { line.contains($0) }),
                  let stamp = line.split(separator: " ").first, let time = Self.seconds(of: String(stamp)) else { continue }
            if mark == 0 { runs.append([time]) } else if var run = runs.popLast(), run.count == mark {
                run.append(time)
                runs.append(run)
            } else if let run = runs.last, run.count != mark { continue }
        }
        return runs.map { run in
            zip(run, run.dropFirst()).map { String(format: "%.0f", ($1 - $0) * 1000) }.joined(separator: "/")
        }.joined(separator: "  ")
    }

    /// Seconds of the day of a log line's `2026-12-06T21:24:52.405Z`.
    private static func seconds(of stamp: String) -> Double? {
        guard let t = stamp.firstIndex(of: "T") else { return nil }
        let parts = stamp[stamp.index(after: t)...].dropLast().split(separator: ":")
        guard parts.count == 3, let h = Double(parts[0]), let m = Double(parts[1]), let s = Double(parts[2]) else { return nil }
        return h * 3600 + m * 60 + s
    }

    /// Reads every room's history from the server that is left: an acked
    /// intent is lost when the seq of its ack holds no event of its writer;
    /// events of a writer beyond its acks were applied without one.
    private static func checkHistory(acks: [(writer: Int, id: String, seq: UInt64, result: String, at: UInt64)],
                                     shape: UpgradeShape, port: Int) throws -> (lost: Int, unacked: Int) {
        let http = KeepAliveHTTP(port: port)
        var lost = 0
        var unacked = 0
        for room in 0..<shape.rooms {
            var senders: [UInt64: String] = [:]
            var since: UInt64 = 0
            while true {
                let page = try http.get("/api/history?room=room\(room)&since=\(since)&limit=1000")
                guard page.status == 200, let json = try? JSONParser.parse(page.body),
                      let events = json["events"]?.arrayValue else {
                    throw BenchError("upgrade: the history of room\(room) could not be read (\(page.status))")
                }
                for event in events {
                    guard let seq = event["seq"]?.doubleValue else { continue }
                    senders[UInt64(seq)] = event["sender"]?["name"]?.stringValue ?? ""
                }
                guard let last = events.last?["seq"]?.doubleValue, events.count == 1000 else { break }
                since = UInt64(last)
            }
            let roomAcks = acks.filter { $0.writer % shape.rooms == room }
            for ack in roomAcks where senders[ack.seq] != "writer\(ack.writer)" { lost += 1 }
            let byWriter = Dictionary(grouping: senders.values, by: { $0 })
            for (name, events) in byWriter where name.hasPrefix("writer") {
                let acked = roomAcks.filter { "writer\($0.writer)" == name }.count
                unacked += max(0, events.count - acked)
            }
        }
        return (lost, unacked)
    }
}

extension JSONValue {
    fileprivate var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }
}

extension ServerUnderTest {
    /// The pid of the happyserver serving this run's configuration now (it changes with each upgrade).
    func currentPid() throws -> Int32 {
        let config = directory.appendingPathComponent("config.json").path
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap(Int32.init) ?? []
        let serving = pids.filter { pid in
            guard let command = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")) else { return false }
            let words = command.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return words.contains(config) && words.contains { $0.hasSuffix("happyserver") }
        }
        guard let newest = serving.max() else { throw BenchError("no happyserver serves \(config)") }
        return newest
    }

    func processExists(_ pid: Int32) -> Bool {
        // A zombie (exited, not yet reaped by its parent) has stopped serving.
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        return !status.contains("State:\tZ")
    }

    /// Stops whichever process serves now, then the original's bookkeeping.
    func stopAll() {
        if let pid = try? currentPid(), pid != self.pid { kill(pid, SIGTERM) }
        stop()
    }
}

/// Progress on standard error, as it happens (standard output is buffered).
private func progress(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
}
