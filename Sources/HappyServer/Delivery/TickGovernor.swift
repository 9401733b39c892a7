/// How long a ticking room's tick should be for the machine it runs on.
/// The floor is the tick its size asks for (`crowd.tickWritesPerSecond`);
/// while the service thread's busy share stays above `busyAbove`, the tick
/// grows by half, a step at most once a measuring window (so each step's
/// effect is seen before the next), up to `maximumMs`. Once the share has
/// stayed below `idleBelow` for `idleSeconds`, it shrinks by a quarter, and
/// again after as long, back to the floor. Between the marks it holds, so a
/// share hovering near one mark does not flap. Pure: the share and the time
/// are handed in.
struct TickGovernor {
    static let busyAbove = 0.8
    static let idleBelow = 0.5
    static let idleSeconds = 3.0
    static let settleSeconds = ServiceLoad.windowSeconds
    static let growth = 1.5
    static let shrinkage = 0.75
    static let maximumMs = 1000

    enum Step: String {
        case grew, shrank
    }

    /// The tick the load asks for when it is above the floor; nil: the floor.
    private(set) var stretchedMs: Int?
    /// Since when the share has stayed below `idleBelow` (while stretched).
    private var idleSince: Double?
    private var lastStepAt = -Double.infinity

    /// The room's tick: the floor, or longer while stretched (never past `maximumMs`).
    func tickMs(floorMs: Int) -> Int {
        max(floorMs, min(Self.maximumMs, stretchedMs ?? floorMs))
    }

    /// Follows the busy share at `now` (monotonic seconds); returns the step
    /// taken, if any. `tickMs(floorMs:)` then says the tick wanted.
    /// `mayGrow`: whether a longer tick would relieve the thread (a room whose
    /// ticks cost little holds its tick however busy the thread is).
    mutating func update(busyShare: Double, floorMs: Int, now: Double, mayGrow: Bool = true) -> Step? {
        // The room outgrew the stretch: its size sets the tick again.
        if let stretched = stretchedMs, stretched <= floorMs { stretchedMs = nil }
        if busyShare > Self.busyAbove {
            idleSince = nil
            guard mayGrow else { return nil }
            let current = tickMs(floorMs: floorMs)
            guard now - lastStepAt >= Self.settleSeconds, current < Self.maximumMs else { return nil }
            stretchedMs = min(Self.maximumMs, Self.roundedUp(Double(current) * Self.growth))
            lastStepAt = now
            return .grew
        }
        guard busyShare < Self.idleBelow, let stretched = stretchedMs else {
            idleSince = nil
            return nil
        }
        let since = idleSince ?? now
        idleSince = since
        guard now - since >= Self.idleSeconds, now - lastStepAt >= Self.settleSeconds else { return nil }
        let shorter = Self.roundedDown(Double(stretched) * Self.shrinkage)
        stretchedMs = shorter > floorMs ? shorter : nil
        // The next step down waits for another idle spell.
        idleSince = now
        lastStepAt = now
        return .shrank
    }

    /// Ticks go in steps of 10 ms, as the floor does.
    private static func roundedUp(_ milliseconds: Double) -> Int { Int((milliseconds / 10).rounded(.up)) * 10 }
    private static func roundedDown(_ milliseconds: Double) -> Int { Int((milliseconds / 10).rounded(.down)) * 10 }
}
