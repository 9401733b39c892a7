/// The shared scene of one room: the three seed views' state.
public struct Scene: Equatable, Sendable {
    /// The face of the Happiness lesson: `happiness` 0...100 drives the smile.
    public struct Face: Equatable, Sendable {
        /// 0 (sad) ... 100 (very happy).
        public var happiness: Int
        /// The face radius as a multiple of half the view's short side, within [`scaleMin`, `scaleMax`].
        public var scale: Double

        /// Creates a face; the values are not checked here.
        public init(happiness: Int, scale: Double) {
            self.happiness = happiness
            self.scale = scale
        }

        /// The `smileForFaceView:` data source: −1 (sad) ... 1 (very happy).
        public var smile: Double { Double(happiness - 50) / 50 }
    }

    /// The wave-filled heart: `rate` 0...1 is the fill level.
    public struct Heart: Equatable, Sendable {
        /// The wave's fill level: 0 empty ... 1 full.
        public var rate: Double
        /// The fill colour.
        public var fillColor: RGBColor
        /// The outline colour.
        public var strokeColor: RGBColor
        /// The outline's width, 0...20 (a requested 0 is stored as 1).
        public var lineWidth: Double

        /// Creates a heart; the values are not checked here.
        public init(rate: Double, fillColor: RGBColor, strokeColor: RGBColor, lineWidth: Double) {
            self.rate = rate
            self.fillColor = fillColor
            self.strokeColor = strokeColor
            self.lineWidth = lineWidth
        }
    }

    /// The dragon of the delegate lesson: top-left corner of its 100×100 image.
    public struct Dragon: Equatable, Sendable {
        /// The dragon's left edge, in scene units (the scene is `SceneGeometry.width` wide).
        public var x: Double
        /// The dragon's top edge, in scene units.
        public var y: Double
        /// Whether the dragon is hidden (the hide button).
        public var hidden: Bool

        /// Creates a dragon at (`x`, `y`).
        public init(x: Double, y: Double, hidden: Bool) {
            self.x = x
            self.y = y
            self.hidden = hidden
        }
    }

    /// The face view's state.
    public var face: Face
    /// The heart view's state.
    public var heart: Heart
    /// The dragon view's state.
    public var dragon: Dragon

    /// Creates a scene from the three views' state.
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
    /// The scene's width (`scene.width`, default 375).
    public var width: Double
    /// The scene's height (`scene.height`, default 180).
    public var height: Double
    /// The side of the square dragon image (`scene.dragonSize`, default 100).
    public var dragonSize: Double
    /// How far one dragon button press moves it (`scene.step`, default 10).
    public var step: Double

    /// Creates a geometry; the defaults are the protocol's.
    public init(width: Double = 375, height: Double = 180, dragonSize: Double = 100, step: Double = 10) {
        self.width = width
        self.height = height
        self.dragonSize = dragonSize
        self.step = step
    }
}

/// Everything the reducer needs besides the scene: defaults, geometry and ranges.
public struct SceneRules: Equatable, Sendable {
    /// The scene a new room starts with and `room.reset` returns to.
    public var defaults: Scene
    /// The dragon scene's geometry.
    public var geometry: SceneGeometry
    /// The smallest face scale (`scene.scaleMin`, default 0.1).
    public var scaleMin: Double
    /// The largest face scale (`scene.scaleMax`, default 2.0).
    public var scaleMax: Double

    /// Creates rules; `scaleMin` must not exceed `scaleMax` (the reducer traps otherwise).
    public init(defaults: Scene = .standard, geometry: SceneGeometry = SceneGeometry(),
                scaleMin: Double = 0.1, scaleMax: Double = 2.0) {
        self.defaults = defaults
        self.geometry = geometry
        self.scaleMin = scaleMin
        self.scaleMax = scaleMax
    }

    /// The range `face.happiness` is clamped to.
    public static let happinessRange = 0...100
    /// The range a `heart.setStyle` `lineWidth` must be in (checked, not clamped).
    public static let lineWidthRange = 0.0...20.0
    /// The range a `face.nudgeHappiness` `delta` must be in (checked, not clamped).
    public static let nudgeRange = -100...100
}
