import Foundation
import HappyClientKit

/// History and replay (PROTOCOL.md section 11) on the default store, SQLite
/// with fsync: a room filled to `persistence.historyLimit` events, then the
/// reads of its past timed one request at a time, the database's size as
/// pruning keeps it at the limit, and what recording the history costs the
/// intent throughput.
extension Workloads {
    static let historyRoom = "history"
    /// Writers and intents in flight each while filling: enough for the
    /// server to group many intents in each commit.
    static let historyWriters = 4
    static let historyWindow = 256
    static let historyPageRequests = 200
    static let pastStateRequests = 500
    static let frameRequests = 100
    static let historyPageLimit = 1000
    /// Alternating windows of half the run's `seconds` each: short windows
    /// in many rounds pair the two servers closely on a machine whose load drifts.
    static let throughputRounds = 10

    /// The persistence settings with SQLite (fsync as by default) keeping `historyLimit` events per room.
    func historySettings(historyLimit: Int) -> [String: Any] {
        var config = settings(persistence: true)
        config["persistence"] = ["enabled": true, "fsync": true, "historyLimit": historyLimit]
        return config
    }

    func history(limit: Int) throws -> [BenchRow] {
        progress("history: starting a server with SQLite (fsync) and historyLimit \(limit)")
        let server = try ServerUnderTest(binary: self.server, settings: historySettings(historyLimit: limit),
                                         cpu: cpuPinning ? 0 : nil)
        defer { server.stop() }
        let loop = try ClientLoop(name: "history")
        defer { loop.shutdown() }
        let writers = IntentPipeline(loop: loop, url: "ws://127.0.0.1:\(server.port)/ws", room: Self.historyRoom,
                                     window: Self.historyWindow)
        defer { writers.closeAll() }
        guard writers.connect(count: Self.historyWriters, timeout: 30) == Self.historyWriters else {
            throw BenchError("history: the writers did not connect")
        }
        let http = KeepAliveHTTP(port: server.port)
        var rows: [BenchRow] = []

        // 1. The room filled to the limit, and its past read back.
        let filled = try fill(writers, on: server, to: limit, http: http, name: "history fill 0→\(Self.short(limit))")
        rows.append(filled.row)
        let held = filled.held
        rows.append(try timePages(http, held: held))
        rows.append(try timePastStates(http, held: held))
        rows += try timeFrames(http, server: server, held: held)

        // 2. Three times the limit: pruning keeps the room at the limit and the database flat.
        for multiple in 2...3 {
            let name = "history fill \(Self.short((multiple - 1) * limit))→\(Self.short(multiple * limit))"
            rows.append(try fill(writers, on: server, to: multiple * limit, http: http, name: name).row)
        }
        let sizes = rows.compactMap { $0.json["databaseBytes"] as? Int }
        if let first = sizes.first, let last = sizes.last, first > 0 {
            progress(String(format: "history: database %.1f MB at %@ events, %.1f MB at 3× (%+.1f%%)", Double(first) / 1e6,
                            Self.short(limit), Double(last) / 1e6, (Double(last) / Double(first) - 1) * 100))
        }

        // 3. Intents/s with this history against historyLimit 1, in alternating windows.
        rows += try throughputAgainstSmallestLimit(server: server, writers: writers, loop: loop, limit: limit)
        return rows
    }

    // MARK: filling

