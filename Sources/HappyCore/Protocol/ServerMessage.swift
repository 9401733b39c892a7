/// A server→client message as a client reads it (the client side of section 3).
public enum ServerMessage: Sendable {
    /// The first message on every connection.
    case welcome(WelcomeMessage)
    /// One numbered change of the room.
    case event(EventMessage)
    /// The answer to an intent of this client: its `id`, the seq of the event it caused
    /// (the room's current seq when nothing changed, 0 for a tied vote) and the result as
    /// sent (`applied`, `clamped`, `unchanged`, `blocked` or `counted`).
    case ack(id: String?, seq: UInt64, result: String)
    /// An error answer to one of this client's messages; the connection stays open.
    /// An unknown code reads as `badMessage`.
    case error(WireError)
    /// One client joined or left (in rooms that do not batch presence).
    case presence(joined: Participant?, left: Participant?)
    /// A crowd room's joins and leaves of one tick (section 12).
    case presenceBatch(PresenceBatch)
    /// The room's delivery changed (section 12).
    case delivery(DeliveryMode, tickMs: Int)
    /// Every event of a tick, in one message (section 12).
    case tick(TickMessage)
    /// The client fell behind: replace the state with `state`, which is current at `seq`.
    case resync(seq: UInt64, state: Scene)
    /// The answer to a `ping`, with the server's clock in milliseconds since 1970.
    case pong(id: String?, serverTime: Int64)
    /// Others' live pointers (section 10).
    case pointers(PointersMessage)
    /// A message of an unknown type, or of a known type that could not be read.
    case other(JSONValue)

    /// Parses one message; nil when the text is not a JSON object.
    public static func decode(_ text: String) -> (ServerMessage, JSONValue)? {
        guard let json = try? JSONParser.parse(text, maxDepth: 64), json.isObject else { return nil }
        return (decode(json), json)
    }

    /// Reads a parsed message by its `type`; anything it cannot read becomes `other`.
    public static func decode(_ json: JSONValue) -> ServerMessage {
        switch json["type"]?.stringValue {
        case "welcome":
            if let welcome = WelcomeMessage(json: json) { return .welcome(welcome) }
        case "event":
            if let event = EventMessage(json: json) { return .event(event) }
        case "ack":
            if let seq: UInt64 = json["seq"]?.wholeNumber() {
                return .ack(id: json["id"]?.stringValue, seq: seq,
                            result: json["result"]?.stringValue ?? "")
            }
        case "error":
            let code = ErrorCode(rawValue: json["code"]?.stringValue ?? "") ?? .badMessage
            return .error(WireError(code, json["message"]?.stringValue ?? "", id: json["id"]?.stringValue))
        case "presence":
            if let batch = PresenceBatch(json: json) { return .presenceBatch(batch) }
            return .presence(joined: json["joined"].flatMap(Participant.init(json:)),
                             left: json["left"].flatMap(Participant.init(json:)))
        case "delivery":
            if let mode = json["mode"]?.stringValue.flatMap(DeliveryMode.init(rawValue:)) {
                return .delivery(mode, tickMs: json["tickMs"]?.wholeNumber() ?? 50)
            }
        case "tick":
            if let tick = TickMessage(json: json) { return .tick(tick) }
        case "resync":
            if let seq: UInt64 = json["seq"]?.wholeNumber(), let state = json["state"].flatMap(Scene.init(json:)) {
                return .resync(seq: seq, state: state)
            }
        case "pong":
            return .pong(id: json["id"]?.stringValue, serverTime: json["serverTime"]?.wholeNumber() ?? 0)
        case "pointers":
            return .pointers(PointersMessage(json: json))
        default:
            break
        }
        return .other(json)
    }
}

/// A decoded `welcome`.
public struct WelcomeMessage: Sendable {
    /// The room joined.
    public var room: String
    /// This client's id and display name.
    public var you: Participant
    /// This client's role as sent (`viewer`, `player` or `admin`); `player` when absent.
    public var role: String
    /// The room's history epoch; keep it with the last seq seen, to resume.
    public var epoch: String
    /// The room's current seq; replayed events (when `recovered`) end with this one.
    public var seq: UInt64
    /// The room's current scene.
    public var state: Scene
    /// The clients in the room, perhaps not all of them (see `presenceCount`).
    public var presence: [Participant]
    /// The number of clients in the room (the length of `presence` when absent).
    public var presenceCount: Int
    /// The server's clock in milliseconds since 1970, for the animation clock (section 8); 0 when absent.
    public var serverTime: Int64
    /// Whether the resume succeeded and the missed events follow; false when absent.
    public var recovered: Bool
    /// The others' visible pointers when this client joined (section 10).
    public var pointers: [PointerEntry]
    /// How the room's events arrive (section 12): one `event` each, or `tick`s.
    public var delivery: DeliveryMode
    /// The room's tick in milliseconds; 50 when absent.
    public var tickMs: Int

