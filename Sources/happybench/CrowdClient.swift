import Foundation

/// What the clients of one client loop counted. Touched only on that loop's
/// thread; `CrowdDriver.collect` reads it there.
final class CrowdTally: @unchecked Sendable {
    struct Counts {
        var welcomed = 0
        /// Connections that failed before their welcome.
        var failed = 0
        /// Connections the server closed after their welcome.
        var dropped = 0
        var firstDropReason: String?
        var acks = 0
        /// Acks of an intent acked before, or of no intent sent.
        var strayAcks = 0
        var applied = 0, clamped = 0, blocked = 0, unchanged = 0, counted = 0
        /// `counted` acks of a tie (seq 0): their round moved nothing and sent nothing.
        var countedTies = 0
        /// Acks that came before the tick (or event) carrying their seq: the protocol says after.
        var acksBeforeTheirTick = 0
        /// Acks whose tick could not be found among the connection's latest (a resync skipped it).
        var acksWithoutTheirTick = 0
        var highestAckedSeq: UInt64 = 0
        var errors = 0
        var firstError: String?
        var resyncs = 0
        /// Ticks or events whose `from` left out events after the connection's last seq.
        var gaps = 0
        var ticks = 0
        var events = 0
        var presenceMessages = 0
        var presenceBytes = 0
        var deliveryToTick = 0
        var deliveryToEach = 0
        /// The longest tick the server announced (a big room, or a busy server, ticks less often).
        var announcedTickMs: UInt64 = 0
        /// The shortest (0: none announced); the tick adapts while the room runs.
        var shortestAnnouncedTickMs: UInt64 = 0
        /// The most events one tick carried at any client, and ticks with more than one.
        var mostEventsInOneTick: UInt64 = 0
        var ticksWithMoreThanOneEvent = 0
        /// Everything received outside the measured window (joins, warm-up, drain).
        var messagesOutsideWindow = 0
        var bytesOutsideWindow = 0
        /// The client loop's worst delay in running a probe posted to it (ns).
        var worstLoopLag: UInt64 = 0
        // One client (the observer) also reads names and votes.
        var observedTicks = 0
        var observedDragonEvents = 0
        var observedMostDragonEventsInOneTick = 0
        var observedTicksWithMoreThanOneDragonEvent = 0
        var observedVotesForward = 0
        var observedVotesBack = 0
        var observerSeq: UInt64 = 0
        /// When the observer was told of a switch to tick delivery (ns, monotonic).
        var observedSwitchToTickAt: UInt64?
    }

    var counts = Counts()
    /// From an intent to the tick (or event) that carried it, and to its ack
    /// (which follows that tick; a client resynced past its tick has only the ack).
    var toTick = LatencyHistogram(limitMillis: 20_000)
    var toAck = LatencyHistogram(limitMillis: 20_000)
}

/// One connection of the crowd and what it received, called by its loop
/// directly so that a message reaches its counters without a lookup.
/// Readers only count and check seqs; writers also match acks to the tick
/// that carried them.
final class CrowdClient: SocketClient, @unchecked Sendable {
    let index: Int
    let isWriter: Bool
    let isObserver: Bool
    unowned let driver: CrowdDriver
    let tally: CrowdTally
    var link: CrowdLink?

    private var welcomed = false
    private var lastSeq: UInt64 = 0

    // In the measured window.
    private(set) var broadcasts = 0
    private(set) var acks = 0
    private(set) var bytes = 0
    private(set) var mostBroadcastsInOneSecond = 0
    /// Arrivals of the latest broadcasts (µs into the window), a ring.
    private var recentArrivals: [UInt32]
    private var arrivalsSeen = 0

    /// Writers: the latest seq ranges delivered (`from`, `seq`, arrival in ns), a ring.
    private var carried: [(from: UInt64, seq: UInt64, at: UInt64)]
    private var carriedSeen = 0

