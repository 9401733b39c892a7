/// The shared scene of one room: the three seed views' state.
public struct Scene: Equatable, Sendable {
    /// The face of the Happiness lesson: `happiness` 0...100 drives the smile.
    public struct Face: Equatable, Sendable {
        public var happiness: Int
        public var scale: Double

        public init(happiness: Int, scale: Double) {
            self.happiness = happiness
            self.scale = scale
        }

        /// The `smileForFaceView:` data source: −1 (sad) ... 1 (very happy).
        public var smile: Double { Double(happiness - 50) / 50 }
    }

    /// The wave-filled heart: `rate` 0...1 is the fill level.
    public struct Heart: Equatable, Sendable {
        public var rate: Double
        public var fillColor: RGBColor
        public var strokeColor: RGBColor
        public var lineWidth: Double

        public init(rate: Double, fillColor: RGBColor, strokeColor: RGBColor, lineWidth: Double) {
            self.rate = rate
            self.fillColor = fillColor
            self.strokeColor = strokeColor
            self.lineWidth = lineWidth
        }
    }

    /// The dragon of the delegate lesson: top-left corner of its 100×100 image.
    public struct Dragon: Equatable, Sendable {
        public var x: Double
        public var y: Double
        public var hidden: Bool

        public init(x: Double, y: Double, hidden: Bool) {
            self.x = x
            self.y = y
            self.hidden = hidden
        }
    }

    public var face: Face
    public var heart: Heart
    public var dragon: Dragon

    public init(face: Face, heart: Heart, dragon: Dragon) {
        self.face = face
        self.heart = heart
        self.dragon = dragon
    }

    /// The protocol's default scene (PROTOCOL.md section 1).
    public static let standard = Scene(
        face: Face(happiness: 50, scale: 0.9),
        heart: Heart(rate: 0.5, fillColor: RGBColor(red: 255, green: 0, blue: 0),
                     strokeColor: RGBColor(red: 0, green: 0, blue: 0), lineWidth: 1),
        dragon: Dragon(x: 10, y: 10, hidden: false))
}

/// The fixed geometry of the dragon scene, shared with every client in `welcome`.
public struct SceneGeometry: Equatable, Sendable {
    public var width: Double
    public var height: Double
    public var dragonSize: Double
    public var step: Double

    public init(width: Double = 375, height: Double = 180, dragonSize: Double = 100, step: Double = 10) {
        self.width = width
        self.height = height
        self.dragonSize = dragonSize
        self.step = step
    }
}

/// Everything the reducer needs besides the scene: defaults, geometry and ranges.
public struct SceneRules: Equatable, Sendable {
    public var defaults: Scene
    public var geometry: SceneGeometry
    public var scaleMin: Double
    public var scaleMax: Double

    public init(defaults: Scene = .standard, geometry: SceneGeometry = SceneGeometry(),
                scaleMin: Double = 0.1, scaleMax: Double = 2.0) {
        self.defaults = defaults
        self.geometry = geometry
        self.scaleMin = scaleMin
        self.scaleMax = scaleMax
    }

    public static let happinessRange = 0...100
    public static let lineWidthRange = 0.0...20.0
    public static let nudgeRange = -100...100
}
