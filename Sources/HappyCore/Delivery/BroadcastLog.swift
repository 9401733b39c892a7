/// The messages broadcast to a room (events and presence), kept once for
/// all its clients: each client holds only a cursor, the position of the
/// next entry it has to write. An entry stays until every client that was
/// there when it was appended has passed it (a count per entry, as in a
/// reference-counted ring), and the log never holds more than `byteLimit`
/// bytes: when it would, the oldest entries go and the clients still behind
/// them must be resynchronised instead.
///
/// Positions only grow; `start..<end` are the entries held.
@frozen
public struct BroadcastLog<Element> {
    @frozen @usableFromInline
    struct Entry {
        @usableFromInline var element: Element
        @usableFromInline var bytes: Int
        /// All bytes appended before this entry (backlogs in O(1)).
        @usableFromInline var offset: Int
        /// Clients that still have to write this entry.
        @usableFromInline var pending: Int

        @inlinable
        init(element: Element, bytes: Int, offset: Int, pending: Int) {
            self.element = element
            self.bytes = bytes
            self.offset = offset
            self.pending = pending
        }
    }

    /// Bytes the log may hold; the newest entry stays even when it alone is larger.
    public let byteLimit: Int
    @usableFromInline var entries = RingQueue<Entry>()
    @usableFromInline var storedStart: UInt64 = 0
    @usableFromInline var storedBytes = 0
    @usableFromInline var appendedBytes = 0
    /// Deliveries given up because the log was full: for each entry dropped
    /// early, the clients that had not written it (they get a resync).
    @usableFromInline var storedDroppedDeliveries = 0
    /// Deliveries given up so far because the log was full (each client concerned gets a resync).
    @inlinable public var droppedDeliveries: Int { storedDroppedDeliveries }

    /// An empty log that holds at most `byteLimit` bytes.
    @inlinable
    public init(byteLimit: Int) {
        self.byteLimit = byteLimit
    }

    /// The position of the oldest entry held.
    @inlinable public var start: UInt64 { storedStart }
    /// The position the next entry will get.
    @inlinable public var end: UInt64 { storedStart + UInt64(entries.count) }
    /// The number of entries held.
    @inlinable public var count: Int { entries.count }
    /// Bytes of the entries held.
    @inlinable public var bytes: Int { storedBytes }

    /// Appends an entry that `readers` clients have to write; returns its position.
    @inlinable @discardableResult
    public mutating func append(_ element: Element, bytes: Int, readers: Int) -> UInt64 {
        let position = end
        entries.append(Entry(element: element, bytes: bytes, offset: appendedBytes, pending: readers))
        appendedBytes += bytes
        storedBytes += bytes
        while storedBytes > byteLimit && entries.count > 1 {
            storedDroppedDeliveries += Swift.max(0, entries.first!.pending)
            dropOldest()
        }
        trimPassed()
        return position
    }

    /// The entry at `position` (which must be held).
    @inlinable
    public func element(at position: UInt64) -> Element {
        entries[Int(position - storedStart)].element
    }

    /// Whether a client at `cursor` can still be served from the log.
    @inlinable
    public func holds(_ cursor: UInt64) -> Bool { cursor >= storedStart }

    /// A client wrote the entry at `position`. Entries everybody has written
    /// go at the next append or abandon (not on this per-message path).
    @inlinable
    public mutating func passed(_ position: UInt64) {
        guard position >= storedStart else { return }
        entries.modify(at: Int(position - storedStart)) { $0.pending -= 1 }
    }

    /// A client leaves (or jumps ahead) from `cursor`: it will not write the
    /// entries from there on.
    @inlinable
    public mutating func abandon(from cursor: UInt64) {
        var position = Swift.max(cursor, storedStart)
        while position < end {
            entries.modify(at: Int(position - storedStart)) { $0.pending -= 1 }
            position += 1
        }
        trimPassed()
    }

    /// Bytes of the entries from `cursor` to the end (a client's backlog),
    /// or nil when the log no longer holds them (the client needs a resync).
    @inlinable
    public func backlog(from cursor: UInt64) -> Int? {
        guard cursor < end else { return 0 }
        guard cursor >= storedStart else { return nil }
        return appendedBytes - entries[Int(cursor - storedStart)].offset
    }

    @inlinable
    mutating func trimPassed() {
        while let first = entries.first, first.pending <= 0 { dropOldest() }
    }

    @inlinable
    mutating func dropOldest() {
        let entry = entries.removeFirst()
        storedBytes -= entry.bytes
        storedStart += 1
    }
}
