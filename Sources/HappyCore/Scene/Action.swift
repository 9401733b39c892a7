/// What a client asks the room to do (PROTOCOL.md section 4), already validated.
public enum Action: Equatable, Sendable {
    /// An integral happiness, possibly far out of range (it is clamped).
    case setHappiness(Double)
    /// The pan gesture: happiness += delta (−100...100), clamped to 0...100.
    case nudgeHappiness(Int)
    /// A new face scale (> 0), clamped to [`scaleMin`, `scaleMax`].
    case setScale(Double)
    /// The pinch gesture: scale × factor (factor > 0), clamped to [`scaleMin`, `scaleMax`].
    case pinch(Double)
    /// A new heart fill level, clamped to 0...1.
    case setRate(Double)
    /// New heart colours and/or line width.
    case setStyle(HeartStyle)
    /// The forward button: x += step, unless the dragon would reach the right edge.
    case dragonForward
    /// The back button: x −= step, unless the dragon would reach the left edge.
    case dragonBack
    /// Hides (true) or shows (false) the dragon.
    case setHidden(Bool)
    /// The hide button: flips `dragon.hidden`.
    case toggleHidden
    /// Back to the configured defaults (admin only when auth is on).
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
    /// The new fill colour, or nil to keep the current one.
    public var fillColor: RGBColor?
    /// The new stroke colour, or nil to keep the current one.
    public var strokeColor: RGBColor?
    /// The new line width, 0...20 (0 is stored as 1), or nil to keep the current one.
    public var lineWidth: Double?

    /// Creates a style change; a nil field keeps the current value.
    public init(fillColor: RGBColor? = nil, strokeColor: RGBColor? = nil, lineWidth: Double? = nil) {
        self.fillColor = fillColor
        self.strokeColor = strokeColor
        self.lineWidth = lineWidth
    }
}

/// An intent: an action plus the client's optional correlation id.
public struct Intent: Equatable, Sendable {
    /// The client's correlation id (at most 64 characters), echoed in the ack or error; nil when none.
    public var id: String?
    /// The validated action.
    public var action: Action

    /// Creates an intent from an action and an optional id.
    public init(id: String? = nil, action: Action) {
        self.id = id
        self.action = action
    }
}
