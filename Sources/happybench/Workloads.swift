import Foundation
import HappyClientKit

/// One row of the results table.
struct BenchRow {
    var workload: String
    var figures: [(String, String)]
    var json: [String: Any]
}

/// The workloads `make bench` runs against a fresh server each.
struct Workloads {
    let server: String
    let webRoot: String
    let seconds: Double
    let cpuPinning: Bool

    /// Limits raised far above the publish rate, so the run measures fan-out, not the rate limit;
    /// every event delivered on its own (these rooms are past `crowd.tickAbove`, and the
    /// drivers match each event by its seq).
    func settings(persistence: Bool, fsync: Bool = true) -> [String: Any] {
        [
            "webRoot": webRoot,
            "crowd": ["mode": "each"],
            "persistence": ["enabled": persistence, "fsync": fsync],
            "log": ["level": "warn"],
            "limits": ["intentsPerSecond": 1_000_000, "intentBurst": 1_000_000, "floodLimit": 1_000_000,
                       "maxQueuedBytes": 64 * 1024 * 1024, "maxConnectionsPerAddress": 0,
                       "maxClients": 20_000],
        ]
    }

    func progress(_ text: String) {
        FileHandle.standardError.write(Data("happybench: \(text)\n".utf8))
    }

    /// N subscribers + 1 publisher; about 4096 messages in flight (as the peers' compare.sh).
    /// `given`: a running server to use (and leave running) instead of a fresh one.
    func fanout(subscribers: Int, persistence: Bool = false, pace: FanoutDriver.Pace? = nil,
                label: String? = nil, clusterNodes: Int = 0, on given: ServerUnderTest? = nil) throws -> BenchRow {
        let name = label ?? "fanout N=\(subscribers)"
        let window = max(1, Int((4096.0 / Double(subscribers + 1)).rounded()))
        let pace = pace ?? .window(window)
        progress("\(name): \(given == nil ? "starting server, " : "")connecting \(subscribers + 1) clients")
        var redis: RedisUnderTest?
        var servers: [ServerUnderTest] = []
        defer {
            if given == nil { for server in servers { server.stop() } }
            redis?.stop()
        }
        if let given {
            servers.append(given)
        } else if clusterNodes > 0 {
            let shared = try RedisUnderTest()
            redis = shared
            var cluster = settings(persistence: false)
            // The bench's Redis syncs every second (as most deployments do), not on every write.
            cluster["cluster"] = ["redis": shared.url, "allowNonDurableRedis": true]
            for node in 0..<clusterNodes {
                servers.append(try ServerUnderTest(binary: self.server, settings: cluster, cpu: cpuPinning ? node % 2 : nil))
            }
        } else {
            servers.append(try ServerUnderTest(binary: self.server, settings: settings(persistence: persistence),
                                               cpu: cpuPinning ? 0 : nil))
        }
        let loop = try ClientLoop(name: "bench")
        defer { loop.shutdown() }
        let rssBefore = servers.map { $0.residentKilobytes() }.reduce(0, +)
        let driver = FanoutDriver(loop: loop, urls: servers.map { "ws://127.0.0.1:\($0.port)/ws" },
                                  subscribers: subscribers, pace: pace)
        let connected = driver.connect(timeout: 120)
        guard connected == subscribers + 1 else {
            throw BenchError("\(name): only \(connected) of \(subscribers + 1) clients connected")
        }
        Thread.sleep(forTimeInterval: 1.5)  // let the join storm settle (memory is handed back)
        let rssConnected = servers.map { $0.residentKilobytes() }.reduce(0, +)
        progress("\(name): \(connected) connected; publishing for \(seconds) s")
        let cpuStart = servers.map { $0.cpuSeconds() }.reduce(0, +)
        let waitStart = servers.map { $0.runQueueWaitSeconds() }.reduce(0, +)
        let loadStart = MachineLoad.sample()
        let benchStart = ProcessCPU.seconds()
        var result = driver.publish(seconds: seconds)
        let benchCPU = (ProcessCPU.seconds() - benchStart) / result.publishSeconds * 100
        let cpu = servers.map { $0.cpuSeconds() }.reduce(0, +) - cpuStart
        let serverWait = servers.map { $0.runQueueWaitSeconds() }.reduce(0, +) - waitStart
        let busy = MachineLoad.busyCores(from: loadStart, to: MachineLoad.sample(), cores: 2)
        driver.closeAll()
        result.connected = connected
        let perConnection = Double(rssConnected - rssBefore) * 1024 / Double(subscribers + 1)
        let cpuPerMillion = result.delivered > 0 ? cpu / Double(result.delivered) * 1_000_000 : 0
        progress(String(format: "%@: %.0f msg/s, p99 %.1f ms, %.0f B/conn", name, result.messagesPerSecond,
                        result.p99, perConnection))
        return BenchRow(
            workload: name,
            figures: [
                ("msg/s", String(format: "%.0f", result.messagesPerSecond)),
                ("intents/s", String(format: "%.0f", result.intentsPerSecond)),
                ("p50 ms", String(format: "%.2f", result.p50)),
                ("p99 ms", String(format: "%.2f", result.p99)),
                ("KB/conn", String(format: "%.1f", perConnection / 1024)),
                ("cpu s/1M", String(format: "%.2f", cpuPerMillion)),
                ("connect s", String(format: "%.2f", result.connectSeconds)),
                ("errors", "\(result.errors + result.resyncs + result.unmatched)"),
                ("busy cores", String(format: "%.2f", busy)),
                ("srv wait s", String(format: "%.2f", serverWait)),
            ],
            json: [
                "workload": name, "subscribers": subscribers, "persistence": persistence,
                "messagesPerSecond": result.messagesPerSecond, "intentsPerSecond": result.intentsPerSecond,
                "latencyMs": ["p50": result.p50, "p99": result.p99, "max": result.maxLatency],
                "bytesPerConnection": perConnection, "cpuSecondsPerMillionMessages": cpuPerMillion,
                "connectSeconds": result.connectSeconds, "delivered": result.delivered, "acks": result.acks,
                "errors": result.errors, "resyncs": result.resyncs, "unmatched": result.unmatched,
                "busyCores": busy, "serverRunQueueWaitSeconds": serverWait, "benchCPUPercent": benchCPU,
                "rssKilobytes": ["before": rssBefore, "connected": rssConnected],
            ])
    }

