import HappyCore

/// Brings a room in memory up to what the shared store holds (cluster
/// mode): after a commit conflict, events another node published, or a read
/// of the room. Local clients get the events they missed when they follow
/// on directly, or one resync when the gap cannot be filled.
final class RoomCatchUp {
    private let defaults: Scene
    private let crowd: CrowdDelivery
    private let broadcaster: Broadcaster
    private let streams: FrameStreams
    private let metrics: Metrics
    private let logger: Logger

    init(defaults: Scene, crowd: CrowdDelivery, broadcaster: Broadcaster, streams: FrameStreams, metrics: Metrics,
         logger: Logger) {
        self.defaults = defaults
        self.crowd = crowd
        self.broadcaster = broadcaster
        self.streams = streams
        self.metrics = metrics
        self.logger = logger
    }

    /// Moves `runtime` to `stored`. `nil` means the store lost the room: it
    /// starts again from the defaults with a new epoch, and the creation to
    /// record is returned. `refusedBase`: the seq a refused commit was built on.
    func advance(_ runtime: RoomRuntime, to stored: StoredRoom?, refusedBase: UInt64? = nil) -> RoomCommit? {
        guard let room = runtime.room else { return nil }
        guard let stored else {
            let epoch = Identifiers.newEpoch()
            room.replace(epoch: epoch, snapshot: RoomSnapshot(seq: 0, scene: defaults))
            broadcaster.resyncMembers(of: runtime)
            return RoomCommit(room: runtime.name, epoch: epoch, baseSeq: 0, seq: 0, scene: defaults, events: [])
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
                return nil
            }
            logger.error("Redis is behind this node: it lost recorded events; following Redis",
                         ["room": runtime.name, "redisSeq": "\(stored.seq)", "nodeSeq": "\(current)",
                          "fix": "run Redis with appendonly yes and appendfsync always"])
        }
        let missing = stored.history.filter { $0.seq > current }
        let contiguous = stored.epoch == room.epoch && missing.first?.seq == current + 1
            && missing.last?.seq == stored.seq && missing.count == Int(stored.seq - current)
        if contiguous {
            let frames = missing.map { (seq: $0.seq, element: OutboundFrame(payload: $0.json, seq: $0.seq)) }
            room.catchUp(to: RoomSnapshot(seq: stored.seq, scene: stored.scene), events: frames,
                         dragonStatus: Self.label(after: missing, labels: room.labels))
            metrics.events += frames.count
            if let time = missing.last?.time { room.noteLastEvent(at: time) }
            for (event, frame) in zip(missing, frames) {
                crowd.publish(frame.element, in: runtime) { RoomEvent(json: event.json) }
            }
            streams.refreshStreams(of: runtime)
            return nil
        }
        room.replace(epoch: stored.epoch, snapshot: RoomSnapshot(seq: stored.seq, scene: stored.scene),
                     history: stored.history.map { (seq: $0.seq, element: OutboundFrame(payload: $0.json, seq: $0.seq)) },
                     dragonStatus: room.labels.recover(from: stored.history.lazy.map(\.json)))
        broadcaster.resyncMembers(of: runtime)
        streams.refreshStreams(of: runtime)
        return nil
    }

    /// The label after events another node recorded; nil (unchanged) when
    /// none of them is a dragon event or a reset.
    static func label(after events: [StoredEvent], labels: DragonStatus) -> String? {
        let text = labels.recover(from: events.lazy.map(\.json))
        if text != labels.initial || events.contains(where: { DragonStatus.isReset($0.json) }) { return text }
        return nil
    }
}
