/// What a client asks the room to do (PROTOCOL.md section 4), already validated.
public enum Action: Equatable, Sendable {
    /// An integral happiness, possibly far out of range (it is clamped).
    case setHappiness(Double)
    case nudgeHappiness(Int)
    case setScale(Double)
    case pinch(Double)
    case setRate(Double)
    case setStyle(HeartStyle)
    case dragonForward
    case dragonBack
    case setHidden(Bool)
    case toggleHidden
    case reset

    /// The action's name on the wire.
    public var wireName: String {
        switch self {
        case .setHappiness: return "face.setHappiness"
        case .nudgeHappiness: return "face.nudgeHappiness"
        case .setScale: return "face.setScale"
        case .pinch: return "face.pinch"
        case .setRate: return "heart.setRate"
        case .setStyle: return "heart.setStyle"
        case .dragonForward: return "dragon.forward"
        case .dragonBack: return "dragon.back"
        case .setHidden: return "dragon.setHidden"
        case .toggleHidden: return "dragon.toggleHidden"
        case .reset: return "room.reset"
        }
    }

    /// Every action name the protocol knows, for metrics and help texts.
    public static let wireNames = [
        "face.setHappiness", "face.nudgeHappiness", "face.setScale", "face.pinch",
        "heart.setRate", "heart.setStyle", "dragon.forward", "dragon.back",
        "dragon.setHidden", "dragon.toggleHidden", "room.reset",
    ]

    /// Only `room.reset` needs the admin role (when access control is on).
    public var requiresAdmin: Bool { self == .reset }
}

/// The optional fields of `heart.setStyle`; at least one is present.
public struct HeartStyle: Equatable, Sendable {
    public var fillColor: RGBColor?
    public var strokeColor: RGBColor?
    public var lineWidth: Double?

    public init(fillColor: RGBColor? = nil, strokeColor: RGBColor? = nil, lineWidth: Double? = nil) {
        self.fillColor = fillColor
        self.strokeColor = strokeColor
        self.lineWidth = lineWidth
    }
}

/// An intent: an action plus the client's optional correlation id.
public struct Intent: Equatable, Sendable {
    public var id: String?
    public var action: Action

    public init(id: String? = nil, action: Action) {
        self.id = id
        self.action = action
    }
}