    private func fill(_ writers: IntentPipeline, on server: ServerUnderTest, to events: Int, http: KeepAliveHTTP,
                      name: String) throws -> (row: BenchRow, held: HistoryBounds) {
        let before = writers.snapshot
        let needed = max(0, events - (try historyBounds(http)).seq)
        progress("\(name): \(needed) intents on \(Self.historyWriters) connections, \(Self.historyWindow) in flight each")
        let cpuStart = server.cpuSeconds(), waitStart = server.runQueueWaitSeconds()
        let loadStart = MachineLoad.sample(), storageStart = server.storageBytes()
        let started = Date()
        writers.send(upTo: before.sent + needed)
        var last = (time: started, acked: before.acked)
        var stalledSince = Date()
        while true {
            let finished = writers.drain(timeout: 2)
            let now = Date(), counts = writers.snapshot
            if counts.acked > last.acked { stalledSince = now }
            if counts.lost > 0 { throw BenchError("\(name): \(counts.lost) writer connections closed") }
            if finished { break }
            if now.timeIntervalSince(stalledSince) > 30 {
                throw BenchError("\(name): no ack for 30 s at seq \(counts.seq)")
            }
            let rate = Double(counts.acked - last.acked) / now.timeIntervalSince(last.time)
            progress(String(format: "%@: %d of %d events, %.0f/s, database %.1f MB", name, Int(counts.seq), events,
                            rate, Double(databaseFiles(server).total) / 1e6))
            last = (now, counts.acked)
        }
        let seconds = Date().timeIntervalSince(started)
        let after = writers.snapshot
        let cpu = server.cpuSeconds() - cpuStart, wait = server.runQueueWaitSeconds() - waitStart
        let busy = MachineLoad.busyCores(from: loadStart, to: MachineLoad.sample(), cores: 2)
        let added = after.acked - before.acked
        let rate = Double(added) / seconds
        let written = Double(server.storageBytes().written - storageStart.written) / Double(max(1, added))
        let held = try historyBounds(http)
        let files = databaseFiles(server)
        let perEvent = held.count > 0 ? Double(files.total) / Double(held.count) : 0
        let errors = after.errors - before.errors
        progress(String(format: "%@: %.0f events/s; %d held (seq %d), database %.1f MB (%.0f B/event)", name, rate,
                        held.count, held.seq, Double(files.total) / 1e6, perEvent))
        let row = BenchRow(
            workload: name,
            figures: [
                ("events", "\(added)"),
                ("events/s", String(format: "%.0f", rate)),
                ("held", "\(held.count)"),
                ("db MB", String(format: "%.1f", Double(files.total) / 1e6)),
                ("wal MB", String(format: "%.1f", Double(files.wal) / 1e6)),
                ("B/event", String(format: "%.0f", perEvent)),
                ("written B/event", String(format: "%.0f", written)),
                ("RSS MB", String(format: "%.0f", Double(server.residentKilobytes()) / 1024)),
                ("srv cpu %", String(format: "%.0f", cpu / seconds * 100)),
                ("srv wait s", String(format: "%.2f", wait)),
                ("busy cores", String(format: "%.2f", busy)),
                ("errors", "\(errors + after.resyncs - before.resyncs)"),
            ],
            json: [
                "workload": name, "events": added, "seconds": seconds, "eventsPerSecond": rate,
                "seq": held.seq, "first": held.first, "eventsHeld": held.count,
                "databaseBytes": files.total, "databaseMainBytes": files.main, "databaseWALBytes": files.wal,
                "bytesPerEvent": perEvent, "storageBytesWrittenPerEvent": written,
                "rssKilobytes": server.residentKilobytes(),
                "serverCPUPercent": cpu / seconds * 100, "serverRunQueueWaitSeconds": wait, "busyCores": busy,
                "errors": errors, "resyncs": after.resyncs - before.resyncs,
                "writers": Self.historyWriters, "inFlightEach": Self.historyWindow,
            ])
        return (row, held)
    }

    /// The room's seq and the oldest seq it still holds.
    struct HistoryBounds {
        var seq: Int
        var first: Int
        var count: Int { max(0, seq - first + 1) }
    }

    private func historyBounds(_ http: KeepAliveHTTP) throws -> HistoryBounds {
        let answer = try http.get("/api/history?room=\(Self.historyRoom)&limit=1")
        guard answer.status == 200,
              let object = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
              let seq = object["seq"] as? Int, let first = object["first"] as? Int else {
            throw BenchError("history: /api/history answered \(answer.status): "
                + String(decoding: answer.body.prefix(300), as: UTF8.self))
        }
        return HistoryBounds(seq: seq, first: first)
    }

