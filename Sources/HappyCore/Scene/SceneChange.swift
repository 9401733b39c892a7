/// A field of the scene, named as on the wire (`face.happiness`).
public enum ScenePath: String, Sendable, CaseIterable {
    /// `face.happiness`, an integer 0...100.
    case faceHappiness = "face.happiness"
    /// `face.smile`, derived from happiness: −1...1.
    case faceSmile = "face.smile"
    /// `face.scale`.
    case faceScale = "face.scale"
    /// `heart.rate`, 0...1.
    case heartRate = "heart.rate"
    /// `heart.fillColor`.
    case heartFillColor = "heart.fillColor"
    /// `heart.strokeColor`.
    case heartStrokeColor = "heart.strokeColor"
    /// `heart.lineWidth`.
    case heartLineWidth = "heart.lineWidth"
    /// `dragon.x`.
    case dragonX = "dragon.x"
    /// `dragon.y`.
    case dragonY = "dragon.y"
    /// `dragon.hidden`.
    case dragonHidden = "dragon.hidden"
}

/// One scalar value of the scene.
public enum SceneValue: Equatable, Sendable {
    /// An integer (`face.happiness`).
    case integer(Int)
    /// A number (smile, scale, rate, line width, dragon position).
    case number(Double)
    /// A boolean (`dragon.hidden`).
    case bool(Bool)
    /// A colour, written as `#rrggbb`.
    case color(RGBColor)
}

/// One field's change, as carried in an event's `changes` list.
public struct SceneChange: Equatable, Sendable {
    /// The field that changed.
    public var path: ScenePath
    /// Its value before the change.
    public var from: SceneValue
    /// Its value after the change.
    public var to: SceneValue

    /// Creates the change of `path` from one value to another.
    public init(path: ScenePath, from: SceneValue, to: SceneValue) {
        self.path = path
        self.from = from
        self.to = to
    }
}

extension Scene {
    /// The current value at `path`.
    public func value(at path: ScenePath) -> SceneValue {
        switch path {
        case .faceHappiness: return .integer(face.happiness)
        case .faceSmile: return .number(face.smile)
        case .faceScale: return .number(face.scale)
        case .heartRate: return .number(heart.rate)
        case .heartFillColor: return .color(heart.fillColor)
        case .heartStrokeColor: return .color(heart.strokeColor)
        case .heartLineWidth: return .number(heart.lineWidth)
        case .dragonX: return .number(dragon.x)
        case .dragonY: return .number(dragon.y)
        case .dragonHidden: return .bool(dragon.hidden)
        }
    }

    /// The changes that turn `self` into `other`, in `ScenePath` order.
    public func changes(to other: Scene) -> [SceneChange] {
        ScenePath.allCases.compactMap { path in
            let before = value(at: path), after = other.value(at: path)
            return before == after ? nil : SceneChange(path: path, from: before, to: after)
        }
    }
}
