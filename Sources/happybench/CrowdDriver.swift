import Foundation
import HappyClientKit
import Synchronization

/// What one crowd run measured (`CrowdDriver.collect`).
struct CrowdResult {
    var clients = 0
    var writers = 0
    var windowSeconds = 0.0
    var intentsSent = 0
    var intentsAcked = 0
    var counts = CrowdTally.Counts()
    var toTick = LatencyHistogram(limitMillis: 20_000)
    var toAck = LatencyHistogram(limitMillis: 20_000)
    /// Broadcast messages (everything but acks, errors and the welcome) per
    /// client per second over the window: mean and the busiest client.
    var broadcastsPerSecond = (mean: 0.0, max: 0.0)
    /// The most broadcasts any client got in one second (capped at `CrowdClient.arrivalRing`).
    var mostBroadcastsInOneSecond = 0
    var bytesPerSecond = (mean: 0.0, max: 0.0)
    /// Acks per writer per second over the window.
    var acksPerWriterPerSecond = 0.0
    /// Seconds from the first intent to the observer's switch to ticks.
    var switchToTickSeconds: Double?
}

/// N connections in one room (PROTOCOL.md section 12), W of them writers
/// sending R intents a second each, evenly spread: intent k overall belongs
/// to writer k mod W and is due k/(W·R) s after the start, and its id is k.
/// Every client counts what it receives; writers time each intent from its
/// sending to the arrival of the tick (or event) whose seq range holds the
/// seq its ack names. Clients are spread over one or more client loops, each
/// with its own tallies, so that no lock is taken per message.
final class CrowdDriver: @unchecked Sendable {
    static let room = "crowd"

    let shape: CrowdShape
    private let loops: [CrowdLoop]
    private let port: Int
    private var clients: [CrowdClient] = []
    private let tallies: [CrowdTally]
    /// Where a tick's `from` value starts: the room's name comes before it.
    let tickFromOffset = #"{"type":"tick","room":""#.utf8.count + CrowdDriver.room.utf8.count + #"","from":"#.utf8.count

    private let windowStart = Atomic<UInt64>(.max)
    private let windowEnd = Atomic<UInt64>(.max)
    private let closing = Atomic<Bool>(false)

    // Intents: written by the sending thread before each send, read by the loops on its ack.
    private let capacity: Int
    private let sendTimes: UnsafeMutablePointer<UInt64>
    private let ackedFlags: UnsafeMutablePointer<UInt8>
    private let sentCount = Atomic<Int>(0)
    private let ackedCount = Atomic<Int>(0)

    // Joining, guarded by `joining`.
    private let joining = NSCondition()
    private var nextToConnect = 0
    private var welcomed = 0
    private var failed = 0
    private var firstFailure: String?
    private var lastWelcomeAt: UInt64 = 0

    // The sending thread, guarded by `sending`.
    private let sending = NSCondition()
    private var stopRequested = false
    private var senderDone = true
    private var sendingStartedAt: UInt64 = 0

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// `maxIntents`: room for every intent the run may send.
    init(loops: [CrowdLoop], port: Int, shape: CrowdShape, writers: Int, maxIntents: Int) {
        self.loops = loops
        self.port = port
        self.shape = shape
        capacity = maxIntents
        sendTimes = .allocate(capacity: max(1, maxIntents))
        sendTimes.initialize(repeating: 0, count: max(1, maxIntents))
        ackedFlags = .allocate(capacity: max(1, maxIntents))
        ackedFlags.initialize(repeating: 0, count: max(1, maxIntents))
        tallies = loops.map { _ in CrowdTally() }
        clients = (0..<shape.clients).map { index in
            CrowdClient(index: index, isWriter: index < writers, isObserver: index == shape.clients - 1,
                        driver: self, tally: tallies[index % loops.count])
        }
    }

    deinit {
        sendTimes.deallocate()
        ackedFlags.deallocate()
    }

