import HappyCore

/// Rooms another node can change too (a shared store): bringing a room up to
/// what the store holds, and telling the local clients.
extension HappyServer {
    /// Moves `runtime` to `stored`. Local clients get the events they missed
    /// when they follow on directly, or one resync when the gap cannot be
    /// filled (history trimmed, epoch changed). `nil` means the store lost the
    /// room: it starts again from the defaults with a new epoch.
    func advance(_ runtime: RoomRuntime, to stored: StoredRoom?) {
        guard let room = runtime.room else { return }
        guard let stored else {
            let epoch = Identifiers.newEpoch()
            room.replace(epoch: epoch, snapshot: RoomSnapshot(seq: 0, scene: rules.defaults))
            pipeline.appendCreation(RoomCommit(room: runtime.name, epoch: epoch, baseSeq: 0, seq: 0,
                                               scene: rules.defaults, events: []))
            resyncMembers(of: runtime)
            return
        }
        let current = room.committed.seq
        if stored.epoch == room.epoch && stored.seq <= current {
            room.rollback()
            return
        }
        let missing = stored.history.filter { $0.seq > current }
        let contiguous = stored.epoch == room.epoch && missing.first?.seq == current + 1
            && missing.last?.seq == stored.seq && missing.count == Int(stored.seq - current)
        if contiguous {
            let frames = missing.map { (seq: $0.seq, element: OutboundFrame(payload: $0.json, seq: $0.seq)) }
            room.catchUp(to: RoomSnapshot(seq: stored.seq, scene: stored.scene), events: frames)
            metrics.events += frames.count
            for frame in frames { broadcast(frame.element, in: runtime) }
            followDragonStatus(runtime, events: missing)
            refreshStreams(of: runtime)
            return
        }
        room.replace(epoch: stored.epoch, snapshot: RoomSnapshot(seq: stored.seq, scene: stored.scene))
        for event in stored.history {
            room.history.append(seq: event.seq, OutboundFrame(payload: event.json, seq: event.seq))
        }
        recoverDragonStatus(runtime, history: stored.history)
        resyncMembers(of: runtime)
        refreshStreams(of: runtime)
    }

    /// Every local client of the room gets one resync in place of its queued events.
    func resyncMembers(of runtime: RoomRuntime) {
        for member in runtime.members {
            member.needsResync = true
            member.requestWritable(now: turnClock.now())
        }
    }
}
