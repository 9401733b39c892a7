/// A FIFO queue on a growable ring buffer: O(1) append and removeFirst, no
/// allocation until the first element, storage reused afterwards.
///
/// The hot operations are `@inlinable` so that users in other modules get a
/// version specialized for their element type (no generic dispatch per message).
@frozen
public struct RingQueue<Element> {
    @usableFromInline var storage: [Element?] = []
    @usableFromInline var head = 0
    @usableFromInline var storedCount = 0
    /// The number of elements queued.
    @inlinable public var count: Int { storedCount }

    /// An empty queue; it allocates on its first append.
    @inlinable
    public init() {}

    /// Whether nothing is queued.
    @inlinable public var isEmpty: Bool { count == 0 }
    /// Slots allocated: 0 or a power of two, at least 8.
    @inlinable public var capacity: Int { storage.count }

    /// The oldest element, or nil when the queue is empty.
    @inlinable public var first: Element? { count == 0 ? nil : storage[head] }

    /// The element `offset` places from the front; traps when out of range.
    @inlinable
    public subscript(offset: Int) -> Element {
        precondition(offset >= 0 && offset < count, "RingQueue index out of range")
        return storage[(head + offset) & (storage.count - 1)]!
    }

    /// Changes the element at `offset` in place.
    @inlinable
    public mutating func modify(at offset: Int, _ change: (inout Element) -> Void) {
        precondition(offset >= 0 && offset < count, "RingQueue index out of range")
        let index = (head + offset) & (storage.count - 1)
        change(&storage[index]!)
    }

    /// Adds `element` at the back, doubling the storage when it is full.
    @inlinable
    public mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) & (storage.count - 1)] = element
        storedCount += 1
    }

    /// Removes and returns the oldest element; traps when empty. A queue it
    /// empties gives back storage larger than 32 slots.
    @inlinable @discardableResult
    public mutating func removeFirst() -> Element {
        precondition(count > 0, "removeFirst on an empty RingQueue")
        let element = storage[head]!
        storage[head] = nil
        head = (head + 1) & (storage.count - 1)
        storedCount -= 1
        // Give back the storage a burst left behind; small queues keep theirs.
        if count == 0 && storage.count > Self.retainedCapacity {
            storage = []
            head = 0
        }
        return element
    }

    /// Capacity an emptied queue keeps for its next messages.
    @inlinable static var retainedCapacity: Int { 32 }

    /// Keeps the elements for which `keep` is true, in order.
    @inlinable
    public mutating func filter(_ keep: (Element) -> Bool) {
        var kept = RingQueue()
        for offset in 0..<count {
            let element = self[offset]
            if keep(element) { kept.append(element) }
        }
        self = kept
    }

    /// Empties the queue and gives back its storage.
    @inlinable
    public mutating func removeAll() {
        self = RingQueue()
    }

    @usableFromInline
    mutating func grow() {
        let newCapacity = Swift.max(8, storage.count * 2)
        var newStorage = [Element?](repeating: nil, count: newCapacity)
        for offset in 0..<count {
            newStorage[offset] = storage[(head + offset) & (storage.count - 1)]
        }
        storage = newStorage
        head = 0
    }
}
