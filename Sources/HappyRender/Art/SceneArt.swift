import HappyCore

/// The authored art shared by the server's renderer and the web page:
/// the dragon drawn as vector shapes in its box, the dragon panel (buttons,
/// status label) and the layout of the composite `scene` view. Read from
/// `web/assets/scene-art.json`, whose `"about"` field documents the format.
public struct SceneArt: Sendable {
    /// Side of the square box the dragon's shapes are authored in (100).
    public var dragonBox: Double
    public var dragon: [ArtShape]
    public var panel: Panel
    public var composite: Composite

    public init(dragonBox: Double, dragon: [ArtShape], panel: Panel, composite: Composite) {
        self.dragonBox = dragonBox
        self.dragon = dragon
        self.panel = panel
        self.composite = composite
    }

    /// The dragon panel of the delegate lesson: the cyan scene (as wide and
    /// high as the configured scene), a row for the hide button, and the
    /// purple status label.
    public struct Panel: Sendable {
        public var sceneColor: RGBColor
        public var rowHeight: Double
        public var rowColor: RGBColor
        public var labelHeight: Double
        public var labelColor: RGBColor
        public var textColor: RGBColor
        public var fontSize: Double
        public var initialStatus: String
        public var buttons: [Button]

        /// The status label's texts, starting from `initialStatus`.
        public var status: DragonStatus { DragonStatus(initial: initialStatus) }
    }

    /// A button of the panel: a rounded square with an icon.
    public struct Button: Sendable {
        public enum Area: String, Sendable { case scene, row }
        public enum Alignment: String, Sendable { case left, center, right }

        public var name: String
        /// The intent a click sends (for the web page).
        public var action: String
        public var area: Area
        public var align: Alignment
        /// Offset from the aligned edge (ignored for `center`), and from the area's top.
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double
        public var fill: RGBColor
        public var radius: Double
        /// Icon shapes in the button's own box (0...width, 0...height).
        public var shapes: [ArtShape]
        /// Drawn over `shapes` while the dragon is hidden.
        public var hiddenShapes: [ArtShape]

        /// The button's left edge in an area `areaWidth` wide.
        public func left(inAreaWidth areaWidth: Double) -> Double {
            switch align {
            case .left: return x
            case .center: return (areaWidth - width) / 2
            case .right: return areaWidth - x - width
            }
        }
    }

    /// The composite `scene` view: a canvas with one rectangle per view.
    public struct Composite: Sendable {
        public var width: Double
        public var height: Double
        public var background: RGBColor
        public var face: ArtRect
        public var heart: ArtRect
        public var dragon: ArtRect
    }
}

/// A rectangle in asset coordinates.
public struct ArtRect: Equatable, Sendable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public func contains(x px: Double, y py: Double) -> Bool {
        px >= x && px < x + width && py >= y && py < y + height
    }
}

/// One filled and/or stroked vector shape.
public struct ArtShape: Sendable {
    public enum Outline: Sendable {
        case path([PathCommand])
        case ellipse(centerX: Double, centerY: Double, radiusX: Double, radiusY: Double)
    }

    public var outline: Outline
    public var fill: RGBColor?
    public var stroke: RGBColor?
    public var lineWidth: Double

    public init(outline: Outline, fill: RGBColor?, stroke: RGBColor?, lineWidth: Double) {
        self.outline = outline
        self.fill = fill
        self.stroke = stroke
        self.lineWidth = lineWidth
    }
}

/// An absolute path command, as in SVG's `M L H V C Q Z` subset.
public enum PathCommand: Equatable, Sendable {
    case move(x: Double, y: Double)
    case line(x: Double, y: Double)
    case cubic(x1: Double, y1: Double, x2: Double, y2: Double, x: Double, y: Double)
    case quad(cx: Double, cy: Double, x: Double, y: Double)
    case close
}

/// A problem with the art file, naming where it is.
public struct SceneArtError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
