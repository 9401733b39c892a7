import Foundation
import HappyClientKit

/// How the held-connections workload is shaped (`--hold-*` flags).
struct HoldShape {
    /// Connections held, the publisher included. The default stays under
    /// the 20 000 open files a process may have, with room for the rest.
    var connections = 19_000
    /// Seconds of one event a second to everybody.
    var broadcastSeconds = 60.0
    /// Seconds of silence in which the server's idle CPU is measured: a
    /// few of the server's keepalive sweeps (every 10 s at the defaults).
    var idleSeconds = 60.0
    /// The server's `limits.pingIntervalSeconds`: its default, as deployed.
    var pingIntervalSeconds = 20.0
}

extension Workloads {
    /// A full machine of connections: `shape.connections` WebSockets held on
    /// one server that pings every silent one every `pingIntervalSeconds`,
    /// one event a second broadcast to all of them, then a quiet window.
    /// Reports the server's memory per connection, send-to-arrival latency
    /// at every receiver, and its CPU while nothing happens but pings.
    func hold(_ shape: HoldShape) throws -> BenchRow {
        let name = "held \(shape.connections)"
        var config = settings(persistence: false)
        var limits = config["limits"] as? [String: Any] ?? [:]
        limits["maxClients"] = shape.connections + 100
        limits["pingIntervalSeconds"] = shape.pingIntervalSeconds
        limits["pingTimeoutSeconds"] = 10
        config["limits"] = limits
        progress("\(name): starting server, connecting \(shape.connections) clients")
        let server = try ServerUnderTest(binary: self.server, settings: config, cpu: cpuPinning ? 0 : nil)
        defer { server.stop() }
        let rssBefore = server.residentKilobytes()
        let url = "ws://127.0.0.1:\(server.port)/ws"

        let loop = try ClientLoop(name: "hold")
        defer { loop.shutdown() }
        let started = Date()
        let driver = FanoutDriver(loop: loop, urls: [url], subscribers: shape.connections - 1, pace: .rate(1))
        let connected = driver.connect(timeout: 300)
        guard connected == shape.connections else {
            throw BenchError("\(name): only \(connected) of \(shape.connections) clients connected")
        }
        let connectSeconds = Date().timeIntervalSince(started)
        Thread.sleep(forTimeInterval: 2)  // the join storm's freed heap goes back first
        let rssConnected = server.residentKilobytes()
        progress(String(format: "%@: %d connected in %.1f s; one event a second for %.0f s", name,
                        shape.connections, connectSeconds, shape.broadcastSeconds))

        let busyCPUStart = server.cpuSeconds(), benchCPUStart = ProcessCPU.seconds()
        let busyWaitStart = server.runQueueWaitSeconds()
        let result = driver.publish(seconds: shape.broadcastSeconds)
        // Over the broadcasts: the server's CPU, and this load generator's
        // (near 100 %, the latency is its own reading of the sockets).
        let busyCPU = (server.cpuSeconds() - busyCPUStart) / result.publishSeconds * 100
        let benchCPU = (ProcessCPU.seconds() - benchCPUStart) / result.publishSeconds * 100
        // Time the server was ready to run but other processes held its core.
        let busyWait = server.runQueueWaitSeconds() - busyWaitStart
        let rssAfterBroadcasts = server.residentKilobytes()

        // Nothing but keepalive from here: every connection is pinged at
        // least once in a window longer than the ping interval.
        progress(String(format: "%@: quiet for %.0f s (pings every %.0f s per connection)", name,
                        shape.idleSeconds, shape.pingIntervalSeconds))
        let idleCPUStart = server.cpuSeconds(), idleWaitStart = server.runQueueWaitSeconds()
        let idleStart = Date()
        Thread.sleep(forTimeInterval: shape.idleSeconds)
        let idleWall = Date().timeIntervalSince(idleStart)
        let idleCPU = (server.cpuSeconds() - idleCPUStart) / idleWall * 100
        let idleWait = server.runQueueWaitSeconds() - idleWaitStart
        let serverMetrics = server.metrics()
        let stillOpen = Int(serverMetrics["happy_connections"] ?? -1)
        let pingTimeouts = Int(serverMetrics["happy_ping_timeouts_total"] ?? -1)
        driver.closeAll()

        let perConnection = Double(rssConnected - rssBefore) * 1024 / Double(shape.connections)
        let perConnectionAfter = Double(rssAfterBroadcasts - rssBefore) * 1024 / Double(shape.connections)
        let expected = result.intentsSent * shape.connections
        progress(String(format: "%@: %.2f KB/conn (%.2f after the broadcasts), p50 %.1f ms, p99 %.1f ms, idle CPU %.2f %%",
                        name, perConnection / 1024, perConnectionAfter / 1024, result.p50, result.p99, idleCPU))
        return BenchRow(
            workload: name,
            figures: [
                ("KB/conn", String(format: "%.2f", perConnection / 1024)),
                ("KB/conn after", String(format: "%.2f", perConnectionAfter / 1024)),
                ("p50 ms", String(format: "%.2f", result.p50)),
                // The histogram ends at 2 s.
                ("p99 ms", result.p99 >= 2000 ? ">= 2000" : String(format: "%.2f", result.p99)),
                ("idle cpu %", String(format: "%.2f", idleCPU)),
                ("busy cpu %", String(format: "%.1f", busyCPU)),
                ("bench cpu %", String(format: "%.0f", benchCPU)),
                ("srv wait s", String(format: "%.1f", busyWait)),
                ("delivered", "\(result.delivered)/\(expected)"),
                ("connect s", String(format: "%.1f", connectSeconds)),
                ("open at end", "\(stillOpen)"),
                ("ping timeouts", "\(pingTimeouts)"),
            ],
            json: [
                "workload": name, "connections": shape.connections, "pingIntervalSeconds": shape.pingIntervalSeconds,
                "broadcastSeconds": shape.broadcastSeconds,
                "idleSeconds": idleWall, "bytesPerConnection": perConnection,
                "bytesPerConnectionAfterBroadcasts": perConnectionAfter,
                "latencyMs": ["p50": result.p50, "p99": result.p99, "max": result.maxLatency],
                "idleCPUPercent": idleCPU, "broadcastCPUPercent": busyCPU, "benchCPUPercent": benchCPU,
                "broadcastRunQueueWaitSeconds": busyWait, "idleRunQueueWaitSeconds": idleWait,
                "eventsSent": result.intentsSent, "delivered": result.delivered, "expected": expected,
                "errors": result.errors, "resyncs": result.resyncs, "unmatched": result.unmatched,
                "connectSeconds": connectSeconds, "openAtEnd": stillOpen, "pingTimeouts": pingTimeouts,
                "rssKilobytes": ["before": rssBefore, "connected": rssConnected, "afterBroadcasts": rssAfterBroadcasts],
            ])
    }
}