    /// The database files in the server's data directory (the SQLite file and its WAL).
    private func databaseFiles(_ server: ServerUnderTest) -> (total: Int, main: Int, wal: Int) {
        let directory = server.directory.appendingPathComponent("data").path
        var main = 0, wal = 0, total = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.contains(".sqlite") {
            let size = ((try? FileManager.default.attributesOfItem(atPath: directory + "/" + name))?[.size] as? Int) ?? 0
            total += size
            if name.hasSuffix("-wal") { wal += size } else if !name.hasSuffix("-shm") { main += size }
        }
        return (total, main, wal)
    }

    // MARK: reading the past

    /// `/api/history?limit=1000&since=S`, S random so every page is full.
    private func timePages(_ http: KeepAliveHTTP, held: HistoryBounds) throws -> BenchRow {
        let name = "GET /api/history limit=\(Self.historyPageLimit)"
        progress("\(name): \(Self.historyPageRequests) requests, since at random")
        let lowest = held.first - 1, highest = max(lowest, held.seq - Self.historyPageLimit)
        var times: [Double] = [], bytes = 0, shortPages = 0, failures = 0
        for _ in 0..<Self.historyPageRequests {
            let since = Int.random(in: lowest...highest)
            let answer = try http.get("/api/history?room=\(Self.historyRoom)&since=\(since)&limit=\(Self.historyPageLimit)")
            guard answer.status == 200 else { failures += 1; continue }
            times.append(answer.seconds)
            bytes += answer.body.count
            if Self.count(#""type":"event""#, in: answer.body) != Self.historyPageLimit { shortPages += 1 }
        }
        return requestRow(name, times: times, target: 20, failures: failures,
                          notes: shortPages > 0 ? "\(shortPages) short pages" : "",
                          extra: ["bytesPerAnswer": times.isEmpty ? 0 : bytes / times.count, "shortPages": shortPages,
                                  "eventsHeld": held.count])
    }

    /// `/api/state?seq=N`, N random among the seqs held.
    private func timePastStates(_ http: KeepAliveHTTP, held: HistoryBounds) throws -> BenchRow {
        let name = "GET /api/state seq=N"
        progress("\(name): \(Self.pastStateRequests) requests, seq at random")
        var times: [Double] = [], failures = 0
        for _ in 0..<Self.pastStateRequests {
            let seq = Int.random(in: (held.first - 1)...held.seq)
            let answer = try http.get("/api/state?room=\(Self.historyRoom)&seq=\(seq)")
            guard answer.status == 200 else { failures += 1; continue }
            times.append(answer.seconds)
        }
        return requestRow(name, times: times, target: 2, failures: failures, notes: "",
                          extra: ["eventsHeld": held.count])
    }

    /// Past frames at distinct random seqs (never cached), each next to the
    /// present frame right after an intent (the new seq misses the cache too),
    /// both at wave phase 0 and the default size.
    private func timeFrames(_ http: KeepAliveHTTP, server: ServerUnderTest, held: HistoryBounds) throws -> [BenchRow] {
        progress("frames: \(Self.frameRequests) past frames at distinct seqs, each beside a present frame after an intent")
        // The intents below move `first` up by one each: stay clear of it.
        let seqs = ((held.first + Self.frameRequests)...held.seq).shuffled().prefix(Self.frameRequests)
        let metricsBefore = server.metrics()
        var past: [Double] = [], present: [Double] = [], failures = 0
        for seq in seqs {
            let pastAnswer = try http.get("/frame/scene.png?room=\(Self.historyRoom)&seq=\(seq)")
            if pastAnswer.status == 200 { past.append(pastAnswer.seconds) } else { failures += 1 }
            let ack = try http.post("/api/intent?room=\(Self.historyRoom)",
                                    json: IntentEncoder.intent(.dragonForward, id: nil))
            guard ack.status == 200 else { failures += 1; continue }
            let presentAnswer = try http.get("/frame/scene.png?room=\(Self.historyRoom)&phase=0")
            if presentAnswer.status == 200 { present.append(presentAnswer.seconds) } else { failures += 1 }
        }
        let metricsAfter = server.metrics()
        let renders = (metricsAfter["happy_render_seconds_count"] ?? 0) - (metricsBefore["happy_render_seconds_count"] ?? 0)
        let renderSeconds = (metricsAfter["happy_render_seconds_sum"] ?? 0) - (metricsBefore["happy_render_seconds_sum"] ?? 0)
        let renderMean = renders > 0 ? renderSeconds / renders * 1000 : 0
        let presentMedian = Self.percentile(present, 0.5) * 1000
        let pastRow = requestRow("GET /frame/scene.png seq=N (uncached)", times: past, target: presentMedian + 2,
                                 failures: failures,
                                 notes: String(format: "present + %.2f ms", Self.percentile(past, 0.5) * 1000 - presentMedian),
                                 extra: ["presentMedianMs": presentMedian, "renders": renders,
                                         "serverRenderMeanMs": renderMean])
        let presentRow = requestRow("GET /frame/scene.png present (uncached)", times: present, target: nil, failures: 0,
                                    notes: String(format: "server render mean %.2f ms (%d renders)", renderMean, Int(renders)),
                                    extra: ["renders": renders, "serverRenderMeanMs": renderMean])
        return [pastRow, presentRow]
    }

    private func requestRow(_ name: String, times: [Double], target: Double?, failures: Int, notes: String,
                            extra: [String: Any]) -> BenchRow {
        let median = Self.percentile(times, 0.5) * 1000, p99 = Self.percentile(times, 0.99) * 1000
        let met = target.map { median <= $0 }
        progress(String(format: "%@: median %.2f ms, p99 %.2f ms%@", name, median, p99,
                        target.map { String(format: " (target ≤ %.2f ms)", $0) } ?? ""))
        var json: [String: Any] = ["workload": name, "requests": times.count, "failures": failures,
                                   "latencyMs": ["p50": median, "p99": p99, "max": (times.max() ?? 0) * 1000]]
        if let target { json["targetMedianMs"] = target; json["targetMet"] = median <= target }
        json.merge(extra) { $1 }
        return BenchRow(
            workload: name,
            figures: [
                ("requests", "\(times.count)"),
                ("median ms", String(format: "%.2f", median)),
                ("p99 ms", String(format: "%.2f", p99)),
                ("target ms", target.map { String(format: "≤ %.2f", $0) } ?? ""),
                ("met", met.map { $0 ? "yes" : "NO" } ?? ""),
                ("failures", "\(failures)"),
                ("notes", notes),
            ],
            json: json)
    }

    // MARK: what recording history costs

    /// Intents/s on the filled server against a server with historyLimit 1
    /// (the store still keeps `limits.historySize` events for resumes), the
    /// same writers and window on each, in alternating windows of half of
    /// `seconds` (AB BA AB …, so drift over the run falls on both), medians of ten.
    private func throughputAgainstSmallestLimit(server: ServerUnderTest, writers: IntentPipeline, loop: ClientLoop,
                                                limit: Int) throws -> [BenchRow] {
        progress("history throughput: starting a second server with historyLimit 1")
        let smallest = try ServerUnderTest(binary: self.server, settings: historySettings(historyLimit: 1),
                                           cpu: cpuPinning ? 0 : nil)
        defer { smallest.stop() }
        let smallWriters = IntentPipeline(loop: loop, url: "ws://127.0.0.1:\(smallest.port)/ws", room: Self.historyRoom,
                                          window: Self.historyWindow)
        defer { smallWriters.closeAll() }
        guard smallWriters.connect(count: Self.historyWriters, timeout: 30) == Self.historyWriters else {
            throw BenchError("history throughput: the writers did not connect")
        }
        // Past its resume buffer, so it prunes on every commit as the full server does.
        _ = try fill(smallWriters, on: smallest, to: 5000, http: KeepAliveHTTP(port: smallest.port),
                     name: "history fill, historyLimit 1")

        var full: [Window] = [], small: [Window] = []
        for round in 0..<Self.throughputRounds {
            let order = round % 2 == 0 ? [true, false] : [false, true]
            for isFull in order {
                let window = try measure(isFull ? writers : smallWriters, on: isFull ? server : smallest,
                                         name: isFull ? "historyLimit \(limit)" : "historyLimit 1")
                if isFull { full.append(window) } else { small.append(window) }
            }
        }
        let fullMedian = Self.median(full), smallMedian = Self.median(small)
        let cost = smallMedian.rate > 0 ? (1 - fullMedian.rate / smallMedian.rate) * 100 : 0
        let cpuCost = smallMedian.cpuMicrosecondsPerIntent > 0
            ? (fullMedian.cpuMicrosecondsPerIntent / smallMedian.cpuMicrosecondsPerIntent - 1) * 100 : 0
        // Each round's two windows side by side: less exposed to the machine's drift than the medians.
        let roundCosts = zip(full, small).map { $1.rate > 0 ? (1 - $0.rate / $1.rate) * 100 : 0 }
        let roundCost = Self.median(roundCosts)
        progress(String(format: "history throughput: %.0f intents/s with historyLimit %d, %.0f with 1: "
                            + "history costs %.1f%% (target ≤ 10%%; median of the rounds' own %.1f%%), "
                            + "%+.1f%% server CPU per intent",
                        fullMedian.rate, limit, smallMedian.rate, cost, roundCost, cpuCost))
        func row(_ name: String, _ median: Window, _ all: [Window], costs: (rate: Double, cpu: Double)?) -> BenchRow {
            var figures: [(String, String)] = [
                ("intents/s median", String(format: "%.0f", median.rate)),
                ("min–max", String(format: "%.0f–%.0f", all.map(\.rate).min() ?? 0, all.map(\.rate).max() ?? 0)),
                ("srv cpu µs/intent", String(format: "%.1f", median.cpuMicrosecondsPerIntent)),
                ("srv cpu %", String(format: "%.0f", median.cpuPercent)),
                ("disk B/intent w/r", String(format: "%.0f / %.0f", median.writtenBytesPerIntent, median.readBytesPerIntent)),
                ("srv wait s", String(format: "%.2f", median.wait)),
                ("busy cores", String(format: "%.2f", median.busy)),
                ("db MB", String(format: "%.1f", Double(median.databaseBytes) / 1e6)),
                ("errors", "\(all.map(\.errors).reduce(0, +))"),
                ("cost %", costs.map { String(format: "%.1f", $0.rate) } ?? ""),
                ("rounds' cost %", costs.map { _ in String(format: "%.1f", roundCost) } ?? ""),
                ("cpu +%", costs.map { String(format: "%+.1f", $0.cpu) } ?? ""),
                ("met", costs.map { $0.rate <= 10 ? "yes" : "NO" } ?? ""),
            ]
            if costs == nil { figures.removeLast(4) }
            var json: [String: Any] = [
                "workload": name, "intentsPerSecond": median.rate, "windows": all.map(\.rate),
                "serverCPUMicrosecondsPerIntentWindows": all.map(\.cpuMicrosecondsPerIntent),
                "serverCPUPercent": median.cpuPercent, "serverCPUPercentWindows": all.map(\.cpuPercent),
                "storageBytesWrittenPerIntent": median.writtenBytesPerIntent,
                "storageBytesWrittenPerIntentWindows": all.map(\.writtenBytesPerIntent),
                "storageBytesReadPerIntent": median.readBytesPerIntent,
                "serverCPUMicrosecondsPerIntent": median.cpuMicrosecondsPerIntent,
                "serverRunQueueWaitSeconds": median.wait, "busyCores": median.busy,
                "databaseBytes": median.databaseBytes, "errors": all.map(\.errors).reduce(0, +),
                "windowSeconds": windowSeconds, "writers": Self.historyWriters, "inFlightEach": Self.historyWindow,
            ]
            if let costs {
                json["costPercent"] = costs.rate
                json["costPercentPerRound"] = roundCosts
                json["costPercentMedianOfRounds"] = roundCost
                json["serverCPUPerIntentIncreasePercent"] = costs.cpu
                json["targetMet"] = costs.rate <= 10
            }
            return BenchRow(workload: name, figures: figures, json: json)
        }
        return [row("intents, historyLimit \(limit)", fullMedian, full, costs: (cost, cpuCost)),
                row("intents, historyLimit 1", smallMedian, small, costs: nil)]
    }

    private var windowSeconds: Double { max(1, seconds / 2) }

    private struct Window {
        var rate = 0.0, cpuMicrosecondsPerIntent = 0.0, cpuPercent = 0.0, wait = 0.0, busy = 0.0
        var writtenBytesPerIntent = 0.0, readBytesPerIntent = 0.0
        var databaseBytes = 0, errors = 0
    }

    private func measure(_ writers: IntentPipeline, on server: ServerUnderTest, name: String) throws -> Window {
        let before = writers.snapshot
        writers.send(upTo: Int.max)
        Thread.sleep(forTimeInterval: 0.5)  // the window fills
        let start = writers.snapshot, started = Date()
        let cpuStart = server.cpuSeconds(), waitStart = server.runQueueWaitSeconds(), loadStart = MachineLoad.sample()
        let storageStart = server.storageBytes()
        Thread.sleep(forTimeInterval: windowSeconds)
        let end = writers.snapshot, elapsed = Date().timeIntervalSince(started)
        let cpu = server.cpuSeconds() - cpuStart, storage = server.storageBytes()
        let intents = Double(max(1, end.acked - start.acked))
        var window = Window()
        window.rate = Double(end.acked - start.acked) / elapsed
        window.cpuMicrosecondsPerIntent = cpu / intents * 1e6
        window.cpuPercent = cpu / elapsed * 100
        window.writtenBytesPerIntent = Double(storage.written - storageStart.written) / intents
        window.readBytesPerIntent = Double(storage.read - storageStart.read) / intents
        window.wait = server.runQueueWaitSeconds() - waitStart
        window.busy = MachineLoad.busyCores(from: loadStart, to: MachineLoad.sample(), cores: 2)
        writers.stop()
        guard writers.drain(timeout: 30) else { throw BenchError("\(name): intents still unanswered after 30 s") }
        window.databaseBytes = databaseFiles(server).total
        let after = writers.snapshot
        window.errors = after.errors - before.errors + after.resyncs - before.resyncs
        progress(String(format: "history throughput, %@: %.0f intents/s, server CPU %.0f%% (%.1f µs each), "
                            + "%.0f B written and %.0f B read per intent%@",
                        name, window.rate, window.cpuPercent, window.cpuMicrosecondsPerIntent, window.writtenBytesPerIntent,
                        window.readBytesPerIntent, window.errors > 0 ? ", \(window.errors) errors" : ""))
        return window
    }

    // MARK: figures

    /// 100000 as "100k".
    static func short(_ count: Int) -> String {
        count >= 1000 && count % 1000 == 0 ? "\(count / 1000)k" : "\(count)"
    }

    /// Each figure's own median.
    private static func median(_ windows: [Window]) -> Window {
        func middle(_ value: (Window) -> Double) -> Double { Self.median(windows.map(value)) }
        var typical = Window()
        typical.rate = middle(\.rate)
        typical.cpuMicrosecondsPerIntent = middle(\.cpuMicrosecondsPerIntent)
        typical.cpuPercent = middle(\.cpuPercent)
        typical.writtenBytesPerIntent = middle(\.writtenBytesPerIntent)
        typical.readBytesPerIntent = middle(\.readBytesPerIntent)
        typical.wait = middle(\.wait)
        typical.busy = middle(\.busy)
        typical.databaseBytes = Int(middle { Double($0.databaseBytes) })
        return typical
    }

    /// The middle value, or the mean of the two middle ones.
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted(), half = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2
    }

    /// The sample at `fraction` of the sorted samples (nearest rank).
    static func percentile(_ samples: [Double], _ fraction: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        let rank = Int((Double(sorted.count) * fraction).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }

    private static func count(_ needle: String, in bytes: [UInt8]) -> Int {
        let pattern = Array(needle.utf8)
        guard bytes.count >= pattern.count else { return 0 }
        var found = 0, index = 0
        while index <= bytes.count - pattern.count {
            if bytes[index] == pattern[0] && bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                found += 1
                index += pattern.count
            } else {
                index += 1
            }
        }
        return found
    }
}