    init?(json: JSONValue) {
        guard let room = json["room"]?.stringValue, let you = json["you"].flatMap(Participant.init(json:)),
              let epoch = json["epoch"]?.stringValue, let seq: UInt64 = json["seq"]?.wholeNumber(),
              let state = json["state"].flatMap(Scene.init(json:)) else { return nil }
        self.room = room
        self.you = you
        role = json["you"]?["role"]?.stringValue ?? "player"
        self.epoch = epoch
        self.seq = seq
        self.state = state
        if case .array(let list)? = json["presence"] {
            presence = list.compactMap(Participant.init(json:))
        } else {
            presence = []
        }
        presenceCount = json["presenceCount"]?.wholeNumber() ?? presence.count
        serverTime = json["serverTime"]?.wholeNumber() ?? 0
        recovered = json["recovered"]?.boolValue ?? false
        pointers = PointerEntry.list(json["pointers"])
        delivery = json["delivery"]?.stringValue.flatMap(DeliveryMode.init(rawValue:)) ?? .each
        tickMs = json["tickMs"]?.wholeNumber() ?? 50
    }
}

/// A decoded `pointers` message: pointers that appeared or moved since the
/// previous one, and the ids of those hidden or gone.
public struct PointersMessage: Equatable, Sendable {
    /// The room's name (empty when absent).
    public var room: String
    /// The pointers that appeared or moved, each at its latest position.
    public var pointers: [PointerEntry]
    /// The ids of the clients whose pointer was hidden or who left.
    public var gone: [String]

    /// Creates a message from its parts.
    public init(room: String, pointers: [PointerEntry], gone: [String]) {
        self.room = room
        self.pointers = pointers
        self.gone = gone
    }

    /// Missing lists read as empty; entries that cannot be read are left out.
    init(json: JSONValue) {
        room = json["room"]?.stringValue ?? ""
        pointers = PointerEntry.list(json["pointers"])
        if case .array(let list)? = json["gone"] {
            gone = list.compactMap(\.stringValue)
        } else {
            gone = []
        }
    }
}

extension PointerEntry {
    /// Reads an entry as the server writes it: nil without an id, a name, a
    /// known view and numeric coordinates. Coordinates are kept within 0...1
    /// and an unknown activity reads as `idle`, so a newer server's additions
    /// still show.
    public init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let name = json["name"]?.stringValue,
              let view = json["view"]?.stringValue.flatMap(PointerView.init(rawValue:)),
              let x = json["x"]?.doubleValue, x.isFinite,
              let y = json["y"]?.doubleValue, y.isFinite else { return nil }
        let activity = json["activity"]?.stringValue.flatMap(PointerActivity.init(rawValue:)) ?? .idle
        self.init(id: id, name: name,
                  position: PointerPosition(view: view, x: min(1, max(0, x)), y: min(1, max(0, y)), activity: activity))
    }

    /// The readable entries of a JSON array (none when it is not one).
    static func list(_ json: JSONValue?) -> [PointerEntry] {
        guard case .array(let list)? = json else { return [] }
        return list.compactMap(PointerEntry.init(json:))
    }
}

/// A decoded `event`.
public struct EventMessage: Sendable {
    /// The event's seq.
    public var seq: UInt64
    /// The room's name (empty when absent).
    public var room: String
    /// When the event happened, in milliseconds since 1970 (0 when absent).
    public var time: Int64
    /// The delegate-style event name as sent (see `EventName`).
    public var name: String
    /// Who caused the event; an empty id and name for a voted event (`"sender": null`).
    public var sender: Participant
    /// The changed fields as sent: path, old value and new value (entries without a path are left out).
    public var changes: [(path: String, from: JSONValue, to: JSONValue)]
    /// The whole scene after the event.
    public var state: Scene
    /// A voted dragon event's votes (its sender is then empty: the crowd moved it).
    public var votes: (forward: Int, back: Int)?

    init?(json: JSONValue) {
        guard let seq: UInt64 = json["seq"]?.wholeNumber(), let name = json["name"]?.stringValue,
              let state = json["state"].flatMap(Scene.init(json:)) else { return nil }
        self.seq = seq
        room = json["room"]?.stringValue ?? ""
        time = json["time"]?.wholeNumber() ?? 0
        self.name = name
        sender = json["sender"].flatMap(Participant.init(json:)) ?? Participant(id: "", name: "")
        if case .array(let list)? = json["changes"] {
            changes = list.compactMap { change in
                guard let path = change["path"]?.stringValue else { return nil }
                return (path, change["from"] ?? .null, change["to"] ?? .null)
            }
        } else {
            changes = []
        }
        self.state = state
        if let votes = json["votes"], let forward: Int = votes["forward"]?.wholeNumber(),
           let back: Int = votes["back"]?.wholeNumber() {
            self.votes = (forward, back)
        }
    }
}

