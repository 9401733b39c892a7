
/// The text of the dragon panel's status label: what the seed's view
/// controller writes when its delegate methods are called.
///
/// `forward, (x,y) = (20, 10)` and `back, (x,y) = (10, 10)` for the buttons
/// (also when the dragon was at the edge and did not move), `hide` / `show`
/// for the hide button, and the initial text (the art's `initialStatus`,
/// the seed's `dragon's status`) before any dragon event and after a reset.
public struct DragonStatus: Sendable {
    /// The seed's text before any event.
    public static let seedInitial = "dragon's status"

    /// The text before any dragon event and after a reset.
    public let initial: String

    /// Creates a status whose initial text is `initial` (the seed's by default).
    public init(initial: String = DragonStatus.seedInitial) {
        self.initial = initial
    }

    /// The label after an event named `name` that left the dragon at `dragon`,
    /// or nil when it leaves the label as it was.
    public func after(_ name: EventName, dragon: Scene.Dragon) -> String? {
        let spec = name.spec
        switch spec.dragonLabel {
        case .position?: return "\(spec.word), (x,y) = (\(Self.number(dragon.x)), \(Self.number(dragon.y)))"
        case .visibility?: return dragon.hidden ? "hide" : "show"
        case .initial?: return initial
        case nil: return nil
        }
    }

    /// The label a room shows after its recorded history: the newest dragon
    /// event (or reset) decides. `events` are stored event messages (JSON),
    /// oldest first; only as many as needed are parsed, newest first.
    public func recover<Events: BidirectionalCollection>(from events: Events) -> String
    where Events.Element == [UInt8] {
        for json in events.reversed() {
            guard let event = try? JSONParser.parse(json, maxDepth: 64),
                  let nameText = event["name"]?.stringValue, let name = EventName(rawValue: nameText),
                  let dragon = event["state"]?["dragon"],
                  let x = dragon["x"]?.doubleValue, let y = dragon["y"]?.doubleValue,
                  let hidden = dragon["hidden"]?.boolValue else { continue }
            if let status = after(name, dragon: Scene.Dragon(x: x, y: y, hidden: hidden)) { return status }
        }
        return initial
    }

    /// Whether a stored event message (JSON) is a reset.
    public static func isReset(_ json: [UInt8]) -> Bool {
        (try? JSONParser.parse(json, maxDepth: 64))?["name"]?.stringValue == EventName.didReset.rawValue
    }

    /// `20` for 20.0, `12.5` for 12.5.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}
