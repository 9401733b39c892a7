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

    /// Which action this is: its entry in the table (`ActionTable.swift`).
    public var kind: Kind {
        switch self {
        case .setHappiness: return .setHappiness
        case .nudgeHappiness: return .nudgeHappiness
        case .setScale: return .setScale
        case .pinch: return .pinch
        case .setRate: return .setRate
        case .setStyle: return .setStyle
        case .dragonForward: return .dragonForward
        case .dragonBack: return .dragonBack
        case .setHidden: return .setHidden
        case .toggleHidden: return .toggleHidden
        case .reset: return .reset
        }
    }

    /// The action's name on the wire.
    public var wireName: String { kind.spec.wireName }

    /// Every action name the protocol knows, in the table's order, for metrics and help texts.
    public static let wireNames = Kind.allCases.map { $0.spec.wireName }

    /// Whether the action needs the admin role (when access control is on).
    public var requiresAdmin: Bool { kind.spec.requiresAdmin }

    /// The values of the action's parameters, in the order of its spec's (nil: an optional one left out).
    var parameterValues: [ParameterValue?] {
        switch self {
        case .setHappiness(let value), .setScale(let value), .setRate(let value): return [.number(value)]
        case .nudgeHappiness(let delta): return [.number(Double(delta))]
        case .pinch(let factor): return [.number(factor)]
        case .setStyle(let style):
            return [style.fillColor.map(ParameterValue.color), style.strokeColor.map(ParameterValue.color),
                    style.lineWidth.map(ParameterValue.number)]
        case .setHidden(let hidden): return [.boolean(hidden)]
        case .dragonForward, .dragonBack, .toggleHidden, .reset: return []
        }
    }

    /// The action of `kind` with `values` the decoder read and checked against its spec,
    /// in the order of its parameters.
    init(kind: Kind, checked values: [ParameterValue?]) {
        switch kind {
        case .setHappiness: self = .setHappiness(values.number(0))
        case .nudgeHappiness: self = .nudgeHappiness(Int(values.number(0)))
        case .setScale: self = .setScale(values.number(0))
        case .pinch: self = .pinch(values.number(0))
        case .setRate: self = .setRate(values.number(0))
        case .setStyle:
            self = .setStyle(HeartStyle(fillColor: values[0]?.color, strokeColor: values[1]?.color,
                                        lineWidth: values[2]?.number))
        case .dragonForward: self = .dragonForward
        case .dragonBack: self = .dragonBack
        case .setHidden: self = .setHidden(values.boolean(0))
        case .toggleHidden: self = .toggleHidden
        case .reset: self = .reset
        }
    }
}

/// A parameter's value, read and checked as its `ParameterSpec` says.
enum ParameterValue: Equatable, Sendable {
    /// An integer or a number.
    case number(Double)
    /// A boolean.
    case boolean(Bool)
    /// A colour.
    case color(RGBColor)

    var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    var boolean: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    var color: RGBColor? {
        if case .color(let value) = self { return value }
        return nil
    }
}

extension [ParameterValue?] {
    /// The number at `index`, which the decoder checked is there.
    fileprivate func number(_ index: Int) -> Double {
        guard let value = self[index]?.number else { preconditionFailure("parameter \(index) is not a number") }
        return value
    }

    /// The boolean at `index`, which the decoder checked is there.
    fileprivate func boolean(_ index: Int) -> Bool {
        guard let value = self[index]?.boolean else { preconditionFailure("parameter \(index) is not a boolean") }
        return value
    }
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
