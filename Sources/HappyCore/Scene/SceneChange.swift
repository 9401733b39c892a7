/// A field of the scene, named as on the wire (`face.happiness`).
public enum ScenePath: String, Sendable, CaseIterable {
    case faceHappiness = "face.happiness"
    case faceSmile = "face.smile"
    case faceScale = "face.scale"
    case heartRate = "heart.rate"
    case heartFillColor = "heart.fillColor"
    case heartStrokeColor = "heart.strokeColor"
    case heartLineWidth = "heart.lineWidth"
    case dragonX = "dragon.x"
    case dragonY = "dragon.y"
    case dragonHidden = "dragon.hidden"
}

/// One scalar value of the scene.
public enum SceneValue: Equatable, Sendable {
    case integer(Int)
    case number(Double)
    case bool(Bool)
    case color(RGBColor)
}

/// One field's change, as carried in an event's `changes` list.
public struct SceneChange: Equatable, Sendable {
    public var path: ScenePath
    public var from: SceneValue
    public var to: SceneValue

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
