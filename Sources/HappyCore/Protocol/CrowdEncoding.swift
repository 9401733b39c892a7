/// The messages of crowd rooms (PROTOCOL.md section 12), encoded once per room.
extension ServerMessageEncoder {
    /// `{ "type": "delivery", "mode": "tick", "tickMs": 50 }`: the room's delivery changes.
    public static func delivery(_ mode: DeliveryMode, tickMs: Int, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 64)
        w.beginObject()
        w.key("type"); w.literal("\"delivery\"")
        w.key("mode"); w.string(mode.rawValue)
        w.key("tickMs"); w.int(tickMs)
        w.endObject()
        return w.bytes
    }

    /// One `tick`: the events from `from` to `seq`, the state after them, the presence meanwhile.
    public static func tick(_ tick: TickSummary, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 640 + 40 * tick.senders.count)
        w.beginObject()
        w.key("type"); w.literal("\"tick\"")
        w.key("room"); w.string(tick.room)
        w.key("from"); w.uint(tick.from)
        w.key("seq"); w.uint(tick.seq)
        w.key("time"); w.int(Int(tick.time))
        w.key("names")
        w.beginObject()
        for entry in tick.names { w.key(entry.name); w.int(entry.count) }
        w.endObject()
        w.key("senders"); participants(tick.senders, into: &w)
        w.key("senderCount"); w.int(tick.senderCount)
        w.key("changes")
        w.beginArray()
        for change in tick.netChanges {
            w.beginObject()
            w.key("path"); w.string(change.path.rawValue)
            w.key("from"); value(change.from, into: &w)
            w.key("to"); value(change.to, into: &w)
            w.endObject()
        }
        w.endArray()
        w.key("state"); scene(tick.state, into: &w)
        if let presence = tick.presence { w.key("presence"); presenceBatch(presence, into: &w) }
        if let votes = tick.votes { w.key("votes"); self.votes(votes, into: &w) }
        w.endObject()
        return w.bytes
    }

    /// A crowd room's joins and leaves of one tick, as one `presence` message.
    public static func presence(batch: PresenceBatch, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 96 + 40 * (batch.joined.count + batch.left.count))
        w.beginObject()
        w.key("type"); w.literal("\"presence\"")
        presenceBatchMembers(batch, into: &w)
        w.endObject()
        return w.bytes
    }

    static func presenceBatch(_ batch: PresenceBatch, into w: inout JSONWriter) {
        w.beginObject()
        presenceBatchMembers(batch, into: &w)
        w.endObject()
    }

    private static func presenceBatchMembers(_ batch: PresenceBatch, into w: inout JSONWriter) {
        w.key("count"); w.int(batch.count)
        w.key("joined"); participants(batch.joined, into: &w)
        w.key("left"); participants(batch.left, into: &w)
        w.key("joinedCount"); w.int(batch.joinedCount)
        w.key("leftCount"); w.int(batch.leftCount)
    }

    static func votes(_ votes: VoteTally, into w: inout JSONWriter) {
        w.beginObject()
        w.key("forward"); w.int(votes.forward)
        w.key("back"); w.int(votes.back)
        w.endObject()
    }
}
