import Foundation

/// Crowd rooms (PROTOCOL.md section 12): N clients in one room, W of them
/// writers at R intents a second, against each `crowd.mode` and
/// `crowd.dragon` asked for; and crowds joining with presence on.
extension Workloads {
    /// A server for one crowd: the defaults a deployment has (queue limit,
    /// presence, rate limit unless the writers need more), room for everyone
    /// from one address, and the crowd keys of `variant`.
    func crowdSettings(_ variant: CrowdVariant, shape: CrowdShape, clients: Int) -> [String: Any] {
        var limits: [String: Any] = ["maxClients": max(10_000, clients + 100), "maxConnectionsPerAddress": 0]
        if shape.rate > 50 {
            limits["intentsPerSecond"] = Int(shape.rate * 2)
            limits["intentBurst"] = Int(shape.rate * 4)
        }
        return [
            "webRoot": webRoot,
            "persistence": ["enabled": shape.persistence],
            "log": ["level": "warn"],
            "limits": limits,
            "crowd": ["mode": variant.mode, "dragon": variant.dragon, "tickMs": shape.tickMs],
        ]
    }

    /// The load-average line of /proc/loadavg (1, 5 and 15 minutes).
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// One crowd under load: join, warm up, measure `shape.seconds`, drain.
    func crowd(_ shape: CrowdShape, _ variant: CrowdVariant) throws -> BenchRow {
        let seconds = shape.seconds ?? self.seconds
        let name = "crowd N=\(shape.clients) W=\(shape.writers)×\(Self.number(shape.rate))/s \(variant)"
        let loadAtStart = Self.loadAverage()
        progress("\(name): load average \(loadAtStart); starting server, \(shape.clients) clients joining " +
                 "\(shape.joinConcurrency) at a time")
        let server = try ServerUnderTest(binary: self.server, settings: crowdSettings(variant, shape: shape, clients: shape.clients),
                                         cpu: cpuPinning ? 0 : nil)
        defer { server.stop() }
        let rssBefore = server.residentKilobytes()
        let loops = try shape.client.loops(shape.loops)
        let totalSeconds = CrowdShape.warmupSeconds + seconds + 2
        let driver = CrowdDriver(loops: loops, port: server.port, shape: shape,
                                 writers: shape.writers,
                                 maxIntents: Int(Double(shape.writers) * shape.rate * totalSeconds) + shape.writers)
        defer { driver.finish() }

        let joinCPUStart = server.cpuSeconds()
        let joined = driver.join(timeout: 300)
        let joinCPU = server.cpuSeconds() - joinCPUStart
        guard joined.welcomed == shape.clients else {
            throw joinFailure(name, joined: joined, of: shape.clients, server: server)
        }
        progress(String(format: "%@: %d joined in %.2f s (server CPU %.2f s); settling 2 s", name, shape.clients,
                        joined.seconds, joinCPU))
        Thread.sleep(forTimeInterval: 2)  // the last presence batches, and the join's freed heap handed back
        let rssJoined = server.residentKilobytes()

        progress(String(format: "%@: %d writers at %@ intents/s each; %.0f s warm-up, then %.0f s measured", name,
                        shape.writers, Self.number(shape.rate), CrowdShape.warmupSeconds, seconds))
        driver.startSending()
        Thread.sleep(forTimeInterval: CrowdShape.warmupSeconds)
        let metricsBefore = server.metrics()
        let cpuStart = server.cpuSeconds(), waitStart = server.runQueueWaitSeconds()
        let benchStart = ProcessCPU.seconds()
        let machineStart = MachineLoad.sample()
        let wallStart = Date()
        driver.openWindow()
        var reported = 0.0
        while Date().timeIntervalSince(wallStart) < seconds {
            Thread.sleep(forTimeInterval: min(2, seconds - Date().timeIntervalSince(wallStart)))
            let elapsed = Date().timeIntervalSince(wallStart)
            if elapsed - reported >= 1.9 || elapsed >= seconds {
                reported = elapsed
                progress(String(format: "%@: %.0f of %.0f s, %d of %d intents acked, server CPU %.2f cores so far",
                                name, elapsed, seconds, driver.intentsAcked, driver.intentsSent,
                                (server.cpuSeconds() - cpuStart) / max(elapsed, 0.001)))
            }
        }
        driver.closeWindow()
        let wall = Date().timeIntervalSince(wallStart)
        let serverCores = (server.cpuSeconds() - cpuStart) / wall
        let serverWait = server.runQueueWaitSeconds() - waitStart
        // Pinned to one CPU the server cannot use more than a core: running or
        // ready to run all the time means it could not keep up.
        let serverBusy = (serverCores * wall + serverWait) / wall
        let benchCores = (ProcessCPU.seconds() - benchStart) / wall
        let busyCores = MachineLoad.busyCores(from: machineStart, to: MachineLoad.sample(), cores: 2)
        let rssEnd = server.residentKilobytes()

        let sent = driver.stopSending()
        progress("\(name): writers stopped after \(sent) intents; waiting up to \(Int(CrowdShape.drainSeconds)) s for their acks")
        let drained = driver.drain(timeout: CrowdShape.drainSeconds)
        Thread.sleep(forTimeInterval: 0.3)  // the observer's last tick
        let metricsAfter = server.metrics()
        let result = driver.collect()
        let loadAtEnd = Self.loadAverage()
        func delta(_ key: String) -> Double { (metricsAfter[key] ?? 0) - (metricsBefore[key] ?? 0) }

        let c = result.counts
        let votes = c.observedVotesForward + c.observedVotesBack
        let countedWithEvent = c.counted - c.countedTies
        let p99 = result.toTick.percentile(0.99)
        let over = result.toTick.limitMillis
        func latency(_ value: Double) -> String { value >= over ? ">= \(Int(over))" : String(format: "%.1f", value) }
        let others = max(0, busyCores - serverCores - benchCores)
        progress(String(format: "%@: %.1f broadcasts/s per client (max %.1f, most in 1 s %d), p99 %@ ms, %d of %d acked, " +
                        "%d resyncs, %d dropped, server %.2f cores, load average %@", name,
                        result.broadcastsPerSecond.mean, result.broadcastsPerSecond.max, result.mostBroadcastsInOneSecond,
                        latency(p99), result.intentsAcked, result.intentsSent, c.resyncs, c.dropped, serverCores, loadAtEnd))
        return BenchRow(
            workload: name,
            figures: [
                ("bcast/s mean", String(format: "%.1f", result.broadcastsPerSecond.mean)),
                ("bcast/s max", String(format: "%.1f", result.broadcastsPerSecond.max)),
                ("in 1 s", result.mostBroadcastsInOneSecond >= CrowdClient.arrivalRing
                    ? ">= \(CrowdClient.arrivalRing)" : "\(result.mostBroadcastsInOneSecond)"),
                ("KB/s mean", String(format: "%.1f", result.bytesPerSecond.mean / 1000)),
                ("KB/s max", String(format: "%.1f", result.bytesPerSecond.max / 1000)),
                ("acks/s/w", String(format: "%.2f", result.acksPerWriterPerSecond)),
                ("p50 ms", latency(result.toTick.percentile(0.5))),
                ("p99 ms", latency(p99)),
                ("ack p99 ms", latency(result.toAck.percentile(0.99))),
                ("acked", "\(result.intentsAcked)/\(result.intentsSent)"),
                ("errors", "\(c.errors)"),
                ("resyncs", "\(c.resyncs)"),
                ("gaps", "\(c.gaps)"),
                ("dropped", "\(c.dropped)"),
                ("srv cores", String(format: "%.2f", serverCores)),
                ("srv busy %", String(format: "%.0f", serverBusy * 100)),
                ("srv MB", String(format: "%.0f", Double(rssEnd) / 1024)),
                ("bench cores", String(format: "%.2f", benchCores)),
                ("others", String(format: "%.2f", others)),
                ("join s", String(format: "%.2f", joined.seconds)),
                ("dragon ev/tick", "\(c.observedMostDragonEventsInOneTick)"),
                ("votes/counted", "\(votes)/\(countedWithEvent)"),
            ],
            json: [
                "workload": name, "kind": "crowd", "clients": shape.clients, "writers": shape.writers,
                "intentsPerSecondPerWriter": shape.rate, "actions": shape.actions.rawValue,
                "mode": variant.mode, "dragon": variant.dragon, "tickMs": shape.tickMs, "persistence": shape.persistence,
                "clientLoops": shape.loops, "client": shape.client.rawValue, "windowSeconds": result.windowSeconds, "warmupSeconds": CrowdShape.warmupSeconds,
                "loadAverage": ["start": loadAtStart, "end": loadAtEnd],
                "broadcastsPerClientPerSecond": ["mean": result.broadcastsPerSecond.mean, "max": result.broadcastsPerSecond.max],
                "mostBroadcastsInOneSecond": result.mostBroadcastsInOneSecond,
                "mostBroadcastsInOneSecondCap": CrowdClient.arrivalRing,
                "broadcastCeilingPerSecond": 1000 / shape.tickMs,
                "bytesPerClientPerSecond": ["mean": result.bytesPerSecond.mean, "max": result.bytesPerSecond.max],
                "acksPerWriterPerSecond": result.acksPerWriterPerSecond,
                "intentToTickMs": ["p50": result.toTick.percentile(0.5), "p99": p99,
                                   "max": Double(result.toTick.maxMicros) / 1000, "samples": result.toTick.count,
                                   "histogramLimitMs": over],
                "intentToAckMs": ["p50": result.toAck.percentile(0.5), "p99": result.toAck.percentile(0.99),
                                  "max": Double(result.toAck.maxMicros) / 1000, "samples": result.toAck.count],
                "intentsSent": result.intentsSent, "intentsAcked": result.intentsAcked, "drained": drained,
                "acks": ["applied": c.applied, "clamped": c.clamped, "blocked": c.blocked, "unchanged": c.unchanged,
                         "counted": c.counted, "countedTies": c.countedTies, "stray": c.strayAcks,
                         "beforeTheirTick": c.acksBeforeTheirTick, "withoutTheirTick": c.acksWithoutTheirTick],
                "errors": c.errors, "firstError": c.firstError ?? "", "resyncs": c.resyncs, "gaps": c.gaps,
                "dropped": c.dropped, "firstDrop": c.firstDropReason ?? "",
                "ticks": c.ticks, "events": c.events, "presenceMessages": c.presenceMessages,
                "deliveryMessages": ["tick": c.deliveryToTick, "each": c.deliveryToEach],
                "announcedTickMs": c.announcedTickMs, "shortestAnnouncedTickMs": c.shortestAnnouncedTickMs,
                "switchToTickSeconds": result.switchToTickSeconds ?? -1,
                "mostEventsInOneTick": c.mostEventsInOneTick, "ticksWithMoreThanOneEvent": c.ticksWithMoreThanOneEvent,
                "observer": ["ticks": c.observedTicks, "dragonEvents": c.observedDragonEvents,
                             "mostDragonEventsInOneTick": c.observedMostDragonEventsInOneTick,
                             "ticksWithMoreThanOneDragonEvent": c.observedTicksWithMoreThanOneDragonEvent,
                             "votesForward": c.observedVotesForward, "votesBack": c.observedVotesBack,
                             "lastSeq": c.observerSeq, "highestAckedSeq": c.highestAckedSeq],
                "votesEqualCountedAcks": votes == countedWithEvent,
                "serverCores": serverCores, "serverRunQueueWaitSeconds": serverWait, "serverBusyShare": serverBusy,
                "benchCores": benchCores,
                "otherCores": others, "worstClientLoopLagMs": Double(c.worstLoopLag) / 1e6,
                "rssKilobytes": ["before": rssBefore, "joined": rssJoined, "end": rssEnd],
                "joinSeconds": joined.seconds, "joinServerCPUSeconds": joinCPU,
                "server": ["messagesOut": delta("happy_messages_out_total"), "bytesOut": delta("happy_bytes_out_total"),
                           "events": delta("happy_events_total"), "resyncs": delta("happy_resyncs_total"),
                           "outboxDrops": delta("happy_outbox_drops_total"),
                           "slowReaderCloses": delta("happy_slow_reader_closes_total"),
                           "readPauses": delta("happy_read_pauses_total"),
                           "connectionsAtEnd": metricsAfter["happy_connections"] ?? -1],
            ])
    }

