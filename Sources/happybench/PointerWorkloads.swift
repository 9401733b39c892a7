import Foundation
import HappyClientKit

/// Live pointers (PROTOCOL.md section 10): 200 clients moving at 30 Hz in one
/// room, alone and beside the N=1000 fan-out.
extension Workloads {
    static let pointerClients = 200
    static let pointerRate = 30.0
    static let pointerIntervalMs = 50

    /// The fan-out settings with a pointer rate limit above the clients' 30 Hz,
    /// so no move is dropped by it; interval and batch cap are the defaults.
    func pointerSettings() -> [String: Any] {
        var config = settings(persistence: false)
        var limits = config["limits"] as? [String: Any] ?? [:]
        limits["pointersPerSecond"] = 60
        limits["pointerIntervalMs"] = Self.pointerIntervalMs
        limits["maxPointersPerBatch"] = 50
        config["limits"] = limits
        return config
    }

    /// 200 clients in one room, each moving at 30 Hz for the run's duration.
    func pointers() throws -> BenchRow {
        let name = "pointers \(Self.pointerClients)×\(Int(Self.pointerRate)) Hz"
        progress("\(name): starting server, connecting \(Self.pointerClients) clients")
        let server = try ServerUnderTest(binary: self.server, settings: pointerSettings(), cpu: cpuPinning ? 0 : nil)
        defer { server.stop() }
        let loop = try ClientLoop(name: "pointers")
        defer { loop.shutdown() }
        let driver = PointerDriver(loop: loop, url: "ws://127.0.0.1:\(server.port)/ws", room: "pointers",
                                   clients: Self.pointerClients, rate: Self.pointerRate,
                                   ceiling: 1000 / Self.pointerIntervalMs)
        defer { driver.closeAll() }
        let connected = driver.connect(timeout: 60)
        guard connected == Self.pointerClients else {
            throw BenchError("\(name): only \(connected) of \(Self.pointerClients) clients connected")
        }
        Thread.sleep(forTimeInterval: 1)
        progress("\(name): moving for \(seconds) s")
        let metricsBefore = PointerCounters(server.metrics())
        let cpuStart = server.cpuSeconds()
        let waitStart = server.runQueueWaitSeconds()
        let benchStart = ProcessCPU.seconds()
        driver.start()
        Thread.sleep(forTimeInterval: seconds)
        driver.stopMoving()
        let serverCPU = server.cpuSeconds() - cpuStart
        let serverWait = server.runQueueWaitSeconds() - waitStart
        let benchCPU = ProcessCPU.seconds() - benchStart
        let counters = PointerCounters(server.metrics()).subtracting(metricsBefore)
        let result = driver.finish()
        let row = pointerRow(name, result, counters: counters, serverCPU: serverCPU, serverWait: serverWait,
                             benchCPU: benchCPU)
        progress(String(format: "%@: %.1f batches/s per receiver, p99 %.1f ms, %d drops", name,
                        result.batchesPerSecond.mean, result.p99, Int(counters.drops)))
        return row
    }

    /// Where the pointer clients point while the fan-out runs.
    enum PointerPlacement {
        /// No pointer clients.
        case none
        /// A second server on the fan-out server's CPU: the load generator
        /// and the CPU carry the pointer load, the fan-out server does not.
        case otherServer
        /// The fan-out server itself, in a room of its own.
        case sameServer
    }

    /// The N=1000 fan-out three times, each on fresh servers with the same
    /// config: alone; while the 200 pointers move on another server; while
    /// they move on the fan-out's own server. The third to the first is what
    /// pointers cost the fan-out on this machine; the third to the second
    /// leaves out what the pointer clients cost the load generator (which
    /// has one core for every client) and the CPU, the server's own share.
    func fanoutBesidePointers(subscribers: Int = 1000) throws -> [BenchRow] {
        let alone = try fanout(subscribers: subscribers, pointers: .none).row
        let control = try fanout(subscribers: subscribers, pointers: .otherServer).row
        var (beside, pointers) = try fanout(subscribers: subscribers, pointers: .sameServer)

        func rate(_ row: BenchRow) -> Double { row.json["messagesPerSecond"] as? Double ?? 0 }
        let ratio = rate(alone) > 0 ? rate(beside) / rate(alone) : 0
        let ratioToControl = rate(control) > 0 ? rate(beside) / rate(control) : 0
        beside.figures.append(("× alone", String(format: "%.3f", ratio)))
        beside.figures.append(("× other srv", String(format: "%.3f", ratioToControl)))
        beside.json["ratioToAlone"] = ratio
        beside.json["ratioToPointersOnAnotherServer"] = ratioToControl
        progress(String(format: "fanout N=%d: %.0f msg/s alone, %.0f with pointers on another server, %.0f with pointers on the same server (%.3f× alone, %.3f× other server)",
                        subscribers, rate(alone), rate(control), rate(beside), ratio, ratioToControl))
        return [alone, control, beside] + (pointers.map { [$0] } ?? [])
    }

