import HappyCore

/// Publishes what the commit path recorded: the event to the room's
/// members (one by one, or in the next tick), the frame streams, then the
/// sender's ack; and answers intents that could not be applied.
final class IntentDelivery {
    private let crowd: CrowdDelivery
    private let broadcaster: Broadcaster
    private let responder: HTTPResponder
    private let streams: FrameStreams
    private let metrics: Metrics

    init(crowd: CrowdDelivery, broadcaster: Broadcaster, responder: HTTPResponder, streams: FrameStreams,
         metrics: Metrics) {
        self.crowd = crowd
        self.broadcaster = broadcaster
        self.responder = responder
        self.streams = streams
        self.metrics = metrics
    }

    /// A recorded intent (its event committed to the room): published, then the sender's ack.
    func deliver(_ intent: PendingIntent) {
        if let event = intent.applied.event, let frame = intent.frame {
            metrics.events += 1
            crowd.publish(frame, in: intent.runtime) { event }
        }
        if case .votes(let round) = intent.reply {
            metrics.countIntent(action: intent.intent.action.wireName, result: AckResult.counted.rawValue,
                                times: round.voters.count)
            return crowd.answerVoters(round, seq: intent.applied.ackSeq, in: intent.runtime)
        }
        metrics.countIntent(action: intent.intent.action.wireName, result: intent.applied.outcome.result.rawValue)
        crowd.answer(intent.reply, ack: ServerMessageEncoder.ack(id: intent.intent.id, seq: intent.applied.ackSeq,
                                                                 result: intent.applied.outcome.result,
                                                                 headroom: OutboundFrame.headroom),
                     in: intent.runtime)
    }

    /// The intents of one recorded batch, after each was delivered.
    func batchDelivered(_ intents: [PendingIntent]) {
        streams.refreshStreams(after: intents)
    }

    /// An intent that was not applied.
    func answer(_ reply: ReplyTarget, error: WireError) {
        switch reply {
        case .connection(let connection):
            broadcaster.sendError(error, to: connection)
        case .http(let exchange):
            responder.respond(exchange, HTTPError(error))
        case .votes(let round):
            for voter in round.voters {
                var own = error
                own.id = voter.intentID
                answer(voter.reply, error: own)
            }
        }
    }
}