    /// A crowd of `clients` joining one room, `shape.joinConcurrency` at a
    /// time, with presence on (batches past `crowd.presenceBatchAbove`).
    func crowdJoin(clients: Int, shape: CrowdShape) throws -> BenchRow {
        let name = "crowd join N=\(clients)"
        var joinShape = shape
        joinShape.clients = clients
        let loadAtStart = Self.loadAverage()
        progress("\(name): load average \(loadAtStart); starting server, joining \(shape.joinConcurrency) at a time")
        let server = try ServerUnderTest(binary: self.server,
                                         settings: crowdSettings(CrowdVariant(mode: "auto", dragon: "each"), shape: joinShape,
                                                                 clients: clients),
                                         cpu: cpuPinning ? 0 : nil)
        defer { server.stop() }
        let rssBefore = server.residentKilobytes()
        let loops = try shape.client.loops(shape.loops)
        let driver = CrowdDriver(loops: loops, port: server.port, shape: joinShape,
                                 writers: 0, maxIntents: 0)
        defer { driver.finish() }
        let cpuStart = server.cpuSeconds(), benchStart = ProcessCPU.seconds()
        let joined = driver.join(timeout: 300)
        let serverCPU = server.cpuSeconds() - cpuStart
        let benchCPU = ProcessCPU.seconds() - benchStart
        guard joined.welcomed == clients else {
            throw joinFailure(name, joined: joined, of: clients, server: server)
        }
        Thread.sleep(forTimeInterval: 1)  // the last presence batch
        let rssJoined = server.residentKilobytes()
        let result = driver.collect()
        let c = result.counts
        let perClient = Double(c.bytesOutsideWindow) / Double(clients)
        progress(String(format: "%@: joined in %.2f s, server CPU %.2f s, %.1f presence messages and %.1f KB per client",
                        name, joined.seconds, serverCPU, Double(c.presenceMessages) / Double(clients), perClient / 1000))
        return BenchRow(
            workload: name,
            figures: [
                ("join s", String(format: "%.2f", joined.seconds)),
                ("srv cpu s", String(format: "%.2f", serverCPU)),
                ("bench cpu s", String(format: "%.2f", benchCPU)),
                ("presence/client", String(format: "%.1f", Double(c.presenceMessages) / Double(clients))),
                ("KB/client", String(format: "%.1f", perClient / 1000)),
                ("KB/conn srv", String(format: "%.2f", Double(rssJoined - rssBefore) / Double(clients))),
            ],
            json: [
                "workload": name, "kind": "crowd join", "clients": clients, "concurrency": shape.joinConcurrency,
                "client": shape.client.rawValue,
                "joinSeconds": joined.seconds, "serverCPUSeconds": serverCPU, "benchCPUSeconds": benchCPU,
                "presenceMessages": c.presenceMessages, "presenceBytes": c.presenceBytes,
                "messagesReceived": c.messagesOutsideWindow, "bytesReceived": c.bytesOutsideWindow,
                "serverBytesPerConnection": Double(rssJoined - rssBefore) * 1024 / Double(clients),
                "loadAverage": loadAtStart,
            ])
    }

    /// Why a crowd did not join, with where to look.
    private func joinFailure(_ name: String, joined: (welcomed: Int, failed: Int, seconds: Double, firstFailure: String?),
                             of clients: Int, server: ServerUnderTest) -> BenchError {
        let pending = clients - joined.welcomed - joined.failed
        var what = "\(joined.failed) failed"
        if let first = joined.firstFailure { what += ", the first: \(first)" }
        if pending > 0 { what += "; \(pending) still joining after 300 s" }
        let serverSays = server.logText.split(separator: "\n").last.map { "; the server's last log line: \($0)" } ?? ""
        return BenchError("\(name): only \(joined.welcomed) of \(clients) clients joined (\(what)). Each client is an " +
                          "open file here and in the server: check `ulimit -n` (raise the hard limit), or try fewer " +
                          "--crowd-clients\(serverSays)")
    }

    /// 2 as "2", 0.5 as "0.5".
    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%g", value)
    }
}
