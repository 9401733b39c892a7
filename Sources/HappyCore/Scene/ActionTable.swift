// The table of actions (PROTOCOL.md section 4) and of the events they cause (section 3): the
// one place an action's wire name, parameters, event, role and description are written. The
// decoder, `IntentEncoder`, the reducer's event names, happyclient and the page
// (web/js/protocol.js, written from here by `make protocol-js`) all read it.

extension Action {
    /// Which action, without its parameters: the key of the table.
    public enum Kind: Int, Sendable, CaseIterable {
        /// `face.setHappiness`.
        case setHappiness
        /// `face.nudgeHappiness`.
        case nudgeHappiness
        /// `face.setScale`.
        case setScale
        /// `face.pinch`.
        case pinch
        /// `heart.setRate`.
        case setRate
        /// `heart.setStyle`.
        case setStyle
        /// `dragon.forward`.
        case dragonForward
        /// `dragon.back`.
        case dragonBack
        /// `dragon.setHidden`.
        case setHidden
        /// `dragon.toggleHidden`.
        case toggleHidden
        /// `room.reset`.
        case reset

        /// The action's entry in the table.
        public var spec: ActionSpec { ActionTable.specs[rawValue] }

        /// The action named `wireName` on the wire, or nil when the protocol has none.
        public init?(wireName: String) {
            guard let kind = ActionTable.kindsByWireName[wireName] else { return nil }
            self = kind
        }
    }
}

/// One action of the protocol: its name, its parameters and what it causes.
public struct ActionSpec: Sendable {
    /// The action this entry describes.
    public let kind: Action.Kind
    /// The action's name on the wire (`face.setHappiness`).
    public let wireName: String
    /// Its parameters, top-level fields of the intent, in the order the encoder writes them.
    public let parameters: [ParameterSpec]
    /// Whether at least one of the (optional) parameters must be given.
    public let needsOneParameter: Bool
    /// The event it causes when it changes the scene (a dragon button's, always).
    public let event: EventName
    /// Whether it needs the admin role when the server requires tokens.
    public let requiresAdmin: Bool
    /// What it does, in one line, for help texts and the page.
    public let summary: String

    init(_ kind: Action.Kind, _ wireName: String, event: EventName, parameters: [ParameterSpec] = [],
         needsOneParameter: Bool = false, requiresAdmin: Bool = false, summary: String) {
        self.kind = kind
        self.wireName = wireName
        self.parameters = parameters
        self.needsOneParameter = needsOneParameter
        self.event = event
        self.requiresAdmin = requiresAdmin
        self.summary = summary
    }
}

/// One parameter of an action: a top-level field of the intent, checked by the decoder.
public struct ParameterSpec: Equatable, Sendable {
    /// The field's name on the wire (`value`, `delta`).
    public let name: String
    /// The kind of JSON value it must be.
    public let type: ParameterType
    /// Whether the intent must carry it.
    public let isRequired: Bool
    /// The range the value must be in (refused outside it, not clamped); nil when any will do.
    public let range: ClosedRange<Double>?
    /// What the decoder's error messages call the value (`happiness must be an integer`).
    public let noun: String

    init(_ name: String, _ type: ParameterType, required: Bool = true, range: ClosedRange<Double>? = nil,
         noun: String? = nil) {
        self.name = name
        self.type = type
        self.isRequired = required
        self.range = range
        self.noun = noun ?? name
    }
}

/// The kinds of value a parameter may take.
public enum ParameterType: String, Sendable, CaseIterable {
    /// A JSON number without a fractional part (`80`, `8e1`).
    case integer
    /// A finite JSON number.
    case number
    /// A finite JSON number greater than 0.
    case positiveNumber
    /// `true` or `false`.
    case boolean
    /// A string `#rgb` or `#rrggbb`.
    case color

    /// `an integer`, `a number`: what a missing parameter should have been.
    public var article: String {
        switch self {
        case .integer: return "an integer"
        case .number, .positiveNumber: return "a number"
        case .boolean: return "a boolean"
        case .color: return "a colour"
        }
    }
}

/// The table itself, built once.
enum ActionTable {
    static let specs: [ActionSpec] = Action.Kind.allCases.map(entry)

    static let kindsByWireName: [String: Action.Kind] = Dictionary(
        uniqueKeysWithValues: Action.Kind.allCases.map { (specs[$0.rawValue].wireName, $0) })

