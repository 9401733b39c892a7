/// Encodes server→client messages (PROTOCOL.md section 3) straight to bytes.
/// Each function can leave `headroom` bytes in front for the transport's framing.
public enum ServerMessageEncoder {
    /// An `event` message; a voted event is written with `"sender": null` and its `votes`.
    public static func event(_ event: RoomEvent, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 420)
        w.beginObject()
        w.key("type"); w.literal("\"event\"")
        w.key("seq"); w.uint(event.seq)
        w.key("room"); w.string(event.room)
        w.key("time"); w.int(Int(event.time))
        w.key("name"); w.string(event.name.rawValue)
        w.key("sender")
        if event.votes == nil { participant(event.sender, into: &w) } else { w.literal("null") }
        w.key("changes")
        w.beginArray()
        for change in event.changes {
            w.beginObject()
            w.key("path"); w.string(change.path.rawValue)
            w.key("from"); value(change.from, into: &w)
            w.key("to"); value(change.to, into: &w)
            w.endObject()
        }
        w.endArray()
        w.key("state"); scene(event.state, into: &w)
        if let votes = event.votes { w.key("votes"); self.votes(votes, into: &w) }
        w.endObject()
        return w.bytes
    }

    /// The `welcome` message, using the pre-encoded parts of `welcome` that are set.
    public static func welcome(_ welcome: Welcome, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom,
                           capacity: 640 + 40 * welcome.presence.count + (welcome.encodedPresence?.count ?? 0)
                            + welcome.encodedPointers.count)
        w.beginObject()
        w.key("type"); w.literal("\"welcome\"")
        w.key("protocol"); w.int(1)
        w.key("room"); w.string(welcome.room)
        w.key("you")
        w.beginObject()
        w.key("id"); w.string(welcome.you.id)
        w.key("name"); w.string(welcome.you.name)
        w.key("role"); w.string(welcome.role.rawValue)
        w.endObject()
        w.key("epoch"); w.string(welcome.epoch)
        w.key("seq"); w.uint(welcome.seq)
        w.key("state")
        if let encoded = welcome.encodedState { w.raw(encoded) } else { scene(welcome.state, into: &w) }
        w.key("scene")
        if let constants = welcome.encodedConstants { w.raw(constants.geometry) } else { geometry(welcome.geometry, into: &w) }
        w.key("presence")
        if let encoded = welcome.encodedPresence { w.raw(encoded) } else { participants(welcome.presence, into: &w) }
        w.key("presenceCount"); w.int(welcome.presenceCount)
        w.key("observerCount"); w.int(welcome.observerCount)
        w.key("serverTime"); w.int(Int(welcome.serverTime))
        w.key("recovered"); w.bool(welcome.recovered)
        w.key("limits")
        if let constants = welcome.encodedConstants { w.raw(constants.limits) } else { limits(welcome.limits, into: &w) }
        w.key("pointers"); w.raw(welcome.encodedPointers)
        w.key("delivery"); w.string(welcome.delivery.rawValue)
        w.key("tickMs"); w.int(welcome.tickMs)
        w.endObject()
        return w.bytes
    }

    /// The welcome's `scene` and `limits` objects, encoded once for every welcome.
    public static func welcomeConstants(geometry: SceneGeometry, limits: WelcomeLimits) -> WelcomeConstants {
        var g = JSONWriter(capacity: 96)
        Self.geometry(geometry, into: &g)
        var l = JSONWriter(capacity: 96)
        Self.limits(limits, into: &l)
        return WelcomeConstants(geometry: g.bytes, limits: l.bytes)
    }

    private static func geometry(_ geometry: SceneGeometry, into w: inout JSONWriter) {
        w.beginObject()
        w.key("width"); w.number(geometry.width)
        w.key("height"); w.number(geometry.height)
        w.key("dragonSize"); w.number(geometry.dragonSize)
        w.key("step"); w.number(geometry.step)
        w.endObject()
    }

    private static func limits(_ limits: WelcomeLimits, into w: inout JSONWriter) {
        w.beginObject()
        w.key("intentsPerSecond"); w.number(limits.intentsPerSecond)
        w.key("intentBurst"); w.int(limits.intentBurst)
        w.key("maxMessageBytes"); w.int(limits.maxMessageBytes)
        w.endObject()
    }

    /// An `ack` message; `id` is left out when nil.
    public static func ack(id: String?, seq: UInt64, result: AckResult, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 96)
        w.beginObject()
        w.key("type"); w.literal("\"ack\"")
        if let id { w.key("id"); w.string(id) }
        w.key("seq"); w.uint(seq)
        w.key("result"); w.string(result.rawValue)
        w.endObject()
        return w.bytes
    }

    /// An `error` message; its `id` is left out when nil.
    public static func error(_ error: WireError, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 128)
        w.beginObject()
        w.key("type"); w.literal("\"error\"")
        if let id = error.id { w.key("id"); w.string(id) }
        w.key("code"); w.string(error.code.rawValue)
        w.key("message"); w.string(error.message)
        w.endObject()
        return w.bytes
    }

    /// A `presence` message for one client: pass `joined` or `left`.
    public static func presence(joined: Participant? = nil, left: Participant? = nil, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 80)
        w.beginObject()
        w.key("type"); w.literal("\"presence\"")
        if let joined { w.key("joined"); participant(joined, into: &w) }
        if let left { w.key("left"); participant(left, into: &w) }
        w.endObject()
        return w.bytes
    }

    /// A `resync`; `presence` and `epoch` (extensions) let a client that
    /// missed presence messages, or saw the room's epoch change, catch up too.
    public static func resync(seq: UInt64, state: Scene, presence: [Participant]?, presenceCount: Int? = nil,
                              epoch: String? = nil, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 420)
        w.beginObject()
        w.key("type"); w.literal("\"resync\"")
        w.key("seq"); w.uint(seq)
        if let epoch { w.key("epoch"); w.string(epoch) }
        w.key("state"); scene(state, into: &w)
        if let presence { w.key("presence"); participants(presence, into: &w) }
        if let presenceCount { w.key("presenceCount"); w.int(presenceCount) }
        w.endObject()
        return w.bytes
    }

    /// A `pong` with the server's clock in milliseconds since 1970; `id` is left out when nil.
    public static func pong(id: String?, serverTime: Int64, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 64)
        w.beginObject()
        w.key("type"); w.literal("\"pong\"")
        if let id { w.key("id"); w.string(id) }
        w.key("serverTime"); w.int(Int(serverTime))
        w.endObject()
        return w.bytes
    }

    /// The body of `GET /api/state`.
    public static func roomState(room: String, epoch: String, seq: UInt64, state: Scene,
                                 presence: [Participant], presenceCount: Int) -> [UInt8] {
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.key("room"); w.string(room)
        w.key("epoch"); w.string(epoch)
        w.key("seq"); w.uint(seq)
        w.key("state"); scene(state, into: &w)
        w.key("presence"); participants(presence, into: &w)
        w.key("presenceCount"); w.int(presenceCount)
        w.endObject()
        return w.bytes
    }

    // MARK: parts

    /// Writes `scene` into `w` as the wire's scene object, the derived `face.smile` included.
    public static func scene(_ scene: Scene, into w: inout JSONWriter) {
        w.beginObject()
        w.key("face")
        w.beginObject()
        w.key("happiness"); w.int(scene.face.happiness)
        w.key("smile"); w.number(scene.face.smile)
        w.key("scale"); w.number(scene.face.scale)
        w.endObject()
        w.key("heart")
        w.beginObject()
        w.key("rate"); w.number(scene.heart.rate)
        w.key("fillColor"); w.color(scene.heart.fillColor)
        w.key("strokeColor"); w.color(scene.heart.strokeColor)
        w.key("lineWidth"); w.number(scene.heart.lineWidth)
        w.endObject()
        w.key("dragon")
        w.beginObject()
        w.key("x"); w.number(scene.dragon.x)
        w.key("y"); w.number(scene.dragon.y)
        w.key("hidden"); w.bool(scene.dragon.hidden)
        w.endObject()
        w.endObject()
    }

    /// A scene as a JSON object, as stores and the cluster bus keep it (the same bytes as `sceneObject(_:)`).
    public static func sceneJSON(_ scene: Scene) -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        Self.scene(scene, into: &w)
        return w.bytes
    }

    static func participant(_ p: Participant, into w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.string(p.id)
        w.key("name"); w.string(p.name)
        w.endObject()
    }

    /// A scene as a JSON object, for `Welcome.encodedState`.
    public static func sceneObject(_ state: Scene) -> [UInt8] {
        var w = JSONWriter(capacity: 320)
        scene(state, into: &w)
        return w.bytes
    }

    /// A presence list as a JSON array, for `Welcome.encodedPresence`.
    public static func presenceArray(_ list: [Participant]) -> [UInt8] {
        var w = JSONWriter(capacity: 40 * list.count + 2)
        participants(list, into: &w)
        return w.bytes
    }

    /// Adds `participant` at the end of an array made by `presenceArray`,
    /// in place: a join costs one entry, not the whole list again.
    public static func appendPresenceEntry(_ participant: Participant, to array: inout [UInt8]) {
        guard array.last == UInt8(ascii: "]") else { return }
        var w = JSONWriter(capacity: 64)
        Self.participant(participant, into: &w)
        array.removeLast()
        if array.count > 1 { array.append(UInt8(ascii: ",")) }
        array.append(contentsOf: w.bytes)
        array.append(UInt8(ascii: "]"))
    }

    static func participants(_ list: [Participant], into w: inout JSONWriter) {
        w.beginArray()
        for p in list { participant(p, into: &w) }
        w.endArray()
    }

    static func value(_ value: SceneValue, into w: inout JSONWriter) {
        switch value {
        case .integer(let i): w.int(i)
        case .number(let d): w.number(d)
        case .bool(let b): w.bool(b)
        case .color(let c): w.color(c)
        }
    }
}
