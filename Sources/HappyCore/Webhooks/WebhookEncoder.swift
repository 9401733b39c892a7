/// Webhook deliveries and their batches as the receivers get them
/// (PROTOCOL.md section 13).
public enum WebhookEncoder {
    /// `{ "id", "type", "room", "time", "data": {...} }`; `data` writes the object's members.
    public static func delivery(id: String, type: WebhookEventType, room: String, time: Int64,
                                data: (inout JSONWriter) -> Void) -> [UInt8] {
        var w = JSONWriter(capacity: 160)
        w.beginObject()
        w.key("id"); w.string(id)
        w.key("type"); w.string(type.rawValue)
        w.key("room"); w.string(room)
        w.key("time"); w.int(Int(time))
        w.key("data")
        w.beginObject()
        data(&w)
        w.endObject()
        w.endObject()
        return w.bytes
    }

    /// An event delivery: `data` is the event exactly as it was broadcast.
    public static func event(_ json: [UInt8], id: String, room: String, time: Int64) -> [UInt8] {
        var w = JSONWriter(capacity: 96 + json.count)
        w.beginObject()
        w.key("id"); w.string(id)
        w.key("type"); w.string(WebhookEventType.event.rawValue)
        w.key("room"); w.string(room)
        w.key("time"); w.int(Int(time))
        w.key("data"); w.raw(json)
        w.endObject()
        return w.bytes
    }

    /// A room's creation (a new epoch); its id is the epoch's, the same on every node.
    public static func created(room: String, epoch: String, time: Int64) -> [UInt8] {
        delivery(id: "\(epoch)-created", type: .roomCreated, room: room, time: time) { w in
            w.key("epoch"); w.string(epoch)
        }
    }

    /// `{ "deliveries": [ ... ] }`.
    public static func batch(_ entries: [OutboxEntry]) -> [UInt8] {
        var w = JSONWriter(capacity: 32 + entries.reduce(0) { $0 + $1.json.count + 1 })
        w.beginObject()
        w.key("deliveries")
        w.beginArray()
        for entry in entries { w.raw(entry.json) }
        w.endArray()
        w.endObject()
        return w.bytes
    }
}

/// Which webhooks want which deliveries: the configuration's `webhooks`
/// by type, looked up on every event. Webhooks are named by their key
/// (`HappyConfig.Webhook.key`), never by their place in the list.
public struct WebhookRouting: Sendable {
    private let byType: [WebhookEventType: [Int]]

    /// Indexes `webhooks` by the delivery types each wants.
    public init(_ webhooks: [HappyConfig.Webhook]) {
        var byType: [WebhookEventType: [Int]] = [:]
        for webhook in webhooks {
            for type in Set(webhook.events) { byType[type, default: []].append(webhook.key) }
        }
        self.byType = byType
    }

    /// True when no webhook is configured: nothing is ever delivered.
    public var isEmpty: Bool { byType.isEmpty }

    /// The keys of the webhooks that want `type`, in the configuration's order.
    public func webhooks(for type: WebhookEventType) -> [Int] { byType[type] ?? [] }

    /// The delivery for each webhook that wants `type`; `json` is built only when one does.
    public func deliveries(_ type: WebhookEventType, _ json: () -> [UInt8]) -> [OutboxDelivery] {
        let targets = webhooks(for: type)
        guard !targets.isEmpty else { return [] }
        let encoded = json()
        return targets.map { OutboxDelivery(webhook: $0, json: encoded) }
    }
}
