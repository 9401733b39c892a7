/// A client's queue of outgoing messages with the slow-reader policy of
/// PROTOCOL.md section 5: past `limit` queued bytes, the queued events are
/// dropped and a single `resync` takes their place; while that resync is
/// pending, newer events are skipped (the resync, built when it is written,
/// covers them). Replies to the client itself (welcome, acks, errors, pongs)
/// are never dropped: past the limit the server stops reading the client
/// (`isOverLimit`) until they drain.
///
/// `@inlinable` so the server gets a version specialized for its frames.
@frozen
public struct Outbox<Payload> {
    /// A queued item, as the writer takes it.
    @frozen
    public enum Entry {
        /// A message, its size in bytes, and whether the slow-reader policy may drop it.
        case message(Payload, bytes: Int, droppable: Bool)
        /// Where a resync must be written.
        case resync
    }

    /// What `push` did with a message.
    @frozen
    public enum Admission: Equatable {
        /// The message was queued.
        case queued
        /// Events were dropped; a resync is now pending.
        case overflowed(droppedMessages: Int)
        /// Skipped: a pending resync already covers it.
        case coveredByResync
    }

    /// How an entry is stored: a struct with an optional payload (nil for
    /// the resync marker) copies as plainly as a pointer and two numbers.
    @frozen @usableFromInline
    struct Slot {
        @usableFromInline var payload: Payload?
        @usableFromInline var bytes: Int
        @usableFromInline var droppable: Bool

        @inlinable
        init(payload: Payload?, bytes: Int, droppable: Bool) {
            self.payload = payload
            self.bytes = bytes
            self.droppable = droppable
        }

        @inlinable
        var entry: Entry {
            if let payload { return .message(payload, bytes: bytes, droppable: droppable) }
            return .resync
        }
    }

    /// Queued bytes past which droppable messages give way to a resync (`limits.maxQueuedBytes`).
    public let limit: Int
    @usableFromInline var storedQueuedBytes = 0
    @usableFromInline var storedResyncPending = false
    @usableFromInline var entries = RingQueue<Slot>()

    /// An empty outbox with this limit.
    @inlinable
    public init(limit: Int) {
        self.limit = limit
    }

    /// Bytes of the queued messages (the resync marker counts none).
    @inlinable public var queuedBytes: Int { storedQueuedBytes }
    /// More is queued than the limit: only replies can bring it there.
    @inlinable public var isOverLimit: Bool { storedQueuedBytes > limit }
    /// Whether a resync marker is queued.
    @inlinable public var resyncPending: Bool { storedResyncPending }
    /// Whether nothing is queued.
    @inlinable public var isEmpty: Bool { entries.isEmpty }
    /// The number of entries queued, the resync marker included.
    @inlinable public var count: Int { entries.count }
    /// The first entry, or nil when the outbox is empty.
    @inlinable public var first: Entry? { entries.first?.entry }
    /// The entry `offset` places from the front.
    @inlinable public subscript(offset: Int) -> Entry { entries[offset].entry }

    /// The first message's payload, or nil when the outbox is empty or a
    /// resync comes first (the per-message path, without building an `Entry`).
    @inlinable public var firstPayload: Payload? { entries.first?.payload }

    /// Queues a message. A droppable one (an event) is skipped while a resync is
    /// pending, and one that would take the queue past `limit` is dropped with the
    /// other droppable ones for a resync; the others are always queued.
    @inlinable @discardableResult
    public mutating func push(_ payload: Payload, bytes: Int, droppable: Bool) -> Admission {
        if droppable {
            if storedResyncPending { return .coveredByResync }
            if storedQueuedBytes + bytes > limit {
                let dropped = dropDroppable()
                return .overflowed(droppedMessages: dropped + 1)
            }
        }
        entries.append(Slot(payload: payload, bytes: bytes, droppable: droppable))
        storedQueuedBytes += bytes
        return .queued
    }

    /// Removes the first entry once it has been written. An outbox it empties
    /// gives back its storage: most clients' only message of their own is the
    /// welcome, and an idle client should not keep a ring for it.
    @inlinable @discardableResult
    public mutating func removeFirst() -> Entry {
        let slot = entries.removeFirst()
        if slot.payload == nil { storedResyncPending = false } else { storedQueuedBytes -= slot.bytes }
        if entries.isEmpty { entries.removeAll() }
        return slot.entry
    }

    /// Slots of storage held (0 while nothing has been queued since it last emptied).
    @inlinable public var storageCapacity: Int { entries.capacity }

    /// Replaces the queued events with one resync (the state jumped ahead).
    @inlinable
    public mutating func requireResync() {
        if !storedResyncPending { _ = dropDroppable() }
    }

    /// Empties the outbox, pending resync included.
    @inlinable
    public mutating func removeAll() {
        entries.removeAll()
        storedQueuedBytes = 0
        storedResyncPending = false
    }

    /// Drops every droppable message and puts one resync marker where the
    /// first of them stood, so it still follows what came before it.
    @usableFromInline
    mutating func dropDroppable() -> Int {
        let resync = Slot(payload: nil, bytes: 0, droppable: false)
        var kept = RingQueue<Slot>()
        var dropped = 0
        var bytes = 0
        for offset in 0..<entries.count {
            let slot = entries[offset]
            if slot.payload != nil && slot.droppable {
                if dropped == 0 { kept.append(resync) }
                dropped += 1
                continue
            }
            if slot.payload != nil { bytes += slot.bytes }
            kept.append(slot)
        }
        if dropped == 0 { kept.append(resync) }
        entries = kept
        storedQueuedBytes = bytes
        storedResyncPending = true
        return dropped
    }
}
