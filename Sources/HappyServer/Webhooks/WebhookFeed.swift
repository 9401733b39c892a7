import HappyCore

/// What happens in the rooms, as webhook deliveries (PROTOCOL.md section
/// 13): events ride in the commits of their events (`CommitPipeline`) and a
/// new room's in its creation; joins, leaves and rooms emptied are gathered
/// and queued in the store in one call, before the next commit (so they
/// keep their order with the events) or at the end of the loop turn. Those
/// of a room whose creation is not recorded yet wait for it. On the service
/// thread.
///
/// A reload changes the routing for the deliveries made from then on. A
/// delivery already made (gathered here, or in a commit on its way) names
/// the webhook it was made for by key and goes to that webhook's queue, never
/// to another: if a reload removed that webhook, it waits there with the
/// rest of its queue and goes out if the URL is listed again.
final class WebhookFeed {
    private(set) var routing: WebhookRouting
    private let store: any StoreAccess
    private let senders: WebhookSenders
    private let clock: ServiceClock
    private let logger: Logger
    private var pending: [(room: RoomRuntime, delivery: OutboxDelivery)] = []

    init(routing: WebhookRouting, store: any StoreAccess, senders: WebhookSenders, clock: ServiceClock, logger: Logger) {
        self.routing = routing
        self.store = store
        self.senders = senders
        self.clock = clock
        self.logger = logger
    }

    /// The webhooks of a reload, for the deliveries made from now on.
    func reconfigure(_ routing: WebhookRouting) {
        self.routing = routing
    }

    /// A client (not an observer) joined or left a room on this node.
    func presence(_ type: WebhookEventType, _ participant: Participant, in runtime: RoomRuntime) {
        gather(runtime, routing.deliveries(type) {
            WebhookEncoder.delivery(id: Identifiers.newDeliveryID(), type: type, room: runtime.name,
                                    time: clock.wallMilliseconds()) { w in
                w.key("id"); w.string(participant.id)
                w.key("name"); w.string(participant.name)
            }
        })
    }

    /// The last client of a room here went.
    func emptied(_ runtime: RoomRuntime) {
        gather(runtime, routing.deliveries(.roomEmptied) {
            WebhookEncoder.delivery(id: Identifiers.newDeliveryID(), type: .roomEmptied, room: runtime.name,
                                    time: clock.wallMilliseconds()) { _ in }
        })
    }

    private func gather(_ runtime: RoomRuntime, _ deliveries: [OutboxDelivery]) {
        for delivery in deliveries { pending.append((runtime, delivery)) }
    }

    /// The deliveries of a room's creation (new epoch), for its creation commit.
    func created(_ room: String, epoch: String) -> [OutboxDelivery] {
        routing.deliveries(.roomCreated) {
            WebhookEncoder.created(room: room, epoch: epoch, time: clock.wallMilliseconds())
        }
    }

    /// A batch of commits was recorded: the event deliveries in it may be sent.
    /// Rooms created in it may now have their joins and leaves queued.
    func recorded() {
        guard !routing.isEmpty || !pending.isEmpty else { return }
        flush()
        senders.wake()
    }

    /// Queues what gathered in the store (then wakes the senders), but for
    /// the rooms whose creation is still to be recorded.
    func flush() {
        guard !pending.isEmpty else { return }
        var deliveries: [OutboxDelivery] = []
        var held: [(room: RoomRuntime, delivery: OutboxDelivery)] = []
        for entry in pending {
            if entry.room.commits.creationPending { held.append(entry) } else { deliveries.append(entry.delivery) }
        }
        pending = held
        guard !deliveries.isEmpty else { return }
        store.enqueue(deliveries) { [self] result in
            switch result {
            case .success: senders.wake()
            case .failure(let error):
                logger.error("webhook deliveries could not be queued", ["deliveries": "\(deliveries.count)",
                                                                         "error": error.message])
            }
        }
    }
}
