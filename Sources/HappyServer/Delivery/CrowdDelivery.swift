import HappyCore

/// How a room's events and presence reach its clients (PROTOCOL.md
/// sections 3 and 12). In `each` delivery every event is broadcast on its
/// own; in `tick` delivery the events of one `crowd.tickMs` go out as one
/// `tick`, encoded once for the room, and `Replies` sends the acks held for
/// it once it is out. With `crowd.mode` `auto` a room switches to ticks
/// while its load (events per second × clients) is above `tickAbove`, and
/// back once it has stayed below half of that for 10 s. In a room of more
/// than `presenceBatchAbove` clients joins and leaves go out in batches, at
/// most one per tick. A ticking room's tick follows its size and, through
/// its `TickGovernor`, how busy the service thread is (`ServiceLoad`). Owns
/// each room's `crowd`; one timer ticks every room with something to send.
final class CrowdDelivery {
    /// Seconds the load must stay low before a room leaves tick mode.
    static let quietSeconds = 10.0

    private var settings: HappyConfig.CrowdSection
    private var presenceBroadcastMax: Int

    /// Applies a configuration read again (SIGHUP): rooms follow the new
    /// settings at their next delivery decision.
    func reconfigure(_ settings: HappyConfig.CrowdSection, presenceBroadcastMax: Int) {
        self.settings = settings
        self.presenceBroadcastMax = presenceBroadcastMax
    }
    private let broadcaster: Broadcaster
    private let replies: Replies
    private let timers: any TimerScheduling
    private let metrics: Metrics
    private let logger: Logger
    private let clock: ServiceClock
    private let serviceLoad: ServiceLoad
    /// Rooms with something for the next tick, by identity.
    private var dueRooms: [ObjectIdentifier: RoomRuntime] = [:]
    /// Rooms in tick mode, watched for their load to fall.
    private var tickingRooms: [ObjectIdentifier: RoomRuntime] = [:]
    private var timerDue: Double?
    private let crowdKey = RoomCrowd.Key()

    init(settings: HappyConfig.CrowdSection, presenceBroadcastMax: Int, broadcaster: Broadcaster, replies: Replies,
         timers: any TimerScheduling, metrics: Metrics, logger: Logger, clock: ServiceClock, serviceLoad: ServiceLoad) {
        self.settings = settings
        self.presenceBroadcastMax = presenceBroadcastMax
        self.broadcaster = broadcaster
        self.replies = replies
        self.timers = timers
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.serviceLoad = serviceLoad
    }

    /// How long after its last tick (or batch) a room sends what waits: its
    /// tick, or a second when that is only counts of joins and leaves (a
    /// crowd past `presenceBroadcastMax` joining needs no more).
    private func interval(_ runtime: RoomRuntime) -> Double {
        let tick = Double(runtime.crowd.tickMs) / 1000
        return runtime.crowd.pendingIsCountsOnly ? max(tick, Self.countsOnlySeconds) : tick
    }

    static let countsOnlySeconds = 1.0

    /// The delivery a new room starts with.
    var initialMode: DeliveryMode { settings.mode == .tick ? .tick : .each }

    // MARK: events

    /// A recorded event (here or on another node): broadcast now, or carried
    /// by the next tick. `event` is read only for a tick (another node's
    /// event is then decoded from its JSON).
    func publish(_ frame: OutboundFrame, in runtime: RoomRuntime, event: () -> RoomEvent?) {
        let now = clock.now()
        runtime.modify(crowdKey) { $0.recordEvent(now: now) }
        if runtime.crowd.mode == .each && shouldTick(runtime, now: now) { switchToTicks(runtime) }
        guard runtime.crowd.mode == .tick, let event = event() else { return broadcaster.broadcast(frame, in: runtime) }
        let name = runtime.name
        runtime.modify(crowdKey) { $0.addToTick(event, room: name, after: event.seq - 1, state: event.state) }
        due(runtime)
    }

    // MARK: presence

