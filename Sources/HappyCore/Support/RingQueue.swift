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
    @inlinable public var count: Int { storedCount }

    @inlinable
    public init() {}

    @inlinable public var isEmpty: Bool { count == 0 }
    @inlinable public var capacity: Int { storage.count }

    @inlinable public var first: Element? { count == 0 ? nil : storage[head] }

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

    @inlinable
    public mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) & (storage.count - 1)] = element
        storedCount += 1
    }

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
