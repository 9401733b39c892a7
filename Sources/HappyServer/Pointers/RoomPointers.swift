import HappyCore

/// One room's live pointers (PROTOCOL.md section 10): the latest entry per
/// client, which changed since the last batch, and which went away. Values
/// only; `PointerService` decides when a batch goes out and to whom.
struct RoomPointers {
    /// A visible pointer, encoded once for every batch that carries it.
    struct Shown {
        var entry: PointerEntry
        var encoded: [UInt8]
        /// Orders pointers by their last move (newest first in a batch).
        var movedOrder: UInt64
    }

    /// The next batch: entries (newest first) and the ids that went away.
    struct Batch {
        var ids: [String]
        var entries: [[UInt8]]
        var gone: [String]
        /// `goneCount` when the previous batch was taken: this one covers what went after.
        var goneFrom: UInt64
        var isEmpty: Bool { entries.isEmpty && gone.isEmpty }
    }

    private(set) var visible: [String: Shown] = [:]
    /// Clients whose pointer moved since the last batch.
    private(set) var changed: Set<String> = []
    /// Clients whose pointer was hidden or who left since the last batch.
    private(set) var gone: [String] = []
    private var moves: UInt64 = 0
    /// Every pointer that went, numbered, the latest `recentGoneLimit` kept:
    /// a client that skipped batches learns from them what went meanwhile.
    private(set) var goneCount: UInt64 = 0
    private var recentGone: [(number: UInt64, id: String)] = []
    private var goneCountAtLastBatch: UInt64 = 0
    static let recentGoneLimit = 512
    /// When the last batch was taken (monotonic seconds).
    private(set) var lastBatchAt = -Double.infinity

    /// Something waits to be sent.
    var hasChanges: Bool { !changed.isEmpty || !gone.isEmpty }

    /// `entry`'s pointer moved (or changed activity).
    mutating func move(_ entry: PointerEntry) {
        if let shown = visible[entry.id], shown.entry == entry { return }
        moves += 1
        visible[entry.id] = Shown(entry: entry, encoded: ServerMessageEncoder.pointerEntry(entry), movedOrder: moves)
        changed.insert(entry.id)
        gone.removeAll { $0 == entry.id }
    }

    /// The client hid its pointer or left; true when it was visible.
    @discardableResult
    mutating func hide(_ id: String) -> Bool {
        guard visible.removeValue(forKey: id) != nil else { return false }
        changed.remove(id)
        if !gone.contains(id) { gone.append(id) }
        goneCount += 1
        recentGone.append((goneCount, id))
        if recentGone.count > Self.recentGoneLimit { recentGone.removeFirst(recentGone.count - Self.recentGoneLimit / 2) }
        return true
    }

    /// The ids that went after `goneCount` was `since` and are not visible
    /// again (all the kept ones when more went than are kept: a client
    /// ignores a `gone` id it does not show).
    func goneSince(_ since: UInt64) -> [String] {
        var seen = Set<String>()
        return recentGone.filter { $0.number > since && visible[$0.id] == nil && seen.insert($0.id).inserted }.map(\.id)
    }

    /// Takes the next batch at `now`: at most `limit` changed pointers, the
    /// most recently moved first (the others stay for the next batch), and
    /// every pointer gone since the last one.
    mutating func takeBatch(limit: Int, at now: Double) -> Batch {
        lastBatchAt = now
        var moved = changed.compactMap { visible[$0].map { (id: $0.entry.id, shown: $0) } }
        moved.sort { $0.shown.movedOrder > $1.shown.movedOrder }
        let taken = moved.prefix(limit)
        for item in taken { changed.remove(item.id) }
        let batch = Batch(ids: taken.map(\.id), entries: taken.map(\.shown.encoded), gone: gone,
                          goneFrom: goneCountAtLastBatch)
        gone.removeAll()
        goneCountAtLastBatch = goneCount
        return batch
    }

    /// Every visible pointer but `excluded`'s, newest first, at most `limit`.
    func visibleEntries(excluding excluded: String?, limit: Int) -> [[UInt8]] {
        visible.values.filter { $0.entry.id != excluded }
            .sorted { $0.movedOrder > $1.movedOrder }
            .prefix(limit).map(\.encoded)
    }
}