    /// Someone joined the room (here, before it reads the room's broadcasts,
    /// or on another node); `countAfter`: everyone in the room with it.
    func joined(_ participant: Participant, in runtime: RoomRuntime, countAfter: Int) {
        presenceChanged(in: runtime, count: countAfter, named: countAfter <= presenceBroadcastMax) { batch, named in
            batch.join(participant, named: named)
        } single: {
            ServerMessageEncoder.presence(joined: participant, headroom: OutboundFrame.headroom)
        }
    }

    /// Someone left; `countBefore`: everyone in the room before the leave.
    func left(_ participant: Participant, in runtime: RoomRuntime, countBefore: Int) {
        presenceChanged(in: runtime, count: countBefore - 1, named: countBefore <= presenceBroadcastMax) { batch, named in
            batch.leave(participant, named: named)
        } single: {
            ServerMessageEncoder.presence(left: participant, headroom: OutboundFrame.headroom)
        }
    }

    /// One message per join or leave in a small room (not past `presenceBroadcastMax`);
    /// batched in a crowd and in tick mode. `count`: everyone in the room after it.
    private func presenceChanged(in runtime: RoomRuntime, count: Int, named: Bool,
                                 _ change: (inout PresenceBatch, Bool) -> Void, single: () -> [UInt8]) {
        let batched = runtime.crowd.mode == .tick || count > settings.presenceBatchAbove
        guard batched else {
            if named { broadcaster.broadcast(OutboundFrame(encoded: single()), in: runtime) }
            return
        }
        if runtime.crowd.mode == .tick, let committed = runtime.room?.committed {
            let name = runtime.name
            runtime.modify(crowdKey) { $0.openTick(room: name, after: committed.seq, state: committed.scene) }
        }
        runtime.modify(crowdKey) { $0.addPresence({ change(&$0, named) }, count: count) }
        due(runtime)
    }

    // MARK: the tick

    private func due(_ runtime: RoomRuntime) {
        dueRooms[ObjectIdentifier(runtime)] = runtime
        schedule(at: max(clock.now(), runtime.crowd.lastSentAt + interval(runtime)))
    }

    private func schedule(at time: Double) {
        if let timerDue, timerDue <= time { return }
        timerDue = time
        timers.schedule(.ticks, afterSeconds: max(0, time - clock.fresh()))
    }

    /// The tick timer: sends what is due in each room (never sooner than a tick after the last).
    func tick() {
        timerDue = nil
        let now = clock.fresh()
        var earliest = Double.infinity
        for (key, runtime) in dueRooms {
            let due = runtime.crowd.lastSentAt + interval(runtime)
            guard due <= now + 0.001 else {
                earliest = min(earliest, due)
                continue
            }
            dueRooms.removeValue(forKey: key)
            if runtime.crowd.mode == .tick { retune(runtime, now: now) }
            send(runtime.modify(crowdKey) { $0.takePending(now: now) }, in: runtime)
        }
        for runtime in tickingRooms.values where runtime.crowd.mode == .tick {
            leaveTicksIfQuiet(runtime, now: now)
        }
        if !tickingRooms.isEmpty { earliest = min(earliest, now + 1) }
        if earliest.isFinite { schedule(at: earliest) }
    }

    /// The tick and the presence batch, then the acks held for them.
    private func send(_ pending: (tick: TickSummary?, presence: PresenceBatch?), in runtime: RoomRuntime) {
        if var tick = pending.tick {
            tick.time = clock.wallMilliseconds()
            broadcaster.broadcastTick(tick, in: runtime)
            metrics.ticks += 1
        }
        if let batch = pending.presence {
            broadcaster.broadcast(OutboundFrame(encoded: ServerMessageEncoder.presence(batch: batch,
                                                                                        headroom: OutboundFrame.headroom)),
                                  in: runtime)
            metrics.presenceBatches += 1
        }
        replies.tickSent(in: runtime)
    }

    // MARK: switching

    /// The room's load over the last second, in deliveries per second.
    private func load(_ runtime: RoomRuntime, now: Double) -> Int {
        runtime.modify(crowdKey) { $0.eventsPerSecond(now: now) } * max(1, runtime.listenerCount)
    }

    private func shouldTick(_ runtime: RoomRuntime, now: Double) -> Bool {
        settings.mode == .auto && load(runtime, now: now) > settings.tickAbove
    }

