/// A least-recently-used cache bounded by entry count and by total cost
/// (bytes, say). Lookups are O(1); an insertion that overflows a bound
/// evicts the least recently used entries, found by a scan (the cache is
/// small and insertions are rarer than lookups). Not thread-safe.
public struct BoundedCache<Key: Hashable, Value> {
    /// The most entries kept (a negative bound counts as 0: nothing is kept).
    public let maxEntries: Int
    /// The most total cost kept (a negative bound counts as 0).
    public let maxCost: Int
    /// The summed cost of the entries held.
    public private(set) var totalCost = 0

    private var entries: [Key: (value: Value, cost: Int, lastUse: UInt64)] = [:]
    private var clock: UInt64 = 0

    /// An empty cache with these bounds.
    public init(maxEntries: Int, maxCost: Int) {
        self.maxEntries = max(0, maxEntries)
        self.maxCost = max(0, maxCost)
    }

    /// The number of entries held.
    public var count: Int { entries.count }

    /// The value for `key`, which becomes the most recently used.
    public mutating func value(for key: Key) -> Value? {
        guard var entry = entries[key] else { return nil }
        clock += 1
        entry.lastUse = clock
        entries[key] = entry
        return entry.value
    }

    /// Whether `key` is cached, without touching its recency.
    public func contains(_ key: Key) -> Bool { entries[key] != nil }

    /// Stores `value`; a value costing more than `maxCost` is not kept.
    public mutating func insert(_ value: Value, for key: Key, cost: Int) {
        remove(key)
        guard cost <= maxCost, maxEntries > 0 else { return }
        while entries.count >= maxEntries || totalCost + cost > maxCost {
            evictLeastRecentlyUsed()
        }
        clock += 1
        entries[key] = (value, cost, clock)
        totalCost += cost
    }

    /// Removes `key`'s entry, if there is one.
    public mutating func remove(_ key: Key) {
        guard let old = entries.removeValue(forKey: key) else { return }
        totalCost -= old.cost
    }

    /// Empties the cache.
    public mutating func removeAll() {
        entries.removeAll()
        totalCost = 0
    }

    private mutating func evictLeastRecentlyUsed() {
        guard let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key else { return }
        remove(oldest)
    }
}
