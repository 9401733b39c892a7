/// A client's queue of outgoing messages with the slow-reader policy of
/// PROTOCOL.md section 5: past `limit` queued bytes, the queued events are
/// dropped and a single `resync` takes their place; while that resync is
/// pending, newer events are skipped (the resync, built when it is written,
/// covers them). Replies to the client itself (welcome, acks, errors, pongs)
/// are never dropped; if even they pass twice the limit, the client is cut off.
public struct Outbox<Payload> {
    public enum Entry {
        case message(Payload, bytes: Int, droppable: Bool)
        case resync
    }

    public enum Admission: Equatable {
        case queued
        /// Events were dropped; a resync is now pending.
        case overflowed(droppedMessages: Int)
        /// Skipped: a pending resync already covers it.
        case coveredByResync
        /// The client's own replies passed the hard limit: close it.
        case overLimit
    }

    public let limit: Int
    public private(set) var queuedBytes = 0
    public private(set) var resyncPending = false
    private var entries = RingQueue<Entry>()

    public init(limit: Int) {
        self.limit = limit
    }

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }
    public var first: Entry? { entries.first }
    public subscript(offset: Int) -> Entry { entries[offset] }

    @discardableResult
    public mutating func push(_ payload: Payload, bytes: Int, droppable: Bool) -> Admission {
        if droppable {
            if resyncPending { return .coveredByResync }
            if queuedBytes + bytes > limit {
                let dropped = dropDroppable()
                return .overflowed(droppedMessages: dropped + 1)
            }
        } else if queuedBytes + bytes > 2 * limit {
            return .overLimit
        }
        entries.append(.message(payload, bytes: bytes, droppable: droppable))
        queuedBytes += bytes
        return .queued
    }

    /// Removes the first entry once it has been written.
    @discardableResult
    public mutating func removeFirst() -> Entry {
        let entry = entries.removeFirst()
        switch entry {
        case .message(_, let bytes, _): queuedBytes -= bytes
        case .resync: resyncPending = false
        }
        return entry
    }

    public mutating func removeAll() {
        entries.removeAll()
        queuedBytes = 0
        resyncPending = false
    }

    /// Drops every droppable message and puts one resync marker where the
    /// first of them stood, so it still follows what came before it.
    private mutating func dropDroppable() -> Int {
        var kept = RingQueue<Entry>()
        var dropped = 0
        var bytes = 0
        for offset in 0..<entries.count {
            let entry = entries[offset]
            if case .message(_, _, let droppable) = entry, droppable {
                if dropped == 0 { kept.append(.resync) }
                dropped += 1
                continue
            }
            if case .message(_, let size, _) = entry { bytes += size }
            kept.append(entry)
        }
        if dropped == 0 { kept.append(.resync) }
        entries = kept
        queuedBytes = bytes
        resyncPending = true
        return dropped
    }
}