    /// `/frame/scene.png` requests per second with wrk: the same state (cached)
    /// and a different wave phase per request (rendered).
    func frames() throws -> [BenchRow] {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/wrk") else {
            progress("frames: wrk is not installed (apt-get install wrk); skipped")
            return []
        }
        progress("frames: starting server")
        let server = try ServerUnderTest(binary: self.server, settings: settings(persistence: false),
                                         cpu: cpuPinning ? 0 : nil)
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let script = server.directory.appendingPathComponent("phases.lua")
        try """
            counter = 0
            request = function()
              counter = counter + 1
              return wrk.format("GET", "/frame/scene.png?w=300&h=300&phase=" .. (counter % 100) .. "&room=r" .. (counter % 97))
            end
            """.write(to: script, atomically: true, encoding: .utf8)
        var rows: [BenchRow] = []
        for (name, arguments) in [("frames cached", ["\(base)/frame/scene.png?w=300&h=300&phase=10"]),
                                  ("frames uncached", ["-s", script.path, base])] {
            progress("\(name): wrk for \(Int(seconds)) s")
            let output = try run("/usr/bin/wrk", ["-t1", "-c16", "-d\(Int(seconds))s", "--latency"] + arguments)
            let rate = output.split(separator: "\n").first { $0.contains("Requests/sec:") }
                .flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
            let non2xx = output.split(separator: "\n").first { $0.contains("Non-2xx") }.map(String.init) ?? ""
            rows.append(BenchRow(workload: name, figures: [("req/s", String(format: "%.0f", rate)),
                                                           ("notes", non2xx.isEmpty ? "" : non2xx)],
                                 json: ["workload": name, "requestsPerSecond": rate, "wrk": output]))
        }
        return rows
    }

    func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
