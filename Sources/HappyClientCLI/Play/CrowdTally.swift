import HappyCore

/// What `play` shows of a crowd room (PROTOCOL.md section 12): the dragon's
/// presses in the last second, from ticks (their `votes`, else their
/// `names`) or from events one by one (a voted event's `votes`), and the
/// most recent distinct senders. The page counts the same way
/// (web/js/crowd.js).
struct CrowdTally {
    /// Presses older than this many seconds are no longer counted.
    static let window = 1.0
    static let recentLimit = 8
    /// How long a room still counts as a crowd after its last sign of one (a
    /// tick, a batch of joins and leaves, a voted event), in seconds.
    static let lingers = 10.0

    private var presses: [(at: Double, forward: Int, back: Int)] = []
    /// The most recent distinct senders, newest first.
    private(set) var recent: [Participant] = []
    private var lastSign = -Double.infinity

    mutating func add(_ tick: TickMessage, at now: Double) {
        lastSign = now
        guard tick.eventCount > 0 else { return }
        if let votes = tick.votes {
            note(forward: votes.forward, back: votes.back, at: now)
        } else {
            func count(_ name: EventName) -> Int { tick.names.first { $0.name == name.rawValue }?.count ?? 0 }
            note(forward: count(.forwardButtonClicked), back: count(.backButtonClicked), at: now)
        }
        for sender in tick.senders.reversed() { noteSender(sender) }
    }

    mutating func add(_ event: EventMessage, at now: Double) {
        if let votes = event.votes {
            lastSign = now
            note(forward: votes.forward, back: votes.back, at: now)
            return
        }
        switch EventName(rawValue: event.name) {
        case .forwardButtonClicked?: note(forward: 1, back: 0, at: now)
        case .backButtonClicked?: note(forward: 0, back: 1, at: now)
        default: break
        }
        if !event.sender.id.isEmpty { noteSender(event.sender) }
    }

    /// A batch of joins and leaves came: the room is a crowd.
    mutating func sawCrowd(at now: Double) {
        lastSign = now
    }

    /// Presses of each button within the last `window` seconds.
    func counts(at now: Double) -> (forward: Int, back: Int) {
        presses.reduce(into: (forward: 0, back: 0)) { sum, entry in
            guard now - entry.at < Self.window else { return }
            sum.forward += entry.forward
            sum.back += entry.back
        }
    }

    func isCrowd(at now: Double, delivery: DeliveryMode) -> Bool {
        delivery == .tick || now - lastSign < Self.lingers
    }

    /// `here (5234) · last second: 41 forward, 19 back · recent: alice, bob, carol`
    func line(at now: Double, here count: Int) -> String {
        let (forward, back) = counts(at: now)
        let names = recent.isEmpty ? "nobody yet" : recent.map(\.name).joined(separator: ", ")
        return "here (\(count)) · last second: \(forward) forward, \(back) back · recent: \(names)"
    }

    private mutating func note(forward: Int, back: Int, at now: Double) {
        presses.removeAll { now - $0.at >= Self.window }
        if forward > 0 || back > 0 { presses.append((now, forward, back)) }
    }

    private mutating func noteSender(_ sender: Participant) {
        recent.removeAll { $0.id == sender.id }
        recent.insert(sender, at: 0)
        if recent.count > Self.recentLimit { recent.removeLast() }
    }
}

/// The dragon event whose label a tick leaves on the panel. A tick counts
/// its events by name, not in order: with one kind of dragon event that is
/// the one; with several, forward or back as the dragon's net move says,
/// else the most frequent. The page decides alike (web/js/describe.js,
/// `statusAfterTick`).
enum TickLabel {
    static let dragonEvents: [EventName] = [.forwardButtonClicked, .backButtonClicked, .didChangeHidden, .didReset]

    static func event(of tick: TickMessage) -> EventName? {
        let kinds = tick.names.compactMap { entry -> (name: EventName, count: Int)? in
            guard let name = EventName(rawValue: entry.name), dragonEvents.contains(name), entry.count > 0 else { return nil }
            return (name, entry.count)
        }
        guard let first = kinds.first else { return nil }
        if kinds.count == 1 { return first.name }
        let move = tick.changes.first { $0.path == "dragon.x" }
        let dx = (move?.to.doubleValue ?? 0) - (move?.from.doubleValue ?? 0)
        let has = { (name: EventName) in kinds.contains { $0.name == name } }
        if dx > 0 && has(.forwardButtonClicked) { return .forwardButtonClicked }
        if dx < 0 && has(.backButtonClicked) { return .backButtonClicked }
        return kinds.reduce(first) { $1.count > $0.count ? $1 : $0 }.name
    }

    /// Who the label names after a tick: the one sender, else `the crowd`.
    static func who(_ tick: TickMessage) -> String {
        if tick.votes == nil, tick.senderCount <= 1, let sender = tick.senders.first { return sender.name }
        return "the crowd"
    }
}
