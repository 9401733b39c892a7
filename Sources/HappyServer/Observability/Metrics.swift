import HappyCore

/// Counters and histograms of the running server, read by `/metrics`.
/// Updated on the service thread only; no locks.
final class Metrics {
    var connectionsOpened = 0
    var connectionsClosed = 0
    var connectionsRefused: [String: Int] = [:]
    var intents: [String: Int] = [:]          // "action|result" → count
    var intentErrors: [String: Int] = [:]     // error code → count
    var events = 0
    /// Ticks sent (one per room per tick, shared by its clients).
    var ticks = 0
    /// Presence batches sent in crowd rooms delivering each event.
    var presenceBatches = 0
    /// Rooms switched between each and tick delivery.
    var deliverySwitches = 0
    /// Ticks merged into one for a client that had written none of them yet.
    var ticksMerged = 0
    /// Dragon votes counted, and the rounds they were decided in.
    var votes = 0
    var voteRounds = 0
    var bytesOut = 0
    var messagesOut = 0
    /// Socket writes that carried them: a client's pending messages leave together.
    var writesOut = 0
    var outboxDrops = 0
    var resyncs = 0
    var rateLimited = 0
    var floodCloses = 0
    var slowReaderCloses = 0
    /// Times a client's unread replies paused reading it.
    var readPauses = 0
    var pingTimeouts = 0
    var roomsTrimmed = 0
    var httpRequests: [String: Int] = [:]     // status class → count
    let commitLatency = Histogram(bounds: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1])
    let renderLatency = Histogram(bounds: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1])
    var renders = 0
    var renderCacheHits = 0
    /// Frame requests that waited for a render another request had started.
    var renderCoalesced = 0
    var renderRefusals = 0
    var streamsOpened = 0
    /// Stream frames replaced by a newer one before they were sent.
    var streamFramesReplaced = 0
    var streamFramesSent = 0
    /// Live pointers: messages received, dropped over a client's rate,
    /// batches sent per room, messages and bytes written, receivers skipped.
    var pointersIn = 0
    var pointersDropped = 0
    var pointerBatches = 0
    var pointerMessagesOut = 0
    var pointerBytesOut = 0
    var pointerSkips = 0
    var storeFailures = 0
    var commitConflicts = 0
    var backups = 0
    var backupFailures = 0
    /// Wall-clock seconds of the last backup written (0: none since start).
    var lastBackupTime = 0

    func countIntent(action: String, result: String, times: Int = 1) {
        intents["\(action)|\(result)", default: 0] += times
    }

    func countError(_ code: ErrorCode) {
        intentErrors[code.rawValue, default: 0] += 1
    }

    func countRefusal(_ reason: String) {
        connectionsRefused[reason, default: 0] += 1
    }
}

/// A cumulative histogram with fixed upper bounds, in seconds.
final class Histogram {
    let bounds: [Double]
    private(set) var buckets: [Int]
    private(set) var count = 0
    private(set) var sum = 0.0

    init(bounds: [Double]) {
        self.bounds = bounds
        buckets = Array(repeating: 0, count: bounds.count)
    }

    func observe(_ value: Double) {
        count += 1
        sum += value
        for (index, bound) in bounds.enumerated() where value <= bound {
            buckets[index] += 1
            return
        }
    }

    /// Cumulative counts per bound, as Prometheus expects.
    var cumulative: [Int] {
        var running = 0
        return buckets.map { running += $0; return running }
    }
}
