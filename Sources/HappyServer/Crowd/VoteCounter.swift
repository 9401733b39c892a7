import HappyCore

/// One room's dragon votes of the current round (`crowd.dragon` `vote`):
/// each voter's latest vote counts, and every vote is answered. Owned by `VoteCounter`.
struct RoomVotes {
    private(set) var ballots: [String: (forward: Bool, participant: Participant)] = [:]
    /// Voter keys, in the order they first voted.
    private(set) var order: [String] = []
    /// Every vote's answer, in the order the votes came.
    private(set) var answers: [Voter] = []
    /// When the round's first vote came (monotonic seconds).
    private(set) var openedAt: Double?

    var isEmpty: Bool { answers.isEmpty }

    /// Counts a vote; a voter's later vote in the same round replaces its earlier one.
    mutating func cast(forward: Bool, voter: Voter, key: String, participant: Participant, now: Double) {
        if openedAt == nil { openedAt = now }
        if ballots[key] == nil { order.append(key) }
        ballots[key] = (forward, participant)
        answers.append(voter)
    }

    /// Ends the round: the tally and whom to answer.
    mutating func close() -> (tally: VoteTally, voters: [Voter]) {
        defer {
            ballots.removeAll()
            order.removeAll()
            answers.removeAll()
            openedAt = nil
        }
        var forward = 0, back = 0
        var recent: [Participant] = []
        for key in order.reversed() {
            guard let ballot = ballots[key] else { continue }
            if ballot.forward { forward += 1 } else { back += 1 }
            if recent.count < TickSummary.senderLimit { recent.append(ballot.participant) }
        }
        return (VoteTally(forward: forward, back: back, voters: recent,
                          voterIDs: Set(order)), answers)  // keys: participant ids, "http <address>" over HTTP
    }
}

/// Dragon votes (PROTOCOL.md section 12): with `crowd.dragon` `vote`,
/// `dragon.forward` and `dragon.back` intents received during one tick are
/// counted, and at its end one event applies the majority (a tie moves
/// nothing); every voter's ack says `counted`. `IntentRouter` sends every
/// other intent to the commit coordinator. In a cluster each node counts its own
/// clients' votes and commits at most one dragon event per tick.
final class VoteCounter {
    private var isOn: Bool
    private let coordinator: CommitCoordinator
    private let replies: Replies
    private let timers: any TimerScheduling
    private let metrics: Metrics
    private let clock: ServiceClock
    /// Rooms with a round open, by identity.
    private var openRooms: [ObjectIdentifier: RoomRuntime] = [:]
    private var timerDue: Double?
    private let votesKey = RoomVotes.Key()

    init(settings: HappyConfig.CrowdSection, coordinator: CommitCoordinator, replies: Replies,
         timers: any TimerScheduling, metrics: Metrics, clock: ServiceClock) {
        isOn = settings.dragon == .vote
        self.coordinator = coordinator
        self.replies = replies
        self.timers = timers
        self.metrics = metrics
        self.clock = clock
    }

    /// Applies a configuration read again (SIGHUP): rounds already open still end at their tick.
    func reconfigure(_ settings: HappyConfig.CrowdSection) {
        isOn = settings.dragon == .vote
    }

    /// Whether `intent` is a dragon vote to count: votes are on and the room is loaded.
    func counts(_ intent: Intent, in runtime: RoomRuntime) -> Bool {
        isOn && runtime.room != nil && Self.direction(of: intent.action) != nil
    }

    /// Counts an admitted dragon vote (`counts` said so); its ack waits for the round's end.
    /// `voterKey` names the voter (its connection, or its address over HTTP).
    func cast(_ intent: Intent, in runtime: RoomRuntime, sender: Participant, reply: ReplyTarget, voterKey: String) {
        guard let forward = Self.direction(of: intent.action) else { return }
        metrics.votes += 1
        let now = clock.now()
        runtime.modify(votesKey) {
            $0.cast(forward: forward, voter: Voter(reply: reply, intentID: intent.id), key: voterKey,
                    participant: sender, now: now)
        }
        let key = ObjectIdentifier(runtime)
        if openRooms[key] == nil {
            openRooms[key] = runtime
            schedule(at: now + Self.roundSeconds(runtime))
        }
    }

    /// A round lasts the room's tick.
    private static func roundSeconds(_ runtime: RoomRuntime) -> Double {
        Double(runtime.crowd.tickMs) / 1000
    }

    private static func direction(of action: Action) -> Bool? {
        switch action {
        case .dragonForward: return true
        case .dragonBack: return false
        default: return nil
        }
    }

    private func schedule(at time: Double) {
        if let timerDue, timerDue <= time { return }
        timerDue = time
        timers.schedule(.votes, afterSeconds: max(0, time - clock.fresh()))
    }

    /// The vote timer: decides every round a tick old.
    func tick() {
        timerDue = nil
        let now = clock.fresh()
        var earliest = Double.infinity
        for (key, runtime) in openRooms {
            guard let opened = runtime.votes.openedAt else {
                openRooms.removeValue(forKey: key)
                continue
            }
            let closes = opened + Self.roundSeconds(runtime)
            guard closes <= now + 0.001 else {
                earliest = min(earliest, closes)
                continue
            }
            openRooms.removeValue(forKey: key)
            decide(runtime)
        }
        if earliest.isFinite { schedule(at: earliest) }
    }

    private func decide(_ runtime: RoomRuntime) {
        let (tally, voters) = runtime.modify(votesKey) { $0.close() }
        metrics.voteRounds += 1
        let round = VoteRound(voters: voters)
        guard tally.forward != tally.back else {
            // A tie moves nothing and sends nothing but the voters' acks.
            return replies.answerVoters(round, seq: 0, in: runtime)
        }
        let action: Action = tally.forward > tally.back ? .dragonForward : .dragonBack
        coordinator.submit(Intent(action: action), in: runtime, sender: Participant(id: "", name: ""),
                           reply: .votes(round), votes: tally)
    }
}

extension RoomVotes {
    /// Made only here: `VoteCounter` alone changes a room's `votes`.
    struct Key { fileprivate init() {} }
}