    /// One fan-out run with the pointer clients placed as asked; the pointer
    /// row when they moved on the fan-out's own server.
    private func fanout(subscribers: Int, pointers placement: PointerPlacement) throws -> (row: BenchRow, pointers: BenchRow?) {
        let label: String
        switch placement {
        case .none: label = "fanout N=\(subscribers), no pointers"
        case .otherServer: label = "fanout N=\(subscribers), pointers on another server"
        case .sameServer: label = "fanout N=\(subscribers) + pointers"
        }
        let server = try ServerUnderTest(binary: self.server, settings: pointerSettings(), cpu: cpuPinning ? 0 : nil)
        defer { server.stop() }
        guard placement != .none else { return (try fanout(subscribers: subscribers, label: label, on: server), nil) }

        var other: ServerUnderTest?
        defer { other?.stop() }
        if placement == .otherServer {
            other = try ServerUnderTest(binary: self.server, settings: pointerSettings(), cpu: cpuPinning ? 0 : nil)
        }
        let pointerServer = other ?? server
        let loop = try ClientLoop(name: "pointers")
        defer { loop.shutdown() }
        let driver = PointerDriver(loop: loop, url: "ws://127.0.0.1:\(pointerServer.port)/ws", room: "pointers",
                                   clients: Self.pointerClients, rate: Self.pointerRate,
                                   ceiling: 1000 / Self.pointerIntervalMs)
        defer { driver.closeAll() }
        progress("\(label): connecting \(Self.pointerClients) pointer clients")
        let connected = driver.connect(timeout: 60)
        guard connected == Self.pointerClients else {
            throw BenchError("\(label): only \(connected) of \(Self.pointerClients) pointer clients connected")
        }
        let metricsBefore = PointerCounters(pointerServer.metrics())
        let cpuStart = pointerServer.cpuSeconds()
        let waitStart = pointerServer.runQueueWaitSeconds()
        driver.start()
        Thread.sleep(forTimeInterval: 1)
        var row = try fanout(subscribers: subscribers, label: label, on: server)
        driver.stopMoving()
        let serverCPU = pointerServer.cpuSeconds() - cpuStart
        let serverWait = pointerServer.runQueueWaitSeconds() - waitStart
        let counters = PointerCounters(pointerServer.metrics()).subtracting(metricsBefore)
        let result = driver.finish()
        let pointers = pointerRow("pointers beside fanout", result, counters: counters, serverCPU: serverCPU,
                                  serverWait: serverWait, benchCPU: nil)
        row.json["pointers"] = pointers.json
        return (row, placement == .sameServer ? pointers : nil)
    }