    var isClosing: Bool { closing.load(ordering: .relaxed) }

    /// Microseconds into the measured window, or nil outside it.
    @inline(__always)
    func windowOffset(of time: UInt64) -> UInt32? {
        let start = windowStart.load(ordering: .relaxed)
        guard time >= start, time < windowEnd.load(ordering: .relaxed) else { return nil }
        return UInt32(truncatingIfNeeded: (time - start) / 1000)
    }

    // MARK: joining

    /// Connects everybody, `shape.joinConcurrency` at a time; how many were
    /// welcomed, failed, and the seconds from the first connect to the last welcome.
    func join(timeout: Double) -> (welcomed: Int, failed: Int, seconds: Double, firstFailure: String?) {
        joining.lock(); defer { joining.unlock() }
        let started = Self.now()
        for _ in 0..<min(shape.joinConcurrency, clients.count) { connectNext() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while welcomed + failed < clients.count && Date() < deadline { _ = joining.wait(until: deadline) }
        let seconds = lastWelcomeAt > started ? Double(lastWelcomeAt - started) / 1e9 : 0
        return (welcomed, failed, seconds, firstFailure)
    }

    /// Must hold `joining`.
    private func connectNext() {
        guard nextToConnect < clients.count else { return }
        let client = clients[nextToConnect]
        nextToConnect += 1
        let name = client.isWriter ? "w\(client.index)" : "r\(client.index)"
        client.link = loops[client.index % loops.count].open(client, port: port,
                                                             path: "/ws?room=\(Self.room)&name=\(name)")
    }

    /// A client's welcome (on its loop's thread): the next one may connect.
    func didWelcome() {
        joining.lock(); defer { joining.unlock() }
        welcomed += 1
        lastWelcomeAt = Self.now()
        connectNext()
        if welcomed + failed >= clients.count { joining.broadcast() }
    }

    func joinFailed(_ why: String) {
        joining.lock(); defer { joining.unlock() }
        failed += 1
        if firstFailure == nil { firstFailure = why }
        connectNext()
        if welcomed + failed >= clients.count { joining.broadcast() }
    }

    // MARK: sending

    /// Starts the writers (on a thread of their own) until `stopSending`.
    func startSending() {
        sending.lock()
        stopRequested = false
        senderDone = false
        sendingStartedAt = Self.now()
        sending.unlock()
        let thread = Thread { [self] in sendLoop() }
        thread.name = "crowd-writers"
        thread.start()
    }

    /// Stops the writers; the number of intents sent.
    func stopSending() -> Int {
        sending.lock()
        stopRequested = true
        while !senderDone { sending.wait() }
        sending.unlock()
        return sentCount.load(ordering: .acquiring)
    }

    var intentsSent: Int { sentCount.load(ordering: .relaxed) }
    var intentsAcked: Int { ackedCount.load(ordering: .relaxed) }

    /// Sends what is due about once a millisecond, and probes each loop's
    /// delay every 10 ms (a loop that falls behind its sockets delays everything it measures).
    private func sendLoop() {
        let writers = max(1, clients.filter(\.isWriter).count)
        let step = 1e9 / (Double(writers) * shape.rate)
        let started = sendingStartedAt
        var next = 0
        var nextProbe = started
        while true {
            sending.lock()
            if stopRequested {
                senderDone = true
                sending.broadcast()
                sending.unlock()
                return
            }
            sending.unlock()
            let now = Self.now()
            let due = min(capacity, Int(Double(now - started) / step) + 1)
            while next < due {
                send(intent: next, writer: next % writers, turn: next / writers)
                next += 1
            }
            sentCount.store(next, ordering: .releasing)
            if now >= nextProbe {
                nextProbe = now + 10_000_000
                for (loop, tally) in zip(loops, tallies) {
                    let posted = Self.now()
                    loop.perform { tally.counts.worstLoopLag = max(tally.counts.worstLoopLag, Self.now() - posted) }
                }
            }
            let nextDue = started + UInt64(Double(next) * step)
            let wake = min(nextDue, nextProbe), before = Self.now()
            Thread.sleep(forTimeInterval: max(0.0005, wake > before ? Double(wake - before) / 1e9 : 0))
        }
    }

    private func send(intent k: Int, writer: Int, turn: Int) {
        sendTimes[k] = Self.now()
        let action: Action
        switch shape.actions {
        case .dragon:
            action = turn % 2 == 0 ? .dragonForward : .dragonBack
        case .mix:
            action = [.dragonForward, .nudgeHappiness(5), .dragonBack, .nudgeHappiness(-5)][turn % 4]
        }
        clients[writer].link?.send(text: IntentEncoder.intent(action, id: "\(k)"))
    }

    /// Intent `k` was acked (on a loop's thread): when it was sent, or nil for
    /// an intent never sent or acked before.
    func acknowledge(intent k: Int) -> UInt64? {
        guard k >= 0, k < capacity, ackedFlags[k] == 0 else { return nil }
        let sent = sendTimes[k]
        guard sent != 0 else { return nil }
        ackedFlags[k] = 1
        ackedCount.add(1, ordering: .relaxed)
        return sent
    }

    // MARK: measuring

    func openWindow() { windowStart.store(Self.now(), ordering: .relaxed) }
    func closeWindow() { windowEnd.store(Self.now(), ordering: .relaxed) }

    /// Waits until every intent sent is acked, at most `timeout` seconds; whether they were.
    func drain(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while intentsAcked < intentsSent && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return intentsAcked >= intentsSent
    }

    /// Everyone's tallies and per-client figures, each read on its own loop's thread.
    func collect() -> CrowdResult {
        var result = CrowdResult()
        result.clients = clients.count
        result.writers = clients.filter(\.isWriter).count
        let start = windowStart.load(ordering: .relaxed), end = windowEnd.load(ordering: .relaxed)
        let seconds = start < end && end != .max ? Double(end - start) / 1e9 : 0
        result.windowSeconds = seconds
        result.intentsSent = intentsSent
        result.intentsAcked = intentsAcked
        struct PerLoop {
            var counts = CrowdTally.Counts()
            var toTick = LatencyHistogram(limitMillis: 20_000)
            var toAck = LatencyHistogram(limitMillis: 20_000)
            var broadcasts = 0, broadcastsMax = 0, bytes = 0, bytesMax = 0, mostInOneSecond = 0, writerAcks = 0
        }
        let gathered = Gathered<PerLoop>()
        for (index, loop) in loops.enumerated() {
            let done = DispatchSemaphore(value: 0)
            let tally = tallies[index]
            let mine = stride(from: index, to: clients.count, by: loops.count).map { clients[$0] }
            loop.perform {
                var figures = PerLoop(counts: tally.counts, toTick: tally.toTick, toAck: tally.toAck)
                for client in mine {
                    figures.broadcasts += client.broadcasts
                    figures.broadcastsMax = max(figures.broadcastsMax, client.broadcasts)
                    figures.bytes += client.bytes
                    figures.bytesMax = max(figures.bytesMax, client.bytes)
                    figures.mostInOneSecond = max(figures.mostInOneSecond, client.mostBroadcastsInOneSecond)
                    if client.isWriter { figures.writerAcks += client.acks }
                }
                gathered.append(figures)
                done.signal()
            }
            if done.wait(timeout: .now() + 30) == .timedOut {
                FileHandle.standardError.write(Data("happybench: crowd: client loop \(index) did not answer in 30 s; its clients are left out\n".utf8))
            }
        }
        var broadcasts = 0, broadcastsMax = 0, bytes = 0, bytesMax = 0, writerAcks = 0
        for figures in gathered.items {
            result.counts.add(figures.counts)
            result.toTick.merge(figures.toTick)
            result.toAck.merge(figures.toAck)
            broadcasts += figures.broadcasts
            broadcastsMax = max(broadcastsMax, figures.broadcastsMax)
            bytes += figures.bytes
            bytesMax = max(bytesMax, figures.bytesMax)
            result.mostBroadcastsInOneSecond = max(result.mostBroadcastsInOneSecond, figures.mostInOneSecond)
            writerAcks += figures.writerAcks
        }
        if seconds > 0 {
            let n = Double(clients.count)
            result.broadcastsPerSecond = (Double(broadcasts) / n / seconds, Double(broadcastsMax) / seconds)
            result.bytesPerSecond = (Double(bytes) / n / seconds, Double(bytesMax) / seconds)
            result.acksPerWriterPerSecond = Double(writerAcks) / Double(max(1, result.writers)) / seconds
        }
        if let switched = result.counts.observedSwitchToTickAt, sendingStartedAt > 0 {
            result.switchToTickSeconds = (Double(switched) - Double(sendingStartedAt)) / 1e9
        }
        return result
    }

    /// Drops every connection (the server sees them go; nothing counts as
    /// dropped from here) and stops the loops, whose last callbacks still
    /// reach the clients, so while this driver lives.
    func finish() {
        closing.store(true, ordering: .relaxed)
        for client in clients { client.link?.abort() }
        for loop in loops { loop.shutdown() }
    }
}

/// What the loops hand back to `collect`, each from its own thread.
private final class Gathered<Item>: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Item] = []

    func append(_ item: Item) {
        lock.lock(); defer { lock.unlock() }
        list.append(item)
    }

    var items: [Item] {
        lock.lock(); defer { lock.unlock() }
        return list
    }
}

