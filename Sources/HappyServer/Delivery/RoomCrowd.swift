import HappyCore

/// How a room reaches its clients (PROTOCOL.md section 12): its delivery
/// mode and the load that decides it, and what waits for the next tick:
/// events, joins and leaves (the acks that must follow them wait in
/// `Replies`). Owned by `CrowdDelivery`.
struct RoomCrowd {
    private(set) var mode: DeliveryMode
    /// The room's tick, as last announced (`crowd.tickMs`, or longer in a big
    /// room or on a busy service thread).
    private(set) var tickMs: Int
    /// How much longer than its size asks for the tick is while the service thread is busy.
    private(set) var governor = TickGovernor()
    private(set) var load = LoadMeter()
    /// Since when the load has stayed below half of `tickAbove` (in tick mode).
    private(set) var quietSince: Double?
    /// The events and presence of the tick to come (tick mode).
    private(set) var tick: TickSummary?
    /// Joins and leaves not yet sent (a crowd room in each mode).
    private(set) var presence: PresenceBatch?
    /// When the last tick or presence batch went out (monotonic seconds).
    private(set) var lastSentAt = -Double.infinity

    init(mode: DeliveryMode, tickMs: Int) {
        self.mode = mode
        self.tickMs = tickMs
    }

    var hasPending: Bool { tick.map { !$0.isEmpty } ?? false || presence.map { !$0.isEmpty } ?? false }

    /// A tick with something in it is on its way: an ack waits for it, to follow its event.
    var hasTickPending: Bool { mode == .tick && tick.map { !$0.isEmpty } ?? false }

    /// What waits holds only counts of joins and leaves (no event, no name):
    /// news that can wait longer than a tick.
    var pendingIsCountsOnly: Bool {
        if let tick, tick.eventCount > 0 || tick.presence?.isNamed == true { return false }
        return presence?.isNamed != true
    }

    mutating func switchMode(to mode: DeliveryMode) {
        self.mode = mode
        quietSince = nil
        // A room ticking again starts from the tick its size asks for.
        if mode == .each { governor = TickGovernor() }
    }

    mutating func setTickMs(_ milliseconds: Int) {
        tickMs = milliseconds
    }

    /// Lets the governor follow the service thread's busy share; returns its step, if any.
    mutating func governTick(busyShare: Double, floorMs: Int, now: Double, mayGrow: Bool) -> TickGovernor.Step? {
        governor.update(busyShare: busyShare, floorMs: floorMs, now: now, mayGrow: mayGrow)
    }

    mutating func recordEvent(now: Double) {
        load.record(now: now)
    }

    /// Events recorded in the second before `now`.
    mutating func eventsPerSecond(now: Double) -> Int {
        load.eventsPerSecond(now: now)
    }

    /// Notes whether the load is below the line to leave tick mode; returns since when it has been.
    mutating func noteQuiet(_ isQuiet: Bool, now: Double) -> Double? {
        if !isQuiet { quietSince = nil } else if quietSince == nil { quietSince = now }
        return quietSince
    }

    /// Adds a recorded event to the tick to come (a new tick starts after `previous`).
    mutating func addToTick(_ event: RoomEvent, room: String, after previous: UInt64, state: Scene) {
        if tick == nil { tick = TickSummary(room: room, after: previous, state: state) }
        tick!.add(event)
    }

    /// Adds a join or leave to the tick to come (tick mode: open one first) or to the next batch.
    mutating func addPresence(_ change: (inout PresenceBatch) -> Void, count: Int) {
        if mode == .tick, tick != nil {
            if tick!.presence == nil { tick!.presence = PresenceBatch(count: count) }
            change(&tick!.presence!)
            tick!.presence!.count = count
        } else {
            if presence == nil { presence = PresenceBatch(count: count) }
            change(&presence!)
            presence!.count = count
        }
    }

    /// Starts the tick to come when there is none (so that presence can ride in it).
    mutating func openTick(room: String, after seq: UInt64, state: Scene) {
        if tick == nil { tick = TickSummary(room: room, after: seq, state: state) }
    }

    /// Takes what waits to go out at `now`: the tick and the presence batch.
    mutating func takePending(now: Double) -> (tick: TickSummary?, presence: PresenceBatch?) {
        defer {
            tick = nil
            presence = nil
            lastSentAt = now
        }
        let sentTick = tick.flatMap { $0.isEmpty ? nil : $0 }
        let sentPresence = presence.flatMap { $0.isEmpty ? nil : $0 }
        return (sentTick, sentPresence)
    }
}

/// Events a room recorded over the last second, in tenths of a second.
struct LoadMeter {
    private var buckets = [Int](repeating: 0, count: 10)
    /// The tenth of a second the newest bucket counts.
    private var newest = 0

    mutating func record(now: Double) {
        advance(to: now)
        buckets[newest % buckets.count] += 1
    }

    /// Events recorded in the second before `now`.
    mutating func eventsPerSecond(now: Double) -> Int {
        advance(to: now)
        return buckets.reduce(0, +)
    }

    private mutating func advance(to now: Double) {
        let tenth = Int((now * 10).rounded(.down))
        guard tenth > newest else { return }
        let steps = min(buckets.count, tenth - newest)
        for step in 1...steps { buckets[(newest + step) % buckets.count] = 0 }
        newest = tenth
    }
}