    private static func entry(_ kind: Action.Kind) -> ActionSpec {
        switch kind {
        case .setHappiness:
            return ActionSpec(kind, "face.setHappiness", event: .didChangeHappiness,
                              parameters: [ParameterSpec("value", .integer, noun: "happiness")],
                              summary: "set the face's happiness, clamped to 0 to 100")
        case .nudgeHappiness:
            let range = Double(SceneRules.nudgeRange.lowerBound)...Double(SceneRules.nudgeRange.upperBound)
            return ActionSpec(kind, "face.nudgeHappiness", event: .didChangeHappiness,
                              parameters: [ParameterSpec("delta", .integer, range: range)],
                              summary: "the pan gesture: add delta to the face's happiness, clamped")
        case .setScale:
            return ActionSpec(kind, "face.setScale", event: .didChangeScale,
                              parameters: [ParameterSpec("value", .positiveNumber, noun: "scale")],
                              summary: "set the face's scale, clamped to the server's range")
        case .pinch:
            return ActionSpec(kind, "face.pinch", event: .didChangeScale,
                              parameters: [ParameterSpec("factor", .positiveNumber)],
                              summary: "the pinch gesture: multiply the face's scale by factor, clamped")
        case .setRate:
            return ActionSpec(kind, "heart.setRate", event: .didChangeRate,
                              parameters: [ParameterSpec("value", .number, noun: "rate")],
                              summary: "set the heart's fill level, clamped to 0 to 1")
        case .setStyle:
            return ActionSpec(kind, "heart.setStyle", event: .didChangeStyle,
                              parameters: [ParameterSpec("fillColor", .color, required: false),
                                           ParameterSpec("strokeColor", .color, required: false),
                                           ParameterSpec("lineWidth", .number, required: false,
                                                         range: SceneRules.lineWidthRange)],
                              needsOneParameter: true,
                              summary: "set the heart's fill and outline colours and its outline width (0 means 1)")
        case .dragonForward:
            return ActionSpec(kind, "dragon.forward", event: .forwardButtonClicked,
                              summary: "the forward button: the dragon one step right, unless at the edge")
        case .dragonBack:
            return ActionSpec(kind, "dragon.back", event: .backButtonClicked,
                              summary: "the back button: the dragon one step left, unless at the edge")
        case .setHidden:
            return ActionSpec(kind, "dragon.setHidden", event: .didChangeHidden,
                              parameters: [ParameterSpec("value", .boolean, noun: "hidden")],
                              summary: "hide the dragon (true) or show it (false)")
        case .toggleHidden:
            return ActionSpec(kind, "dragon.toggleHidden", event: .didChangeHidden,
                              summary: "the hide button: hide the dragon, or show it again")
        case .reset:
            return ActionSpec(kind, "room.reset", event: .didReset, requiresAdmin: true,
                              summary: "the room back to the server's defaults (admin only when auth is on)")
        }
    }
}

// MARK: events

/// The delegate-style names events carry, as the seeds' delegates would see them.
public enum EventName: String, Sendable, CaseIterable {
    /// The face's happiness changed.
    case didChangeHappiness = "faceView:didChangeHappiness:"
    /// The face's scale changed.
    case didChangeScale = "faceView:didChangeScale:"
    /// The heart's fill level changed.
    case didChangeRate = "heartView:didChangeRate:"
    /// The heart's colours or outline width changed.
    case didChangeStyle = "heartView:didChangeStyle:"
    /// The forward button, also when the dragon did not move.
    case forwardButtonClicked = "forwardButtonClicked:"
    /// The back button, also when the dragon did not move.
    case backButtonClicked = "backButtonClicked:"
    /// The dragon was hidden or shown.
    case didChangeHidden = "dragonView:didChangeHidden:"
    /// The room went back to its defaults.
    case didReset = "room:didReset:"

    /// How clients tell of the event.
    public var spec: EventSpec {
        switch self {
        case .didChangeHappiness: return EventSpec(word: "happiness", summary: .value(.faceHappiness))
        case .didChangeScale: return EventSpec(word: "scale", summary: .value(.faceScale))
        case .didChangeRate: return EventSpec(word: "rate", summary: .value(.heartRate))
        case .didChangeStyle: return EventSpec(word: "style", summary: .heartStyle)
        case .forwardButtonClicked: return EventSpec(word: "forward", summary: .dragonPosition, dragonLabel: .position)
        case .backButtonClicked: return EventSpec(word: "back", summary: .dragonPosition, dragonLabel: .position)
        case .didChangeHidden: return EventSpec(word: "hide/show", summary: .dragonVisibility, dragonLabel: .visibility)
        case .didReset: return EventSpec(word: "reset", summary: .roomReset, dragonLabel: .initial)
        }
    }
}

/// How clients tell of an event: happyclient's lines and the page's log, the dragon's label.
public struct EventSpec: Equatable, Sendable {
    /// The word a tick's counts use (`41 forward, 3 happiness`), and a position label's.
    public let word: String
    /// What an event line says it changed.
    public let summary: EventSummary
    /// What the dragon's status label says after it; nil when it leaves the label alone.
    public let dragonLabel: DragonLabel?

    init(word: String, summary: EventSummary, dragonLabel: DragonLabel? = nil) {
        self.word = word
        self.summary = summary
        self.dragonLabel = dragonLabel
    }
}

/// What an event line says an event changed.
public enum EventSummary: Equatable, Sendable {
    /// Each changed value but the smile, in words: `happiness 50 → 80`; an intent's answer
    /// names the value at this path (`happiness 80`).
    case value(ScenePath)
    /// The heart named once: `heart fill #ff0000 → #00ff00, width 1 → 3`.
    case heartStyle
    /// `dragon (10, 10) → (20, 10)`, or `dragon (10, 10), blocked at the edge`.
    case dragonPosition
    /// `dragon hidden` or `dragon shown`.
    case dragonVisibility
    /// `room reset: happiness 50, …`, the whole scene.
    case roomReset

    /// The summary's name in web/js/protocol.js.
    public var name: String {
        switch self {
        case .value: return "value"
        case .heartStyle: return "heartStyle"
        case .dragonPosition: return "dragonPosition"
        case .dragonVisibility: return "dragonVisibility"
        case .roomReset: return "roomReset"
        }
    }
}

/// What the dragon's status label says after an event (`DragonStatus`).
public enum DragonLabel: String, Sendable, CaseIterable {
    /// The event's word and where the dragon is: `forward, (x,y) = (20, 10)`.
    case position
    /// `hide` or `show`.
    case visibility
    /// The label's initial text.
    case initial
}

extension ScenePath {
    /// The word event lines use for the value (`heart rate`, `fill`); nil for those named by their path.
    public var word: String? {
        switch self {
        case .faceHappiness: return "happiness"
        case .faceScale: return "scale"
        case .heartRate: return "heart rate"
        case .heartFillColor: return "fill"
        case .heartStrokeColor: return "stroke"
        case .heartLineWidth: return "width"
        case .faceSmile, .dragonX, .dragonY, .dragonHidden: return nil
        }
    }
}