extension CrowdTally.Counts {
    /// Adds another loop's counts (the observer's are on one loop only).
    mutating func add(_ other: CrowdTally.Counts) {
        welcomed += other.welcomed
        failed += other.failed
        dropped += other.dropped
        firstDropReason = firstDropReason ?? other.firstDropReason
        acks += other.acks
        strayAcks += other.strayAcks
        applied += other.applied
        clamped += other.clamped
        blocked += other.blocked
        unchanged += other.unchanged
        counted += other.counted
        countedTies += other.countedTies
        acksBeforeTheirTick += other.acksBeforeTheirTick
        acksWithoutTheirTick += other.acksWithoutTheirTick
        highestAckedSeq = max(highestAckedSeq, other.highestAckedSeq)
        errors += other.errors
        firstError = firstError ?? other.firstError
        resyncs += other.resyncs
        gaps += other.gaps
        ticks += other.ticks
        events += other.events
        presenceMessages += other.presenceMessages
        presenceBytes += other.presenceBytes
        deliveryToTick += other.deliveryToTick
        deliveryToEach += other.deliveryToEach
        announcedTickMs = max(announcedTickMs, other.announcedTickMs)
        shortestAnnouncedTickMs = CrowdClient.shorter(shortestAnnouncedTickMs, other.shortestAnnouncedTickMs)
        mostEventsInOneTick = max(mostEventsInOneTick, other.mostEventsInOneTick)
        ticksWithMoreThanOneEvent += other.ticksWithMoreThanOneEvent
        messagesOutsideWindow += other.messagesOutsideWindow
        bytesOutsideWindow += other.bytesOutsideWindow
        worstLoopLag = max(worstLoopLag, other.worstLoopLag)
        observedTicks += other.observedTicks
        observedDragonEvents += other.observedDragonEvents
        observedMostDragonEventsInOneTick = max(observedMostDragonEventsInOneTick, other.observedMostDragonEventsInOneTick)
        observedTicksWithMoreThanOneDragonEvent += other.observedTicksWithMoreThanOneDragonEvent
        observedVotesForward += other.observedVotesForward
        observedVotesBack += other.observedVotesBack
        observerSeq = max(observerSeq, other.observerSeq)
        observedSwitchToTickAt = observedSwitchToTickAt ?? other.observedSwitchToTickAt
    }
}
