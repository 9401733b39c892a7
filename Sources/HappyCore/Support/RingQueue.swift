/// A FIFO queue on a growable ring buffer: O(1) append and removeFirst, no
/// allocation until the first element, storage reused afterwards.
public struct RingQueue<Element> {
    private var storage: [Element?] = []
    private var head = 0
    public private(set) var count = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }
    public var capacity: Int { storage.count }

    public var first: Element? { count == 0 ? nil : storage[head] }

    public subscript(offset: Int) -> Element {
        precondition(offset >= 0 && offset < count, "RingQueue index out of range")
        return storage[(head + offset) & (storage.count - 1)]!
    }

    public mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) & (storage.count - 1)] = element
        count += 1
    }

    @discardableResult
    public mutating func removeFirst() -> Element {
        precondition(count > 0, "removeFirst on an empty RingQueue")
        let element = storage[head]!
        storage[head] = nil
        head = (head + 1) & (storage.count - 1)
        count -= 1
        // Give back the storage a burst left behind; small queues keep theirs.
        if count == 0 && storage.count > Self.retainedCapacity {
            storage = []
            head = 0
        }
        return element
    }

    /// Capacity an emptied queue keeps for its next messages.
    static var retainedCapacity: Int { 32 }

    /// Keeps the elements for which `keep` is true, in order.
    public mutating func filter(_ keep: (Element) -> Bool) {
        var kept = RingQueue()
        for offset in 0..<count {
            let element = self[offset]
            if keep(element) { kept.append(element) }
        }
        self = kept
    }

    public mutating func removeAll() {
        self = RingQueue()
    }

    private mutating func grow() {
        let newCapacity = Swift.max(8, storage.count * 2)
        var newStorage = [Element?](repeating: nil, count: newCapacity)
        for offset in 0..<count {
            newStorage[offset] = storage[(head + offset) & (storage.count - 1)]
        }
        storage = newStorage
        head = 0
    }
}