    private func pointerRow(_ name: String, _ result: PointerResult, counters: PointerCounters,
                            serverCPU serverCPUSeconds: Double, serverWait: Double,
                            benchCPU benchCPUSeconds: Double?) -> BenchRow {
        let ceiling = 1000 / Self.pointerIntervalMs
        // CPU as a percentage of one core over the moving window.
        let serverCPU = result.seconds > 0 ? serverCPUSeconds / result.seconds * 100 : 0
        let benchCPU = benchCPUSeconds.map { result.seconds > 0 ? $0 / result.seconds * 100 : 0 }
        var json: [String: Any] = [
            "workload": name, "clients": result.clients, "movesPerSecondEach": Self.pointerRate,
            "pointerIntervalMs": Self.pointerIntervalMs, "seconds": result.seconds,
            "serverCPUPercent": serverCPU, "serverRunQueueWaitSeconds": serverWait, "movesSent": result.movesSent,
            "maxSendLagMs": result.maxSendLag, "movesSentOver10msLate": result.lateMoves,
            "maxClientLoopLagMs": result.maxLoopLag,
            "batchesPerSecondPerReceiver": ["mean": result.batchesPerSecond.mean, "max": result.batchesPerSecond.max],
            "bytesPerSecondPerReceiver": ["mean": result.bytesPerSecond.mean, "max": result.bytesPerSecond.max],
            "serverBatchesPerSecond": result.seconds > 0 ? counters.batches / result.seconds : 0,
            "maxBatchesInOneSecond": result.maxBatchesInOneSecond, "batchesPerSecondCeiling": ceiling,
            "shortestSpanOfCeilingIntervalsMs": result.shortestSpanOfCeilingIntervals,
            "maxBatchesInOneSecondFirstArrivals": result.maxBatchesInOneSecondFirstArrivals,
            "shortestSpanOfCeilingIntervalsFirstArrivalsMs": result.shortestSpanOfCeilingIntervalsFirstArrivals,
            "latencyMs": ["p50": result.p50, "p99": result.p99, "max": result.maxLatency],
            "entriesMatched": result.entriesMatched, "entriesUnmatched": result.entriesUnmatched,
            "ownEntries": result.ownEntries, "errors": result.errors,
            "moversSeenPerReceiver": ["mean": result.moversSeen.mean, "min": result.moversSeen.min],
            "server": ["pointerMessages": counters.messages, "drops": counters.drops, "batches": counters.batches,
                       "messagesOut": counters.messagesOut, "bytesOut": counters.bytesOut, "skips": counters.skips],
        ]
        if let benchCPU { json["benchCPUPercent"] = benchCPU }
        let problems = result.errors + result.entriesUnmatched + result.ownEntries
        return BenchRow(
            workload: name,
            figures: [
                ("srv cpu %", String(format: "%.0f", serverCPU)),
                ("batch/s mean/max", String(format: "%.1f / %.1f", result.batchesPerSecond.mean,
                                            result.batchesPerSecond.max)),
                ("max in 1 s recv/first", "\(result.maxBatchesInOneSecond) / \(result.maxBatchesInOneSecondFirstArrivals)"),
                ("\(ceiling) gaps ms recv/first", String(format: "%.0f / %.1f", result.shortestSpanOfCeilingIntervals,
                                                        result.shortestSpanOfCeilingIntervalsFirstArrivals)),
                ("KB/s mean/max", String(format: "%.1f / %.1f", result.bytesPerSecond.mean / 1024,
                                         result.bytesPerSecond.max / 1024)),
                ("p50/p99/max ms", String(format: "%.1f / %.1f / %.1f", result.p50, result.p99, result.maxLatency)),
                ("seen/recv", String(format: "%.0f (min %d)", result.moversSeen.mean, result.moversSeen.min)),
                ("srv wait s", String(format: "%.2f", serverWait)),
                ("client stall ms", String(format: "%.0f", max(result.maxSendLag, result.maxLoopLag))),
                ("drops", "\(Int(counters.drops))"),
                ("errors", "\(problems)"),
            ],
            json: json)
    }
}

/// The pointer counters of `/metrics`.
struct PointerCounters {
    var messages = 0.0, drops = 0.0, batches = 0.0, messagesOut = 0.0, bytesOut = 0.0, skips = 0.0

    init(_ metrics: [String: Double]) {
        messages = metrics["happy_pointer_messages_total"] ?? 0
        drops = metrics["happy_pointer_drops_total"] ?? 0
        batches = metrics["happy_pointer_batches_total"] ?? 0
        messagesOut = metrics["happy_pointer_messages_out_total"] ?? 0
        bytesOut = metrics["happy_pointer_bytes_out_total"] ?? 0
        skips = metrics["happy_pointer_skips_total"] ?? 0
    }

    private init() {}

    func subtracting(_ earlier: PointerCounters) -> PointerCounters {
        var delta = PointerCounters()
        delta.messages = messages - earlier.messages
        delta.drops = drops - earlier.drops
        delta.batches = batches - earlier.batches
        delta.messagesOut = messagesOut - earlier.messagesOut
        delta.bytesOut = bytesOut - earlier.bytesOut
        delta.skips = skips - earlier.skips
        return delta
    }
}

/// This process's own user plus system CPU seconds (the load generator).
enum ProcessCPU {
    static func seconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func value(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return value(usage.ru_utime) + value(usage.ru_stime)
    }
}
