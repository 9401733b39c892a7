import HappyCore

/// Draws each view of a room from a `FrameState` at any size, with Cairo,
/// and encodes it as PNG. Immutable, so any thread may render with it.
///
/// Face and heart fill the whole image, as the seed views fill their bounds.
/// The dragon panel and the composite scene keep their aspect: they are
/// scaled to fit and centred, and the margins stay transparent. Each view
/// draws only inside its own box, alone or in the composite, so a large face
/// never spills over the heart.
public final class FrameRenderer: Sendable {
    public let art: SceneArt
    public let geometry: SceneGeometry
    /// Largest side accepted.
    public static let maxSide = 4096

    public init(art: SceneArt, geometry: SceneGeometry) {
        self.art = art
        self.geometry = geometry
    }

    var panel: DragonPanelLayout { DragonPanelLayout(art: art, geometry: geometry) }

    /// The size a view is drawn at when none is asked for: 300×300 for the
    /// face and the heart, the panel's own size for the dragon (scene width
    /// × scene height + button row + label), the art's canvas for the scene.
    public func defaultSize(of view: FrameView) -> (width: Int, height: Int) {
        switch view {
        case .face, .heart: return (300, 300)
        case .dragon: return (Int(panel.width.rounded()), Int(panel.height.rounded()))
        case .scene: return (Int(art.composite.width.rounded()), Int(art.composite.height.rounded()))
        }
    }

    /// Draws `view` into a new `width`×`height` image.
    public func render(_ view: FrameView, _ state: FrameState, width: Int, height: Int) throws(RenderError) -> RenderedImage {
        guard (1...Self.maxSide).contains(width), (1...Self.maxSide).contains(height) else {
            throw RenderError("image size \(width)x\(height) outside 1...\(Self.maxSide)")
        }
        let surface = try ImageSurface(width: width, height: height)
        let context = try DrawingContext(surface)
        let w = Double(width), h = Double(height)
        switch view {
        case .face:
            FaceDrawing.draw(state.scene.face, in: context, width: w, height: h)
        case .heart:
            HeartDrawing.draw(state.scene.heart, step: state.step, in: context, width: w, height: h)
        case .dragon:
            let layout = panel
            context.fitted(layout.width, layout.height, in: ArtRect(x: 0, y: 0, width: w, height: h)) {
                layout.draw(state.scene.dragon, status: state.dragonStatus, in: context)
            }
        case .scene:
            let composite = art.composite
            context.fitted(composite.width, composite.height, in: ArtRect(x: 0, y: 0, width: w, height: h)) {
                drawComposite(state, in: context)
            }
        }
        try context.finish()
        return RenderedImage(surface)
    }

    /// Renders and encodes in one step.
    public func png(_ view: FrameView, _ state: FrameState, width: Int, height: Int) throws(RenderError) -> [UInt8] {
        try render(view, state, width: width, height: height).pngBytes()
    }

    private func drawComposite(_ state: FrameState, in context: DrawingContext) {
        let composite = art.composite
        context.rectangle(0, 0, composite.width, composite.height)
        context.setColor(composite.background)
        context.fill()
        context.isolated {
            context.translate(composite.face.x, composite.face.y)
            FaceDrawing.draw(state.scene.face, in: context, width: composite.face.width, height: composite.face.height)
        }
        context.isolated {
            context.translate(composite.heart.x, composite.heart.y)
            HeartDrawing.draw(state.scene.heart, step: state.step, in: context,
                              width: composite.heart.width, height: composite.heart.height)
        }
        let layout = panel
        context.fitted(layout.width, layout.height, in: composite.dragon) {
            layout.draw(state.scene.dragon, status: state.dragonStatus, in: context)
        }
    }
}

/// A rendered frame: its pixels can be read back (tests probe them) and it
/// can be encoded as PNG.
public final class RenderedImage {
    private let surface: ImageSurface

    init(_ surface: ImageSurface) {
        self.surface = surface
    }

    public var width: Int { surface.width }
    public var height: Int { surface.height }

    /// The pixel at column `x`, row `y` (0-based, from the top left).
    public func pixel(x: Int, y: Int) -> Pixel {
        surface.pixel(x: x, y: y)
    }

    public func pngBytes() throws(RenderError) -> [UInt8] {
        try surface.pngBytes()
    }

    /// The same pixels as PNG through Cairo's own writer, the encoder frames
    /// used before `pngBytes()`: tests decode both and compare, and
    /// happyrender-bench times both.
    public func cairoPNGBytes() throws(RenderError) -> [UInt8] {
        try surface.cairoPNGBytes()
    }
}
