/// How an intent ended, as reported in its ack.
public enum AckResult: String, Sendable, CaseIterable {
    /// `applied`; `clamped` when a value was brought into range; `unchanged` when the
    /// scene did not change; `blocked` for a dragon button at the edge.
    case applied, clamped, unchanged, blocked
    /// A dragon vote, counted into its tick's majority (section 12).
    case counted
}

/// The result of applying one action: the event to broadcast (if any), the
/// field changes it carries, and the ack result.
public struct Outcome: Equatable, Sendable {
    /// The event to broadcast, or nil when there is none (the action changed nothing).
    public var eventName: EventName?
    /// The fields the action changed, in `ScenePath` order.
    public var changes: [SceneChange]
    /// The ack result.
    public var result: AckResult

    /// Creates an outcome from its parts.
    public init(eventName: EventName?, changes: [SceneChange], result: AckResult) {
        self.eventName = eventName
        self.changes = changes
        self.result = result
    }
}

/// The rules of the three seeds, as a pure function of (scene, action).
/// Every store and every node runs this same code, so the rules live here only.
public struct SceneReducer: Sendable {
    /// The defaults, geometry and scale range the reducer applies.
    public let rules: SceneRules

    /// Creates a reducer that applies `rules`.
    public init(rules: SceneRules) {
        self.rules = rules
    }

    /// Applies `action` to `scene` in place, following the table of section 4.
    ///
    /// - Returns: the event to broadcast (nil when nothing changed, but always one for a
    ///   dragon button), the changes, and the ack result: `unchanged` when the scene did
    ///   not change, else `clamped` when a value was brought into range, else `applied`;
    ///   `blocked` for a dragon button that could not move.
    public func apply(_ action: Action, to scene: inout Scene) -> Outcome {
        // The decoder refuses these; an Action built in code is checked here too.
        switch action {
        case .setHappiness(let value), .setScale(let value), .pinch(let value), .setRate(let value):
            guard value.isFinite else { return Outcome(eventName: nil, changes: [], result: .unchanged) }
        default:
            break
        }
        let before = scene
        var clamped = false

        switch action {
        case .setHappiness(let value):
            let target = clamp(value, to: Double(SceneRules.happinessRange.lowerBound)...Double(SceneRules.happinessRange.upperBound), clamped: &clamped)
            scene.face.happiness = Int(target)
        case .nudgeHappiness(let delta):
            // Past ±1000 every delta clamps alike; bounding it first keeps the sum from overflowing.
            let target = clamp(scene.face.happiness + min(1000, max(-1000, delta)), to: SceneRules.happinessRange,
                               clamped: &clamped)
            scene.face.happiness = target
        case .setScale(let value):
            scene.face.scale = clamp(value, to: rules.scaleMin...rules.scaleMax, clamped: &clamped)
        case .pinch(let factor):
            scene.face.scale = clamp(scene.face.scale * factor, to: rules.scaleMin...rules.scaleMax, clamped: &clamped)
        case .setRate(let value):
            scene.heart.rate = clamp(value, to: 0...1, clamped: &clamped)
        case .setStyle(let style):
            if let fill = style.fillColor { scene.heart.fillColor = fill }
            if let stroke = style.strokeColor { scene.heart.strokeColor = stroke }
            if let width = style.lineWidth { scene.heart.lineWidth = width == 0 ? 1 : width }
        case .dragonForward, .dragonBack:
            // The seed's delegate is told of every press, moved or not.
            let geometry = rules.geometry
            let forward = action == .dragonForward
            let target = scene.dragon.x + (forward ? geometry.step : -geometry.step)
            let allowed = forward ? target < geometry.width - geometry.dragonSize : target > 0
            if allowed { scene.dragon.x = target }
            let changes = before.changes(to: scene)
            return Outcome(eventName: action.kind.spec.event, changes: changes, result: allowed ? .applied : .blocked)
        case .setHidden(let hidden):
            scene.dragon.hidden = hidden
        case .toggleHidden:
            scene.dragon.hidden.toggle()
        case .reset:
            scene = rules.defaults
        }

        let changes = before.changes(to: scene)
        if changes.isEmpty {
            return Outcome(eventName: nil, changes: [], result: .unchanged)
        }
        return Outcome(eventName: action.kind.spec.event, changes: changes, result: clamped ? .clamped : .applied)
    }

    private func clamp<T: Comparable>(_ value: T, to range: ClosedRange<T>, clamped: inout Bool) -> T {
        if value < range.lowerBound { clamped = true; return range.lowerBound }
        if value > range.upperBound { clamped = true; return range.upperBound }
        return value
    }
}
