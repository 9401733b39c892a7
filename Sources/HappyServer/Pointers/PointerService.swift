import HappyCore

/// Live pointers (PROTOCOL.md section 10): takes clients' `pointer`
/// messages at their own rate, conflates them per room, and sends each room
/// at most one `pointers` message per `pointerIntervalMs`, only while
/// something changed. A batch is encoded once and shared by every receiver
/// but those whose own pointer is in it, moved or gone (at most
/// `maxPointersPerBatch` movers, each given a copy without it). A receiver whose queue is over half of
/// `maxQueuedBytes` is skipped and later caught up with the full list and
/// every pointer that went meanwhile: pointers never cause a resync.
final class PointerService {
    private var limits: HappyConfig.LimitsSection

    /// Applies a configuration read again (SIGHUP) to what comes next.
    func reconfigure(_ limits: HappyConfig.LimitsSection) {
        self.limits = limits
    }
    private let broadcaster: Broadcaster
    private let timers: any TimerScheduling
    private let metrics: Metrics
    private let clock: ServiceClock
    /// Rooms with changes not yet sent, by identity.
    private var dirtyRooms: [ObjectIdentifier: RoomRuntime] = [:]
    private var tickDue: Double?
    private let paceKey = PointerPace.Key()
    private let pointersKey = RoomPointers.Key()

    init(limits: HappyConfig.LimitsSection, broadcaster: Broadcaster, timers: any TimerScheduling, metrics: Metrics,
         clock: ServiceClock) {
        self.limits = limits
        self.broadcaster = broadcaster
        self.timers = timers
        self.metrics = metrics
        self.clock = clock
    }

    private var interval: Double { Double(limits.pointerIntervalMs) / 1000 }

    // MARK: input

    /// A client's `pointer` message (nil hides its pointer). Over the
    /// client's `pointersPerSecond` it is dropped silently: the next one
    /// supersedes it anyway.
    func receive(_ position: PointerPosition?, from connection: Connection) {
        metrics.pointersIn += 1
        guard connection.modify(paceKey, { $0.take(now: clock.now()) }) else {
            metrics.pointersDropped += 1
            return
        }
        guard connection.joined, let runtime = connection.room else { return }
        let participant = connection.participant
        if let position {
            runtime.modify(pointersKey) { $0.move(PointerEntry(id: participant.id, name: participant.name,
                                                               position: position)) }
        } else if !runtime.modify(pointersKey, { $0.hide(participant.id) }) {
            return
        }
        markChanged(runtime)
    }

    /// A client left its room: its pointer is gone.
    func left(_ connection: Connection, room runtime: RoomRuntime) {
        let id = connection.participant.id
        if runtime.modify(pointersKey, { $0.hide(id) }) { markChanged(runtime) }
    }

    /// `welcome.pointers` for a newcomer: the room's visible pointers.
    func welcomeList(for connection: Connection, in runtime: RoomRuntime) -> [UInt8] {
        ServerMessageEncoder.pointerArray(runtime.pointers.visibleEntries(excluding: connection.participant.id,
                                                                          limit: limits.maxPointersPerBatch))
    }

    // MARK: pacing

    private func markChanged(_ runtime: RoomRuntime) {
        let key = ObjectIdentifier(runtime)
        guard dirtyRooms[key] == nil else { return }
        dirtyRooms[key] = runtime
        schedule(at: max(clock.now(), runtime.pointers.lastBatchAt + interval))
    }

    private func schedule(at due: Double) {
        if let tickDue, tickDue <= due { return }
        tickDue = due
        timers.schedule(.pointers, afterSeconds: max(0, due - clock.fresh()))
    }

    /// The pointer timer: sends the batches that are due, then sleeps until the next.
    func tick() {
        tickDue = nil
        let now = clock.fresh()
        var earliest = Double.infinity
        for (key, runtime) in dirtyRooms {
            // Never early: a receiver gets at most one batch per interval.
            let due = runtime.pointers.lastBatchAt + interval
            if due <= now {
                let limit = limits.maxPointersPerBatch
                send(runtime.modify(pointersKey) { $0.takeBatch(limit: limit, at: now) }, in: runtime)
            }
            if runtime.pointers.hasChanges {
                earliest = min(earliest, runtime.pointers.lastBatchAt + interval)
            } else {
                dirtyRooms.removeValue(forKey: key)
            }
        }
        if earliest.isFinite { schedule(at: earliest) }
    }

    // MARK: output

    private func send(_ batch: RoomPointers.Batch, in runtime: RoomRuntime) {
        guard !batch.isEmpty else { return }
        metrics.pointerBatches += 1
        let shared = frame(room: runtime.name, entries: batch.entries, gone: batch.gone)
        var ownPosition: [String: Int] = [:]
        for (index, id) in batch.ids.enumerated() { ownPosition[id] = index }
        let goneIDs = Set(batch.gone)
        let skipAbove = limits.maxQueuedBytes / 2
        runtime.forEachListener { member in
            guard member.joined, member.output.closeRequest == nil else { return }
            if broadcaster.unreadBytes(of: member) ?? .max > skipAbove {
                member.modify(paceKey) { $0.skipped(goneFrom: batch.goneFrom) }
                metrics.pointerSkips += 1
                return
            }
            let message: OutboundFrame
            if let since = member.modify(paceKey, { $0.catchUp() }) {
                let entries = runtime.pointers.visibleEntries(excluding: member.participant.id,
                                                              limit: limits.maxPointersPerBatch)
                let gone = runtime.pointers.goneSince(since).filter { $0 != member.participant.id }
                message = frame(room: runtime.name, entries: entries, gone: gone)
            } else if ownPosition[member.participant.id] != nil || goneIDs.contains(member.participant.id) {
                // Never a client's own pointer, moved or gone: a copy without it.
                var entries = batch.entries
                if let own = ownPosition[member.participant.id] { entries.remove(at: own) }
                let gone = batch.gone.filter { $0 != member.participant.id }
                if entries.isEmpty && gone.isEmpty { return }
                message = frame(room: runtime.name, entries: entries, gone: gone)
            } else {
                message = shared
            }
            broadcaster.send(message, to: member)
            metrics.pointerMessagesOut += 1
            metrics.pointerBytesOut += message.frameLength
        }
    }

    private func frame(room: String, entries: [[UInt8]], gone: [String]) -> OutboundFrame {
        OutboundFrame(encoded: ServerMessageEncoder.pointers(room: room, entries: entries, gone: gone,
                                                             headroom: OutboundFrame.headroom))
    }
}

extension PointerPace {
    /// Made only here: `PointerService` alone changes a connection's `pointerPace`.
    struct Key { fileprivate init() {} }
}

extension RoomPointers {
    /// Made only here: `PointerService` alone changes a room's `pointers`.
    struct Key { fileprivate init() {} }
}