    /// A ticking room's tick follows its size: longer at once when its
    /// clients outgrow `tickWritesPerSecond`, shorter once they shrank by a
    /// quarter (not at every leave). Above that floor it follows the service
    /// thread's busy share, a step at a time (`TickGovernor`), when its ticks
    /// weigh: they take at least a tenth of `tickWritesPerSecond`. A small
    /// room's ticks cost little, and a longer tick would only delay its acks
    /// (the thread may be busy with anything, a flood refused included).
    /// Each change is announced.
    private func retune(_ runtime: RoomRuntime, now: Double) {
        let floor = settings.tickMilliseconds(clients: runtime.listenerCount)
        let busyShare = serviceLoad.busyShare()
        let current = runtime.crowd.tickMs
        let writesPerSecond = runtime.listenerCount * 1000 / max(1, current)
        let ticksWeigh = writesPerSecond * 10 >= settings.tickWritesPerSecond
        let step = runtime.modify(crowdKey) {
            $0.governTick(busyShare: busyShare, floorMs: floor, now: now, mayGrow: ticksWeigh)
        }
        let wanted = runtime.crowd.governor.tickMs(floorMs: floor)
        guard wanted != current, step != nil || wanted > current || wanted * 4 <= current * 3 else { return }
        runtime.modify(crowdKey) { $0.setTickMs(wanted) }
        announce(.tick, in: runtime)
        logger.info("room's tick changed", ["room": runtime.name, "tickMs": "\(wanted)",
                                            "reason": step == nil ? "clients" : "busy",
                                            "clients": "\(runtime.listenerCount)",
                                            "busyShare": "\((busyShare * 100).rounded() / 100)"])
    }

    private func switchToTicks(_ runtime: RoomRuntime) {
        // Joins and leaves waiting for their batch go first, in the old mode.
        let now = clock.now()
        send(runtime.modify(crowdKey) { $0.takePending(now: now) }, in: runtime)
        let tickMs = settings.tickMilliseconds(clients: runtime.listenerCount)
        runtime.modify(crowdKey) {
            $0.switchMode(to: .tick)
            $0.setTickMs(tickMs)
        }
        tickingRooms[ObjectIdentifier(runtime)] = runtime
        announce(.tick, in: runtime)
        metrics.deliverySwitches += 1
        logger.info("room switched to tick delivery", ["room": runtime.name, "clients": "\(runtime.listenerCount)"])
        schedule(at: clock.now() + 1)
    }

    private func leaveTicksIfQuiet(_ runtime: RoomRuntime, now: Double) {
        guard settings.mode == .auto else { return }
        let quiet = load(runtime, now: now) < settings.tickAbove / 2
        guard let since = runtime.modify(crowdKey, { $0.noteQuiet(quiet, now: now) }), now - since >= Self.quietSeconds
        else { return }
        // The last tick goes out before the room says it delivers each event again.
        send(runtime.modify(crowdKey) { $0.takePending(now: now) }, in: runtime)
        dueRooms.removeValue(forKey: ObjectIdentifier(runtime))
        runtime.modify(crowdKey) { $0.switchMode(to: .each) }
        tickingRooms.removeValue(forKey: ObjectIdentifier(runtime))
        announce(.each, in: runtime)
        metrics.deliverySwitches += 1
        logger.info("room switched to each delivery", ["room": runtime.name, "clients": "\(runtime.listenerCount)"])
    }

    private func announce(_ mode: DeliveryMode, in runtime: RoomRuntime) {
        broadcaster.broadcast(OutboundFrame(encoded: ServerMessageEncoder.delivery(mode, tickMs: runtime.crowd.tickMs,
                                                                                   headroom: OutboundFrame.headroom)),
                              in: runtime)
    }

    /// A room left memory: it is no longer ticked.
    func forget(_ runtime: RoomRuntime) {
        dueRooms.removeValue(forKey: ObjectIdentifier(runtime))
        tickingRooms.removeValue(forKey: ObjectIdentifier(runtime))
    }
}

extension RoomCrowd {
    /// Made only here: `CrowdDelivery` alone changes a room's `crowd`.
    struct Key { fileprivate init() {} }
}