/// A decoded `tick`: the events from `from` to `seq` as counts, their most
/// recent senders, the net changes, the state after them, and the room's
/// joins and leaves meanwhile.
public struct TickMessage: Sendable {
    /// The room's name (empty when absent).
    public var room: String
    /// The seq of the first event covered.
    public var from: UInt64
    /// The seq of the last event covered; the next tick's `from` is this + 1.
    public var seq: UInt64
    /// When the tick was sent, in milliseconds since 1970 (0 when absent).
    public var time: Int64
    /// Events per delegate name, in the order the server listed them.
    public var names: [(name: String, count: Int)]
    /// At most 8 of the most recent distinct senders, newest first.
    public var senders: [Participant]
    /// How many senders the covered events had (the length of `senders` when absent).
    public var senderCount: Int
    /// The net change of each path over the tick, as sent (a path that ended where it started is left out).
    public var changes: [(path: String, from: JSONValue, to: JSONValue)]
    /// The scene after event `seq`.
    public var state: Scene
    /// The room's joins and leaves during the tick, or nil when the tick carries none.
    public var presence: PresenceBatch?
    /// The summed votes of the tick's voted dragon events, or nil when there were none.
    public var votes: (forward: Int, back: Int)?

    /// How many events the tick covers (none when `from` is `seq` + 1).
    public var eventCount: Int { seq >= from ? Int(seq - from + 1) : 0 }

    init?(json: JSONValue) {
        guard let from: UInt64 = json["from"]?.wholeNumber(), let seq: UInt64 = json["seq"]?.wholeNumber(),
              let state = json["state"].flatMap(Scene.init(json:)) else { return nil }
        room = json["room"]?.stringValue ?? ""
        self.from = from
        self.seq = seq
        time = json["time"]?.wholeNumber() ?? 0
        if case .object(let members)? = json["names"] {
            names = members.compactMap { member in member.value.wholeNumber().map { (member.key, $0) } }
        } else {
            names = []
        }
        if case .array(let list)? = json["senders"] {
            senders = list.compactMap(Participant.init(json:))
        } else {
            senders = []
        }
        senderCount = json["senderCount"]?.wholeNumber() ?? senders.count
        if case .array(let list)? = json["changes"] {
            changes = list.compactMap { change in
                guard let path = change["path"]?.stringValue else { return nil }
                return (path, change["from"] ?? .null, change["to"] ?? .null)
            }
        } else {
            changes = []
        }
        self.state = state
        presence = json["presence"].flatMap(PresenceBatch.init(json:))
        if let votes = json["votes"], let forward: Int = votes["forward"]?.wholeNumber(),
           let back: Int = votes["back"]?.wholeNumber() {
            self.votes = (forward, back)
        }
    }
}

extension PresenceBatch {
    /// A batch as the server writes it (a `count` and lists of joined and left); nil otherwise.
    public init?(json: JSONValue) {
        guard let count: Int = json["count"]?.wholeNumber() else { return nil }
        func list(_ key: String) -> [Participant] {
            guard case .array(let items)? = json[key] else { return [] }
            return items.compactMap(Participant.init(json:))
        }
        let joined = list("joined"), left = list("left")
        self.init(count: count, joined: joined, left: left,
                  joinedCount: json["joinedCount"]?.wholeNumber() ?? joined.count,
                  leftCount: json["leftCount"]?.wholeNumber() ?? left.count)
    }
}

extension Participant {
    /// Reads `{ "id", "name" }` as the server writes it; nil when either is missing or not a string.
    public init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let name = json["name"]?.stringValue else { return nil }
        self.init(id: id, name: name)
    }
}

extension Scene {
    /// Reads a scene object as the server writes it; nil when a field is missing.
    public init?(json: JSONValue) {
        guard let face = json["face"], let heart = json["heart"], let dragon = json["dragon"],
              let happiness: Int = face["happiness"]?.wholeNumber(), let scale = face["scale"]?.doubleValue,
              let rate = heart["rate"]?.doubleValue,
              let fill = heart["fillColor"]?.stringValue.flatMap(RGBColor.init(hex:)),
              let stroke = heart["strokeColor"]?.stringValue.flatMap(RGBColor.init(hex:)),
              let lineWidth = heart["lineWidth"]?.doubleValue,
              let x = dragon["x"]?.doubleValue, let y = dragon["y"]?.doubleValue,
              let hidden = dragon["hidden"]?.boolValue else { return nil }
        self.init(face: Face(happiness: happiness, scale: scale),
                  heart: Heart(rate: rate, fillColor: fill, strokeColor: stroke, lineWidth: lineWidth),
                  dragon: Dragon(x: x, y: y, hidden: hidden))
    }
}

extension JSONValue {
    /// A number's integer part when it fits in `T`; nil for other values,
    /// infinities and numbers out of range (converting those would trap).
    fileprivate func wholeNumber<T: BinaryInteger>() -> T? {
        guard let value = doubleValue, value.isFinite else { return nil }
        return T(exactly: value.rounded(.towardZero))
    }
}