    static let arrivalRing = 64
    static let carriedRing = 8

    init(index: Int, isWriter: Bool, isObserver: Bool, driver: CrowdDriver, tally: CrowdTally) {
        self.index = index
        self.isWriter = isWriter
        self.isObserver = isObserver
        self.driver = driver
        self.tally = tally
        recentArrivals = [UInt32](repeating: 0, count: Self.arrivalRing)
        carried = isWriter ? Array(repeating: (0, 0, 0), count: Self.carriedRing) : []
    }

    // MARK: loop thread

    /// One whole message from the server.
    func receive(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 12 else { return }
        let now = CrowdDriver.now()
        let window = driver.windowOffset(of: now)
        // Messages start with {"type":"<t>..., the server writes "type" first.
        switch (bytes[9], bytes[10]) {
        case (UInt8(ascii: "t"), _):
            received(bytes.count, broadcast: true, window: window)
            tick(bytes, at: now)
        case (UInt8(ascii: "e"), UInt8(ascii: "v")):
            received(bytes.count, broadcast: true, window: window)
            event(bytes, at: now)
        case (UInt8(ascii: "a"), _):
            received(bytes.count, broadcast: false, window: window)
            if window != nil { acks += 1 }
            ack(bytes, at: now)
        case (UInt8(ascii: "p"), UInt8(ascii: "r")):
            received(bytes.count, broadcast: true, window: window)
            tally.counts.presenceMessages += 1
            tally.counts.presenceBytes += bytes.count
        case (UInt8(ascii: "d"), _):
            received(bytes.count, broadcast: true, window: window)
            delivery(bytes, at: now)
        case (UInt8(ascii: "r"), _):
            received(bytes.count, broadcast: true, window: window)
            tally.counts.resyncs += 1
            if let seq = MessageScan.unsigned(after: Self.seqKey, in: bytes, from: 0)?.value { lastSeq = seq }
        case (UInt8(ascii: "e"), _):
            received(bytes.count, broadcast: false, window: window)
            tally.counts.errors += 1
            if tally.counts.firstError == nil { tally.counts.firstError = String(decoding: bytes.prefix(200), as: UTF8.self) }
        case (UInt8(ascii: "w"), _):
            received(bytes.count, broadcast: false, window: window)
            welcome(bytes)
        default:
            received(bytes.count, broadcast: true, window: window)
        }
    }

    /// The connection ended (or never opened), for `why`.
    func ended(_ why: String, closeCode: Int? = nil) {
        guard !driver.isClosing else { return }
        if welcomed {
            tally.counts.dropped += 1
            if tally.counts.firstDropReason == nil { tally.counts.firstDropReason = "client \(index) \(why)" }
        } else {
            tally.counts.failed += 1
            driver.joinFailed(why)
        }
    }

    /// Counts a message, in the measured window or outside it.
    @inline(__always)
    private func received(_ count: Int, broadcast: Bool, window: UInt32?) {
        guard let window else {
            tally.counts.messagesOutsideWindow += 1
            tally.counts.bytesOutsideWindow += count
            return
        }
        bytes += count
        guard broadcast else { return }
        broadcasts += 1
        recentArrivals[arrivalsSeen % Self.arrivalRing] = window
        arrivalsSeen += 1
        // The most broadcasts in any second ending at an arrival: grows by one
        // while the arrival that many back is less than a second old.
        while mostBroadcastsInOneSecond < min(arrivalsSeen, Self.arrivalRing),
              window &- recentArrivals[(arrivalsSeen - 1 - mostBroadcastsInOneSecond) % Self.arrivalRing] < 1_000_000 {
            mostBroadcastsInOneSecond += 1
        }
    }

