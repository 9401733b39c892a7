import Foundation
import HappyClientKit
import HappyCore
import XCTest

/// A minute of hostile traffic at once (floods, readers that never read,
/// junk bytes, reconnect churn, HTTP room spraying) while one well-behaved
/// client keeps working. The server's resident memory, sampled every second,
/// must stay under a bound derived from its limits. `HAPPY_HOSTILE_SECONDS`
/// shortens the run (default 60).
final class HostileMixTests: XCTestCase {
    static let seconds = Double(ProcessInfo.processInfo.environment["HAPPY_HOSTILE_SECONDS"] ?? "") ?? 60
    static let maxQueuedBytes = 256 * 1024
    static let historySize = 300
    static let maxRooms = 50
    static let slowReaderCount = 6
    static var limits: [String: Any] { [
        "maxQueuedBytes": maxQueuedBytes, "writeTimeoutSeconds": 4, "intentsPerSecond": 100, "intentBurst": 100,
        "floodLimit": 50, "historySize": historySize, "maxRooms": maxRooms,
        "pingIntervalSeconds": 5, "pingTimeoutSeconds": 5,
    ] }

    func testServerMemoryStaysBoundedUnderAHostileMix() throws {
        let server = try ServerProcess(["limits": Self.limits, "persistence": ["fsync": false]])
        let hostileLoop = try ClientLoop(name: "hostile-clients")
        let (steady, _) = try TestClient.join(server, room: "mix", name: "steady")
        try warmUp(steady)
        let baseline = server.residentBytes()
        XCTAssertGreaterThan(baseline, 1_000_000, "the server's resident memory could not be read")

        let deadline = Date(timeIntervalSinceNow: Self.seconds)
        let stats = MixStats()
        let port = server.port
        let sampler = MemorySampler(server)
        let actors: [(String, @Sendable () -> Void)] = [
            ("memory sampler", { sampler.run(until: deadline) }),
            ("flooder", { Self.flood(port: port, loop: hostileLoop, until: deadline, stats) }),
            ("flooder", { Self.flood(port: port, loop: hostileLoop, until: deadline, stats) }),
            ("slow readers", { Self.slowReaders(port: port, until: deadline, stats) }),
            ("junk", { Self.junk(port: port, seed: 1, until: deadline, stats) }),
            ("junk", { Self.junk(port: port, seed: 2, until: deadline, stats) }),
            ("churn", { Self.churn(port: port, loop: hostileLoop, until: deadline, stats) }),
            ("rooms", { Self.roomSpray(port: port, until: deadline, stats) }),
        ]
        let group = DispatchGroup()
        for (name, body) in actors {
            group.enter()
            let thread = Thread { body(); group.leave() }
            thread.name = name
            thread.start()
        }

        var acked = 0, latencies: [Double] = []
        var index = 0
        while Date() < deadline {
            index += 1
            let sent = Date()
            steady.intent("face.setHappiness", id: "s\(index)", ["value": index % 101])
            guard let ack = steady.next(type: "ack", timeout: 5) else {
                XCTFail("the well-behaved client got no ack for s\(index) after \(acked) acks")
                break
            }
            XCTAssertEqual(ack["id"]?.stringValue, "s\(index)")
            acked += 1
            latencies.append(Date().timeIntervalSince(sent))
            _ = steady.drain(for: 0)  // lets go of the flood's events, kept while waiting for the ack
            Thread.sleep(forTimeInterval: 0.1)
        }
        group.wait()
        let samples = sampler.samples + [server.residentBytes()]

        let bound = baseline + Self.memoryAllowance
        let maxLatency = latencies.max() ?? 0
        latencies.sort()
        let median = latencies.isEmpty ? 0 : latencies[latencies.count / 2]
        let p95 = latencies.isEmpty ? 0 : latencies[latencies.count * 95 / 100]
        let mb = { (bytes: Int) in String(format: "%.1f MB", Double(bytes) / 1e6) }
        print("hostile mix, \(Int(Self.seconds)) s: server RSS baseline \(mb(baseline)), min \(mb(samples.min() ?? 0)), "
              + "max \(mb(samples.max() ?? 0)), bound \(mb(bound)); steady client: \(acked) acks, median "
              + String(format: "%.0f ms, p95 %.0f ms, max %.0f ms; ", median * 1000, p95 * 1000, maxLatency * 1000) + stats.summary)
        // A sample of 0 means /proc could not be read: the bound would then prove nothing.
        XCTAssertGreaterThanOrEqual(samples.count, Int(Self.seconds / 2), "the sampler fell behind")
        XCTAssertGreaterThan(samples.min() ?? 0, 1_000_000, "server RSS samples: \(samples.map(mb))")
        XCTAssertLessThan(samples.max() ?? 0, bound, "server RSS samples: \(samples.map(mb))")
        // One intent per 100 ms plus its round trip (about 25 ms here): at least 4 a second.
        XCTAssertGreaterThanOrEqual(acked, Int(Self.seconds * 4), "the well-behaved client was starved")
        // Typically 25 ms; the bounds leave room for a stall of the busy
        // two-core machine, yet catch a client that waits behind the mix.
        XCTAssertLessThan(p95, 0.5, "acks were slow for the well-behaved client")
        XCTAssertLessThan(maxLatency, 3, "an ack took too long")
        XCTAssertTrue(server.isRunning)

        let metrics = try server.metricsText()
        // Slow readers lose broadcasts (outbox drops); those that never read
        // again are dropped before any resync is written to them.
        for counter in ["happy_flood_closes_total", "happy_outbox_drops_total", "happy_slow_reader_closes_total"] {
            let value = try XCTUnwrap(metricValue(metrics, counter), "\(counter) is not reported")
            XCTAssertGreaterThan(value, 0, "\(counter) stayed 0: the mix did not do its job")
        }
        XCTAssertGreaterThan(stats[.junkConnections], 0)
        XCTAssertGreaterThan(stats[.churnConnections], 0)
    }

