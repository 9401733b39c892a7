import HappyCore

/// Who gets the answer to an intent.
enum ReplyTarget {
    case connection(Connection)
    case http(HTTPExchange)
    /// The voters of a decided round of dragon votes (section 12).
    case votes(VoteRound)

    /// The WebSocket client that sent the intent, if one did (its pending intents are counted).
    var connection: Connection? {
        if case .connection(let connection) = self { return connection }
        return nil
    }
}

/// One voter of a round, answered when the round is decided.
struct Voter {
    let reply: ReplyTarget
    /// The id of the voter's intent, for its ack.
    let intentID: String?
}

/// The voters of one decided round: each gets an ack (or the error) for its own intent.
final class VoteRound {
    let voters: [Voter]

    init(voters: [Voter]) {
        self.voters = voters
    }
}

/// The acks of one room held until the tick that carries their events has
/// gone out (tick delivery). Owned by `Replies`.
struct HeldReplies {
    struct Ack {
        let frame: OutboundFrame
        let reply: ReplyTarget
    }

    private(set) var acks: [Ack] = []

    mutating func hold(_ ack: Ack) {
        acks.append(ack)
    }

    /// Takes every held ack, in the order they came.
    mutating func release() -> [Ack] {
        defer { acks.removeAll() }
        return acks
    }
}

extension HeldReplies {
    /// Made only here: `Replies` alone changes a room's `heldReplies`.
    struct Key { fileprivate init() {} }
}

/// The answers to intents: acks and errors, to a WebSocket client (after
/// the events it has been sent), to an HTTP request, or to every voter of a
/// round. The one place that tells reply targets apart. In a room delivering
/// ticks an ack waits for the tick that carries its event; each room's
/// held acks are its `heldReplies`, owned here.
final class Replies {
    private let broadcaster: Broadcaster
    private let responder: HTTPResponder
    private let metrics: Metrics
    private let heldKey = HeldReplies.Key()

    init(broadcaster: Broadcaster, responder: HTTPResponder, metrics: Metrics) {
        self.broadcaster = broadcaster
        self.responder = responder
        self.metrics = metrics
    }

    /// An applied intent's ack, counted by its result; a decided round's
    /// voters each get theirs (`counted`, with their own intent's id).
    func acknowledge(_ reply: ReplyTarget, of intent: Intent, seq: UInt64, result: AckResult, in runtime: RoomRuntime) {
        switch reply {
        case .votes(let round):
            metrics.countIntent(action: intent.action.wireName, result: AckResult.counted.rawValue,
                                times: round.voters.count)
            answerVoters(round, seq: seq, in: runtime)
        case .connection, .http:
            metrics.countIntent(action: intent.action.wireName, result: result.rawValue)
            answer(reply, ack: ServerMessageEncoder.ack(id: intent.id, seq: seq, result: result,
                                                        headroom: OutboundFrame.headroom), in: runtime)
        }
    }

    /// Each voter's ack of a decided round (`seq` 0 for a tie).
    func answerVoters(_ round: VoteRound, seq: UInt64, in runtime: RoomRuntime) {
        for voter in round.voters {
            answer(voter.reply, ack: ServerMessageEncoder.ack(id: voter.intentID, seq: seq, result: .counted,
                                                              headroom: OutboundFrame.headroom), in: runtime)
        }
    }

    /// An intent that was not applied; each voter of a round gets the error with its own intent's id.
    func refuse(_ reply: ReplyTarget, error: WireError) {
        switch reply {
        case .connection(let connection):
            broadcaster.sendError(error, to: connection)
        case .http(let exchange):
            responder.respond(exchange, HTTPError(error))
        case .votes(let round):
            for voter in round.voters {
                var own = error
                own.id = voter.intentID
                refuse(voter.reply, error: own)
            }
        }
    }

    /// The room's tick (and presence batch) went out: the acks held for it follow.
    func tickSent(in runtime: RoomRuntime) {
        guard !runtime.heldReplies.acks.isEmpty else { return }
        for held in runtime.modify(heldKey, { $0.release() }) { send(held.frame, to: held.reply) }
    }

    /// At once, or after the tick that carries the event.
    private func answer(_ reply: ReplyTarget, ack: [UInt8], in runtime: RoomRuntime) {
        let frame = OutboundFrame(encoded: ack)
        if runtime.crowd.hasTickPending {
            return runtime.modify(heldKey) { $0.hold(HeldReplies.Ack(frame: frame, reply: reply)) }
        }
        send(frame, to: reply)
    }

    private func send(_ ack: OutboundFrame, to reply: ReplyTarget) {
        switch reply {
        case .connection(let connection):
            // After its event, or the tick that carried it (the last entry of the log).
            broadcaster.send(ack, to: connection)
        case .http(let exchange):
            responder.respond(exchange, status: 200, json: ack.payload)
        case .votes(let round):
            // A round's acks go one by one (`answerVoters`), each with its intent's id.
            for voter in round.voters { send(ack, to: voter.reply) }
        }
    }
}
