import HappyCore

/// Who gets the answer to an intent.
enum ReplyTarget {
    case connection(Connection)
    case http(HTTPExchange)
}

/// Publishes what the commit coordinator recorded: the event into the
/// room's history and broadcast log, the dragon label, the frame streams,
/// then the sender's ack; and answers intents that could not be applied.
final class IntentDelivery: CommitCoordinatorDelegate {
    private let directory: RoomDirectory
    private let broadcaster: Broadcaster
    private let responder: HTTPResponder
    private let streams: FrameStreams
    private let cluster: ClusterLink
    private let metrics: Metrics

    init(directory: RoomDirectory, broadcaster: Broadcaster, responder: HTTPResponder, streams: FrameStreams,
         cluster: ClusterLink, metrics: Metrics) {
        self.directory = directory
        self.broadcaster = broadcaster
        self.responder = responder
        self.streams = streams
        self.cluster = cluster
        self.metrics = metrics
    }

    func runtime(named name: String) -> RoomRuntime? { directory[name] }

    func roomLoaded(_ name: String, result: Result<StoredRoom?, StoreError>) {
        directory.roomLoaded(name, result: result)
    }

    func advance(_ runtime: RoomRuntime, to stored: StoredRoom?, refusedBase: UInt64?) {
        cluster.advance(runtime, to: stored, refusedBase: refusedBase)
    }

    /// History, broadcast, then the sender's ack.
    func deliver(_ intent: PendingIntent) {
        let runtime = intent.runtime
        runtime.pendingIntents -= 1
        if let event = intent.applied.event, let frame = intent.frame, let room = runtime.room {
            room.commit(event, historyElement: frame)
            if let text = directory.dragonStatus.after(event.name, dragon: event.state.dragon) {
                runtime.dragonStatus = text
            }
            metrics.events += 1
            broadcaster.broadcast(frame, in: runtime)
        }
        metrics.countIntent(action: intent.intent.action.wireName, result: intent.applied.outcome.result.rawValue)
        let ack = ServerMessageEncoder.ack(id: intent.intent.id, seq: intent.applied.ackSeq,
                                           result: intent.applied.outcome.result, headroom: OutboundFrame.headroom)
        switch intent.reply {
        case .connection(let connection):
            connection.pendingIntents -= 1
            // After its event (the last entry of the log when it was broadcast).
            broadcaster.send(OutboundFrame(encoded: ack), to: connection)
        case .http(let exchange):
            responder.respond(exchange, status: 200, json: Array(ack[OutboundFrame.headroom...]))
        }
    }

    func batchDelivered(_ intents: [PendingIntent]) {
        streams.refreshStreams(after: intents)
    }

    func answer(_ reply: ReplyTarget, error: WireError) {
        switch reply {
        case .connection(let connection):
            broadcaster.sendError(error, to: connection)
        case .http(let exchange):
            responder.respond(exchange, HTTPError(error))
        }
    }
}
