import HappyCore

/// Publishes what the commit path recorded: the event to the room's
/// members, the frame streams, then the sender's ack; and answers intents
/// that could not be applied.
final class IntentDelivery {
    private let broadcaster: Broadcaster
    private let responder: HTTPResponder
    private let streams: FrameStreams
    private let metrics: Metrics

    init(broadcaster: Broadcaster, responder: HTTPResponder, streams: FrameStreams, metrics: Metrics) {
        self.broadcaster = broadcaster
        self.responder = responder
        self.streams = streams
        self.metrics = metrics
    }

    /// A recorded intent (its event committed to the room): broadcast, then the sender's ack.
    func deliver(_ intent: PendingIntent) {
        if intent.applied.event != nil, let frame = intent.frame {
            metrics.events += 1
            broadcaster.broadcast(frame, in: intent.runtime)
        }
        metrics.countIntent(action: intent.intent.action.wireName, result: intent.applied.outcome.result.rawValue)
        let ack = ServerMessageEncoder.ack(id: intent.intent.id, seq: intent.applied.ackSeq,
                                           result: intent.applied.outcome.result, headroom: OutboundFrame.headroom)
        switch intent.reply {
        case .connection(let connection):
            // After its event (the last entry of the log when it was broadcast).
            broadcaster.send(OutboundFrame(encoded: ack), to: connection)
        case .http(let exchange):
            responder.respond(exchange, status: 200, json: Array(ack[OutboundFrame.headroom...]))
        }
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
        }
    }
}
