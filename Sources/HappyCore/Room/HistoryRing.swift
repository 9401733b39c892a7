/// The last `capacity` events of a room, by seq, for resuming clients.
public struct HistoryRing<Element> {
    /// The most events held (a negative capacity counts as 0: nothing is kept).
    public let capacity: Int
    private var entries = RingQueue<(seq: UInt64, element: Element)>()

    /// An empty ring for `capacity` events.
    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The number of events held.
    public var count: Int { entries.count }
    /// The seq of the oldest event held, or nil when empty.
    public var oldestSeq: UInt64? { entries.first?.seq }
    /// The seq of the newest event held, or nil when empty.
    public var newestSeq: UInt64? { entries.isEmpty ? nil : entries[entries.count - 1].seq }

    /// Adds the event numbered `seq`. Seqs must grow by one; a gap (events
    /// lost to a restart, say) empties the ring first.
    public mutating func append(seq: UInt64, _ element: Element) {
        guard capacity > 0 else { return }
        if let newest = newestSeq, seq != newest + 1 { entries.removeAll() }
        entries.append((seq, element))
        while entries.count > capacity { entries.removeFirst() }
    }

    /// Forgets every event held.
    public mutating func removeAll() { entries.removeAll() }

    /// The events after `since` up to `current`, or nil when some are missing.
    public func events(after since: UInt64, upTo current: UInt64) -> [Element]? {
        if since == current { return [] }
        guard since < current, let oldest = oldestSeq, let newest = newestSeq,
              newest == current, oldest <= since + 1 else { return nil }
        let start = Int(since + 1 - oldest)
        return (start..<entries.count).map { entries[$0].element }
    }

    /// Every event held, with its seq, oldest first.
    public var all: [(seq: UInt64, element: Element)] {
        (0..<entries.count).map { entries[$0] }
    }
}

/// The decision to resume a client from `since`/`epoch` (PROTOCOL.md section 3).
public enum ResumeDecision<Element> {
    /// Resume: `replay` holds the missed events, oldest first (`recovered: true`).
    case recovered(replay: [Element])
    /// Start from the current state (`recovered: false`).
    case fresh

    /// `recovered` when `since` and `epoch` are given, `epoch` is the room's, and
    /// `history` holds every event after `since` up to `roomSeq`; otherwise `fresh`.
    public static func decide(since: UInt64?, epoch: String?, roomEpoch: String, roomSeq: UInt64,
                              history: HistoryRing<Element>) -> ResumeDecision {
        guard let since, let epoch, epoch == roomEpoch,
              let replay = history.events(after: since, upTo: roomSeq) else { return .fresh }
        return .recovered(replay: replay)
    }

    /// Whether the client resumes (`welcome.recovered`).
    public var isRecovered: Bool {
        if case .recovered = self { return true }
        return false
    }
}
