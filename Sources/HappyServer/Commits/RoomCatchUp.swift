import HappyCore

/// Brings a room in memory up to what the shared store holds (cluster
/// mode): after a commit conflict, events another node published, or a read
/// of the room. Local clients get the events they missed when they follow
/// on directly, or one resync when the gap cannot be filled. The room's
/// state is the commit path's: `CommitCoordinator` lends it to `advance`
/// and has `announce` tell the clients once it holds the result again.
final class RoomCatchUp {
    /// What catching up did to a room, for its clients to hear.
    enum Outcome {
        /// Nothing to follow (an older read or message); the working state is back at the committed one.
        case unchanged
        /// Events that follow on directly, each with its frame as the other node encoded it.
        case followed([StoredEvent], frames: [OutboundFrame])
        /// The state jumped to what the store holds.
        case replaced
        /// The store lost the room: it starts again from the defaults, and `creation` is to be recorded.
        case restarted(creation: RoomCommit)
    }

    private let defaults: Scene
    private let delivery: IntentDelivery
    private let metrics: Metrics
    private let logger: Logger

    init(defaults: Scene, delivery: IntentDelivery, metrics: Metrics, logger: Logger) {
        self.defaults = defaults
        self.delivery = delivery
        self.metrics = metrics
        self.logger = logger
    }

    /// Moves `room` to `stored`. `nil` means the store lost the room: it
    /// starts again from the defaults with a new epoch.
    /// `refusedBase`: the seq a refused commit was built on.
    func advance(_ room: inout Room<OutboundFrame>, to stored: StoredRoom?, refusedBase: UInt64? = nil) -> Outcome {
        guard let stored else {
            let epoch = Identifiers.newEpoch()
            room.replace(epoch: epoch, snapshot: RoomSnapshot(seq: 0, scene: defaults))
            return .restarted(creation: RoomCommit(room: room.name, epoch: epoch, baseSeq: 0, seq: 0, scene: defaults,
                                                   events: []))
        }
        let current = room.committed.seq
        if stored.epoch == room.epoch && stored.seq <= current {
            // Usually a read or a bus message older than what this node holds by
            // now. But Redis holding less than a refused commit was built on (read
            // after the refusal) means it lost events it had recorded (no append-only
            // file synced on every write): keeping this node's seq would refuse every
            // commit from now on, and Redis is the record, so follow it.
            guard let refusedBase, stored.seq < refusedBase else {
                room.rollback()
                return .unchanged
            }
            logger.error("Redis is behind this node: it lost recorded events; following Redis",
                         ["room": room.name, "redisSeq": "\(stored.seq)", "nodeSeq": "\(current)",
                          "fix": "run Redis with appendonly yes and appendfsync always"])
        }
        let missing = stored.history.filter { $0.seq > current }
        let contiguous = stored.epoch == room.epoch && missing.first?.seq == current + 1
            && missing.last?.seq == stored.seq && missing.count == Int(stored.seq - current)
        if contiguous {
            let frames = missing.map { OutboundFrame(payload: $0.json, seq: $0.seq) }
            room.catchUp(to: RoomSnapshot(seq: stored.seq, scene: stored.scene),
                         events: zip(missing, frames).map { (seq: $0.seq, element: $1) },
                         dragonStatus: Self.label(after: missing, labels: room.labels))
            if let time = missing.last?.time { room.noteLastEvent(at: time) }
            return .followed(missing, frames: frames)
        }
        room.replace(epoch: stored.epoch, snapshot: RoomSnapshot(seq: stored.seq, scene: stored.scene),
                     history: stored.history.map { (seq: $0.seq, element: OutboundFrame(payload: $0.json, seq: $0.seq)) },
                     dragonStatus: room.labels.recover(from: stored.history.lazy.map(\.json)))
        return .replaced
    }

    /// Tells the room's clients what `advance` did to it; returns the
    /// creation to record when the store lost the room.
    func announce(_ outcome: Outcome, in runtime: RoomRuntime) -> RoomCommit? {
        switch outcome {
        case .unchanged:
            return nil
        case .followed(let events, let frames):
            metrics.events += frames.count
            delivery.publishFollowed(events, frames: frames, in: runtime)
            return nil
        case .replaced:
            delivery.resync(runtime)
            delivery.refreshStreams(of: runtime)
            return nil
        case .restarted(let creation):
            delivery.resync(runtime)
            return creation
        }
    }

    /// The label after events another node recorded; nil (unchanged) when
    /// none of them is a dragon event or a reset.
    static func label(after events: [StoredEvent], labels: DragonStatus) -> String? {
        let text = labels.recover(from: events.lazy.map(\.json))
        if text != labels.initial || events.contains(where: { DragonStatus.isReset($0.json) }) { return text }
        return nil
    }
}