    private static let seqKey = Array(#""seq":"#.utf8)
    private static let fromKey = Array(#""from":"#.utf8)

    private func welcome(_ bytes: UnsafeRawBufferPointer) {
        guard !welcomed else { return }
        welcomed = true
        lastSeq = MessageScan.unsigned(after: Self.seqKey, in: bytes, from: 0)?.value ?? 0
        tally.counts.welcomed += 1
        driver.didWelcome()
    }

    /// `{"type":"tick","room":"<room>","from":F,"seq":S,...}`
    private func tick(_ bytes: UnsafeRawBufferPointer, at now: UInt64) {
        // `from` sits right after the room's name; look further only if it does not.
        let hint = driver.tickFromOffset
        let fromAtHint = MessageScan.matches(Self.fromKey, in: bytes, at: hint - Self.fromKey.count)
            ? MessageScan.unsigned(in: bytes, at: hint) : nil
        guard let from = fromAtHint ?? MessageScan.unsigned(after: Self.fromKey, in: bytes, from: 0),
              let seq = MessageScan.unsigned(after: Self.seqKey, in: bytes, from: from.end) else {
            tally.counts.errors += 1
            return
        }
        tally.counts.ticks += 1
        delivered(from: from.value, seq: seq.value, at: now)
        if seq.value >= from.value {
            let events = seq.value - from.value + 1
            tally.counts.mostEventsInOneTick = max(tally.counts.mostEventsInOneTick, events)
            if events > 1 { tally.counts.ticksWithMoreThanOneEvent += 1 }
        }
        if isObserver { observe(bytes, isTick: true, seq: seq.value) }
    }

    /// `{"type":"event","seq":S,...}`
    private func event(_ bytes: UnsafeRawBufferPointer, at now: UInt64) {
        guard let seq = MessageScan.unsigned(after: Self.seqKey, in: bytes, from: 0) else {
            tally.counts.errors += 1
            return
        }
        tally.counts.events += 1
        delivered(from: seq.value, seq: seq.value, at: now)
        if isObserver { observe(bytes, isTick: false, seq: seq.value) }
    }

    /// Events `from`...`seq` reached this connection: gap-free after the last ones?
    @inline(__always)
    private func delivered(from: UInt64, seq: UInt64, at now: UInt64) {
        if from > lastSeq + 1 { tally.counts.gaps += 1 }
        if seq > lastSeq { lastSeq = seq }
        guard isWriter, seq >= from else { return }
        carried[carriedSeen % Self.carriedRing] = (from, seq, now)
        carriedSeen += 1
    }

    /// `{"type":"ack","id":"K","seq":S,"result":"…"}`; K is the intent's number.
    private func ack(_ bytes: UnsafeRawBufferPointer, at now: UInt64) {
        tally.counts.acks += 1
        guard let id = MessageScan.unsigned(in: bytes, at: 20),
              let seq = MessageScan.unsigned(after: Self.seqKey, in: bytes, from: id.end),
              seq.end + 12 < bytes.count,
              let sentAt = driver.acknowledge(intent: Int(id.value)) else {
            tally.counts.strayAcks += 1
            return
        }
        // After `,"result":"`.
        let result = (bytes[seq.end + 11], bytes[seq.end + 12])
        switch result {
        case (UInt8(ascii: "a"), _): tally.counts.applied += 1
        case (UInt8(ascii: "c"), UInt8(ascii: "o")):
            tally.counts.counted += 1
            if seq.value == 0 {
                tally.counts.countedTies += 1
                return
            }
        case (UInt8(ascii: "c"), _): tally.counts.clamped += 1
        case (UInt8(ascii: "b"), _): tally.counts.blocked += 1
        default:
            // `unchanged`: no event, so no tick to wait for.
            tally.counts.unchanged += 1
            return
        }
        let sentInWindow = driver.windowOffset(of: sentAt) != nil
        if sentInWindow && now >= sentAt { tally.toAck.add(nanoseconds: now - sentAt) }
        tally.counts.highestAckedSeq = max(tally.counts.highestAckedSeq, seq.value)
        guard seq.value <= lastSeq else {
            tally.counts.acksBeforeTheirTick += 1
            return
        }
        for back in 0..<min(carriedSeen, Self.carriedRing) {
            let entry = carried[(carriedSeen - 1 - back) % Self.carriedRing]
            if entry.from <= seq.value && seq.value <= entry.seq {
                if sentInWindow && entry.at >= sentAt { tally.toTick.add(nanoseconds: entry.at - sentAt) }
                return
            }
        }
        tally.counts.acksWithoutTheirTick += 1
    }

    /// `{"type":"delivery","mode":"tick"|"each",...}`
    private func delivery(_ bytes: UnsafeRawBufferPointer, at now: UInt64) {
        if bytes.count > 27 && bytes[27] == UInt8(ascii: "t") {
            tally.counts.deliveryToTick += 1
            if let tickMs = MessageScan.unsigned(after: Self.tickMsKey, in: bytes, from: 27) {
                tally.counts.announcedTickMs = max(tally.counts.announcedTickMs, tickMs.value)
                tally.counts.shortestAnnouncedTickMs = Self.shorter(tally.counts.shortestAnnouncedTickMs, tickMs.value)
            }
            if isObserver && tally.counts.observedSwitchToTickAt == nil { tally.counts.observedSwitchToTickAt = now }
        } else {
            tally.counts.deliveryToEach += 1
        }
    }

    private static let tickMsKey = Array(#""tickMs":"#.utf8)

    /// The shorter of two announced ticks, 0 standing for none.
    static func shorter(_ one: UInt64, _ other: UInt64) -> UInt64 {
        one == 0 ? other : other == 0 ? one : min(one, other)
    }
    private static let namesKey = Array(#""names":{"#.utf8)
    private static let forwardNameKey = Array(#""forwardButtonClicked:":"#.utf8)
    private static let backNameKey = Array(#""backButtonClicked:":"#.utf8)
    private static let forwardEventKey = Array(#""name":"forwardButtonClicked:""#.utf8)
    private static let backEventKey = Array(#""name":"backButtonClicked:""#.utf8)
    private static let votesKey = Array(#""votes":{"forward":"#.utf8)
    private static let backVotesKey = Array(#""back":"#.utf8)

    /// The observer's closer reading: dragon events per tick and the votes behind them.
    private func observe(_ bytes: UnsafeRawBufferPointer, isTick: Bool, seq: UInt64) {
        tally.counts.observerSeq = max(tally.counts.observerSeq, seq)
        var dragonEvents = 0
        if isTick {
            tally.counts.observedTicks += 1
            if let names = MessageScan.find(Self.namesKey, in: bytes, from: 0) {
                let end = MessageScan.find([UInt8(ascii: "}")], in: bytes, from: names) ?? bytes.count
                for key in [Self.forwardNameKey, Self.backNameKey] {
                    if let count = MessageScan.unsigned(after: key, in: bytes, from: names), count.end < end {
                        dragonEvents += Int(count.value)
                    }
                }
            }
        } else if MessageScan.find(Self.forwardEventKey, in: bytes, from: 0) != nil
                    || MessageScan.find(Self.backEventKey, in: bytes, from: 0) != nil {
            dragonEvents = 1
        }
        tally.counts.observedDragonEvents += dragonEvents
        if isTick {
            tally.counts.observedMostDragonEventsInOneTick = max(tally.counts.observedMostDragonEventsInOneTick, dragonEvents)
            if dragonEvents > 1 { tally.counts.observedTicksWithMoreThanOneDragonEvent += 1 }
        }
        if let forward = MessageScan.unsigned(after: Self.votesKey, in: bytes, from: 0),
           let back = MessageScan.unsigned(after: Self.backVotesKey, in: bytes, from: forward.end) {
            tally.counts.observedVotesForward += Int(forward.value)
            tally.counts.observedVotesBack += Int(back.value)
        }
    }
}