    /// What the limits let the server hold on top of its warmed-up baseline
    /// (which already holds the busy room's full history): each reader that
    /// never reads at most twice `maxQueuedBytes` (its replies stop reading
    /// it past one, its room's events stop at the other), each room without clients that may stay in
    /// memory (`maxRooms` of them) a small scene and an empty history, and
    /// 16 MB for the allocator and the buffers of connections that come and
    /// go (thousands of them: a leak of 1 KB each would show).
    static var memoryAllowance: Int {
        slowReaderCount * 2 * maxQueuedBytes + maxRooms * 16 * 1024 + 16_000_000
    }

    /// Fills the busy room's history (and the allocator's pools) before the
    /// baseline is taken, in batches the rate limit lets through.
    private func warmUp(_ client: TestClient) throws {
        for batch in 0..<(Self.historySize / 50) {
            for index in 0..<50 { client.intent("dragon.toggleHidden", id: "w\(batch)-\(index)") }
            for index in 0..<50 {
                let ack = try XCTUnwrap(client.next(type: "ack"), "warm-up ack \(batch)-\(index)")
                XCTAssertEqual(ack["id"]?.stringValue, "w\(batch)-\(index)")
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
        _ = client.drain(for: 0.5)
    }

    // MARK: the hostile actors

    /// Intents far over the rate limit until closed with 1008, again and again.
    static func flood(port: Int, loop: ClientLoop, until deadline: Date, _ stats: MixStats) {
        while Date() < deadline {
            let client = TestClient(url: "ws://127.0.0.1:\(port)/ws", query: [("room", "mix")], loop: loop)
            for index in 0..<1000 { client.intent("face.setHappiness", id: "f\(index)", ["value": index % 100]) }
            if client.waitForClose(timeout: 10) == .some(1008) { stats.add(.floodCloses) }
            client.close()
        }
    }

    /// Readers that stop reading right after the welcome, with tiny receive
    /// buffers; each is replaced after 10 s, by when the server has resynced
    /// and dropped it (`writeTimeoutSeconds` is 4).
    static func slowReaders(port: Int, until deadline: Date, _ stats: MixStats) {
        var readers: [(socket: RawWebSocket, opened: Date)] = []
        while Date() < deadline {
            readers.removeAll { Date().timeIntervalSince($0.opened) > 10 }
            while readers.count < slowReaderCount, Date() < deadline {
                guard let reader = try? RawWebSocket(port: port, target: "/ws?room=mix", receiveBuffer: 4096) else { break }
                _ = reader.nextFrame()
                readers.append((reader, Date()))
                stats.add(.slowReaders)
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
    }

    /// Random bytes, bad UTF-8, binary, oversize and unfinished frames, one connection each.
    static func junk(port: Int, seed: UInt64, until deadline: Date, _ stats: MixStats) {
        var random = SplitMix64(seed: seed)
        while Date() < deadline {
            let kind = random.next() % 5
            if kind == 0 {
                guard let socket = try? RawSocket(port: port, timeout: 1) else { continue }
                try? socket.send((0..<Int(random.next() % 2000 + 1)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
                _ = socket.readToEnd()
            } else {
                guard let socket = try? RawWebSocket(port: port, target: "/ws?room=junk", timeout: 2) else { continue }
                switch kind {
                case 1: try? socket.send(opcode: 0x1, [0xC3, 0x28])
                case 2: try? socket.send(opcode: 0x2, [1, 2, 3])
                case 3: try? socket.send(opcode: 0x1, Array(repeating: 0x20, count: 5000))
                default: try? socket.send(opcode: 0x1, Array(repeating: 0x20, count: 3000), fin: false)
                }
                _ = socket.readUntilClose()
            }
            stats.add(.junkConnections)
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// Clients that join, say one thing and leave, or vanish without a close.
    static func churn(port: Int, loop: ClientLoop, until deadline: Date, _ stats: MixStats) {
        var count = 0
        while Date() < deadline {
            count += 1
            let client = TestClient(url: "ws://127.0.0.1:\(port)/ws", query: [("room", "mix"), ("name", "churn\(count)")], loop: loop)
            if client.next(type: "welcome", timeout: 5) != nil { stats.add(.churnConnections) }
            client.intent("dragon.forward", id: "c")
            if count % 2 == 0 { client.close() } else { client.connection.abort() }
            _ = client.waitForClose(timeout: 2)
        }
    }

    /// `GET /api/state` for ever new room names, the way to make rooms without a WebSocket.
    static func roomSpray(port: Int, until deadline: Date, _ stats: MixStats) {
        var count = 0
        while Date() < deadline {
            count += 1
            if (try? RawHTTP.get(port: port, target: "/api/state?room=spray\(count)", timeout: 2))?.status == 200 {
                stats.add(.sprayedRooms)
            }
        }
    }
}

/// The server's resident memory, once a second.
final class MemorySampler: @unchecked Sendable {
    private let server: ServerProcess
    private let lock = NSLock()
    private var taken: [Int] = []

    init(_ server: ServerProcess) { self.server = server }

    var samples: [Int] { lock.withLock { taken } }

    func run(until deadline: Date) {
        while Date() < deadline {
            let bytes = server.residentBytes()
            lock.withLock { taken.append(bytes) }
            Thread.sleep(forTimeInterval: 1)
        }
    }
}

/// Counters the hostile actors share.
final class MixStats: @unchecked Sendable {
    enum Counter: String, CaseIterable {
        case floodCloses = "flood closes", slowReaders = "slow readers", junkConnections = "junk connections"
        case churnConnections = "churn connections", sprayedRooms = "sprayed rooms"
    }

    private let lock = NSLock()
    private var counts: [Counter: Int] = [:]

    func add(_ counter: Counter) {
        lock.withLock { counts[counter, default: 0] += 1 }
    }

    subscript(counter: Counter) -> Int { lock.withLock { counts[counter, default: 0] } }

    var summary: String {
        Counter.allCases.map { "\($0.rawValue) \(self[$0])" }.joined(separator: ", ")
    }
}
