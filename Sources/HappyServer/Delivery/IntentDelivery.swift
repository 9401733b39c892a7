import HappyCore

/// Publishes what the commit path recorded: the event to the room's
/// members (one by one, or in the next tick), the frame streams, then the
/// sender's ack through `Replies`; and hands refusals to `Replies`. Events
/// another node recorded, and rooms whose state jumped, reach the clients
/// here too.
final class IntentDelivery {
    private let crowd: CrowdDelivery
    private let replies: Replies
    private let broadcaster: Broadcaster
    private let streams: FrameStreams
    private let metrics: Metrics

    init(crowd: CrowdDelivery, replies: Replies, broadcaster: Broadcaster, streams: FrameStreams, metrics: Metrics) {
        self.crowd = crowd
        self.replies = replies
        self.broadcaster = broadcaster
        self.streams = streams
        self.metrics = metrics
    }

    /// A recorded event (committed to the room): to its members, one by one or in the next tick.
    func publish(_ event: RoomEvent, frame: OutboundFrame, in runtime: RoomRuntime) {
        metrics.events += 1
        crowd.publish(frame, in: runtime) { event }
    }

    /// A recorded intent's ack (each voter's, for a round), after its event.
    func acknowledge(_ reply: ReplyTarget, of intent: Intent, seq: UInt64, result: AckResult, in runtime: RoomRuntime) {
        replies.acknowledge(reply, of: intent, seq: seq, result: result, in: runtime)
    }

    /// One recorded batch is delivered: the frame streams of the rooms it changed refresh.
    func batchDelivered(changing rooms: [RoomRuntime]) {
        streams.refreshStreams(ofChanged: rooms)
    }

    /// An intent that was not applied.
    func refuse(_ reply: ReplyTarget, error: WireError) {
        replies.refuse(reply, error: error)
    }

    // MARK: rooms caught up with the shared store

    /// Events another node recorded, following on directly: broadcast as
    /// that node encoded them (or carried by the next tick), then the streams.
    func publishFollowed(_ events: [StoredEvent], frames: [OutboundFrame], in runtime: RoomRuntime) {
        for (event, frame) in zip(events, frames) {
            crowd.publish(frame, in: runtime) { RoomEvent(json: event.json) }
        }
        streams.refreshStreams(of: runtime)
    }

    /// The room's state jumped: every local client gets one resync.
    func resync(_ runtime: RoomRuntime) {
        broadcaster.resyncMembers(of: runtime)
    }

    func refreshStreams(of runtime: RoomRuntime) {
        streams.refreshStreams(of: runtime)
    }
}
