import HappyCore

/// An intent applied to a room's working state, waiting for its record.
///
/// A class: it passes through the pipeline, its batch and the commit
/// machine's actions, and a reference is one retain where the value's
/// dozen fields were a dozen.
final class PendingIntent {
    let runtime: RoomRuntime
    let reply: ReplyTarget
    let intent: Intent
    let sender: Participant
    let applied: AppliedIntent
    /// The event, encoded once, when the intent changed something.
    let frame: OutboundFrame?
    /// The votes of a voted dragon event, kept to apply it again after a conflict.
    let votes: VoteTally?

    init(runtime: RoomRuntime, reply: ReplyTarget, intent: Intent, sender: Participant, applied: AppliedIntent,
         frame: OutboundFrame?, votes: VoteTally? = nil) {
        self.runtime = runtime
        self.reply = reply
        self.intent = intent
        self.sender = sender
        self.applied = applied
        self.frame = frame
        self.votes = votes
    }
}

/// Group commit: the intents applied during one loop turn are recorded in one
/// store call; only when it returns are their events broadcast and their acks
/// sent, in order. One batch is in flight at a time; the next one gathers
/// meanwhile.
struct CommitPipeline {
    struct Batch {
        let id: UInt64
        let intents: [PendingIntent]
        /// One commit per room, in the order of `rooms`.
        let commits: [RoomCommit]
        let rooms: [RoomRuntime]

        /// The room of the commit for `name`, and that commit.
        func commit(of name: String) -> (runtime: RoomRuntime, commit: RoomCommit)? {
            guard let index = commits.firstIndex(where: { $0.room == name }) else { return nil }
            return (rooms[index], commits[index])
        }
    }

    private(set) var open: [PendingIntent] = []
    private var openCreations: [(commit: RoomCommit, runtime: RoomRuntime)] = []
    private(set) var inFlight: Batch?
    private var nextBatchID: UInt64 = 1
    private var nextCommitSerial: UInt64 = 1

    var isIdle: Bool { open.isEmpty && openCreations.isEmpty && inFlight == nil }
    var hasWork: Bool { !open.isEmpty || !openCreations.isEmpty }

    mutating func append(_ intent: PendingIntent) {
        open.append(intent)
    }

    /// Records a room that was just created, so its epoch is kept.
    mutating func appendCreation(_ commit: RoomCommit, of runtime: RoomRuntime) {
        openCreations.append((commit, runtime))
    }

    /// Takes the open intents as the next batch, if none is in flight. With
    /// history, each event carries the dragon's label after it.
    mutating func startBatch(withHistory: Bool, webhooks: WebhookRouting = WebhookRouting([])) -> Batch? {
        guard inFlight == nil, hasWork else { return nil }
        let built = Self.commits(for: open, withHistory: withHistory, webhooks: webhooks)
        var commits = openCreations.map(\.commit) + built.commits
        for index in commits.indices {
            commits[index].serial = nextCommitSerial
            nextCommitSerial += 1
        }
        let batch = Batch(id: nextBatchID, intents: open, commits: commits,
                          rooms: openCreations.map(\.runtime) + built.rooms)
        nextBatchID += 1
        open.removeAll(keepingCapacity: true)
        openCreations.removeAll()
        inFlight = batch
        return batch
    }

    /// Ends the batch in flight; returns it.
    mutating func finishBatch(id: UInt64) -> Batch? {
        guard let batch = inFlight, batch.id == id else { return nil }
        inFlight = nil
        return batch
    }

    /// Takes the intents not yet sent to the store (they fail with a failed batch).
    mutating func takeOpen() -> [PendingIntent] {
        defer { open.removeAll() }
        return open
    }

    /// Takes the open intents of the room named `room`, leaving the others in order.
    mutating func takeOpen(ofRoom room: String) -> [PendingIntent] {
        let taken = open.filter { $0.runtime.name == room }
        open.removeAll { $0.runtime.name == room }
        return taken
    }

    /// One commit per room: its events in seq order and its final state.
    /// With history, each event carries the dragon's label right after it,
    /// followed from the room's recorded label (one batch is in flight at a
    /// time, so that label is up to date when the next batch starts).
    /// A batch rarely spans more than a few rooms: a linear search beats hashing.
    /// Each event's webhook deliveries ride in its commit, so they are kept exactly when it is.
    static func commits(for intents: [PendingIntent], withHistory: Bool,
                        webhooks: WebhookRouting = WebhookRouting([])) -> (commits: [RoomCommit], rooms: [RoomRuntime]) {
        var commits: [RoomCommit] = []
        var rooms: [RoomRuntime] = []
        var roomLabels: [String] = []
        for intent in intents {
            guard let event = intent.applied.event, let frame = intent.frame,
                  let room = intent.runtime.room else { continue }
            var index = commits.lastIndex(where: { $0.room == event.room })
            if let index {
                commits[index].seq = event.seq
                commits[index].scene = event.state
            } else {
                commits.append(RoomCommit(room: event.room, epoch: room.epoch, baseSeq: event.seq - 1, seq: event.seq,
                                          scene: event.state, events: []))
                rooms.append(intent.runtime)
                roomLabels.append(room.dragonStatus)
                index = commits.count - 1
            }
            guard let index else { continue }
            commits[index].deliveries += webhooks.deliveries(.event) {
                WebhookEncoder.event(frame.payload, id: "\(room.epoch)-\(event.seq)", room: event.room, time: event.time)
            }
            guard withHistory else { continue }
            if let label = room.labels.after(event.name, dragon: event.state.dragon) { roomLabels[index] = label }
            commits[index].events.append(StoredEvent(seq: event.seq, json: frame.payload, dragonStatus: roomLabels[index]))
        }
        return (commits, rooms)
    }
}
