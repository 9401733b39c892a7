import HappyCore
import HappyRender

/// Live pointers in `play` (PROTOCOL.md section 10): where this client's
/// keys point, who is steering, and the others' markers over the picture.
enum PlayPointers {
    /// Seconds an idle pointer counts as steering after it last moved.
    static let idleSteeringSeconds = 2.0
    /// Seconds this client's pointer stays shown after its last key.
    static let ownPointerSeconds = 1.0

    // MARK: this client's pointer

    /// Where a key's intent points: over the view it changes, at the spot a
    /// hand would be (the button pressed, the face's mouth rising with
    /// happiness, the heart's fill level), doing what the gesture does.
    static func own(for action: Action, scene: Scene, art: SceneArt?, geometry: SceneGeometry) -> PointerPosition {
        switch action {
        case .setHappiness(let value):
            return PointerPosition(view: .face, x: 0.5, y: faceY(happiness: Int(value)), activity: .drag)
        case .nudgeHappiness(let delta):
            return PointerPosition(view: .face, x: 0.5, y: faceY(happiness: scene.face.happiness + delta), activity: .drag)
        case .setScale, .pinch:
            return PointerPosition(view: .face, x: 0.5, y: 0.5, activity: .pinch)
        case .setRate(let rate):
            return PointerPosition(view: .heart, x: 0.5, y: min(0.95, max(0.05, 1 - rate)), activity: .drag)
        case .dragonForward, .dragonBack, .setHidden, .toggleHidden:
            let button = art.flatMap { buttonCentre(action, art: $0, geometry: geometry) }
            return PointerPosition(view: .dragon, x: button?.x ?? 0.5, y: button?.y ?? 0.5, activity: .press)
        default:
            // A press in the middle of the view the action's name starts with (`heart.setStyle`),
            // the face for the room's.
            let view = action.wireName.split(separator: ".").first.flatMap { PointerView(rawValue: String($0)) }
            return PointerPosition(view: view ?? .face, x: 0.5, y: 0.5, activity: .press)
        }
    }

    /// Lower on the face for a sad one, higher for a happy one.
    private static func faceY(happiness: Int) -> Double {
        0.8 - 0.6 * Double(min(100, max(0, happiness))) / 100
    }

    /// The centre of the button that sends `action` (the hide button for
    /// `setHidden`), in 0...1 of the dragon panel.
    private static func buttonCentre(_ action: Action, art: SceneArt, geometry: SceneGeometry) -> (x: Double, y: Double)? {
        let wireName = (action.kind == .setHidden ? Action.Kind.toggleHidden.spec.wireName : action.wireName)
        guard let button = art.panel.buttons.first(where: { $0.action == wireName }) else { return nil }
        let panelWidth = geometry.width
        let panelHeight = geometry.height + art.panel.rowHeight + art.panel.labelHeight
        guard panelWidth > 0, panelHeight > 0 else { return nil }
        let top = button.area == .scene ? 0 : geometry.height
        let x = (button.left(inAreaWidth: panelWidth) + button.width / 2) / panelWidth
        let y = (top + button.y + button.height / 2) / panelHeight
        return (min(1, max(0, x)), min(1, max(0, y)))
    }

    // MARK: who is steering

    /// The pointers that count as steering: busy ones (dragging, pinching,
    /// pressing) and idle ones that moved within `idleSteeringSeconds`; by name.
    static func steering(_ pointers: [PointerEntry], movedAt: [String: Double], now: Double) -> [PointerEntry] {
        pointers
            .filter { entry in
                entry.position.activity != .idle
                    || movedAt[entry.id].map { now - $0 <= idleSteeringSeconds } ?? false
            }
            .sorted { ($0.name, $0.id) < ($1.name, $1.id) }
    }

    /// `steering: alice (face, drag), bob (dragon, press)`, or `steering: nobody`.
    static func steeringLine(_ pointers: [PointerEntry], movedAt: [String: Double], now: Double) -> String {
        let busy = steering(pointers, movedAt: movedAt, now: now)
        guard !busy.isEmpty else { return "steering: nobody" }
        return "steering: " + busy.map { "\($0.name) (\($0.position.view.rawValue), \($0.position.activity.rawValue))" }
            .joined(separator: ", ")
    }

    // MARK: markers

    /// One marker per pointer, in the given order (a later one wins a shared
    /// cell): its owner's initial at its spot inside its view's box, in a
    /// colour of its own. `renderer` gives the composite's boxes; without it
    /// only stacked views can be found.
    static func marks(_ pointers: [PointerEntry], layout: PlayLayout, renderer: FrameRenderer?) -> [CellMark] {
        pointers.compactMap { entry in
            guard let box = box(of: entry.position.view, in: layout, renderer: renderer),
                  box.width > 0, box.height > 0 else { return nil }
            let x = box.x + min(max(entry.position.x, 0), 0.999) * box.width
            let y = box.y + min(max(entry.position.y, 0), 0.999) * box.height
            return CellMark(column: Int(x.rounded(.down)), row: Int(y.rounded(.down)) / 2,
                            character: initial(of: entry.name), color: color(for: entry.id))
        }
    }

    /// A view's box in picture pixels: its own placement when the views are
    /// stacked, its part of the composite otherwise. The dragon panel keeps
    /// its aspect inside either, as the renderer draws it.
    static func box(of view: PointerView, in layout: PlayLayout, renderer: FrameRenderer?) -> ArtRect? {
        for placement in layout.placements {
            let rect = ArtRect(x: Double(placement.x), y: Double(placement.y),
                               width: Double(placement.width), height: Double(placement.height))
            if placement.view.rawValue == view.rawValue {
                return view == .dragon ? panel(in: rect, renderer: renderer) : rect
            }
            if placement.view == .scene, let composite = renderer?.art.composite,
               composite.width > 0, composite.height > 0 {
                let part: ArtRect
                switch view {
                case .face: part = composite.face
                case .heart: part = composite.heart
                case .dragon: part = composite.dragon
                }
                let kx = rect.width / composite.width, ky = rect.height / composite.height
                let scaled = ArtRect(x: rect.x + part.x * kx, y: rect.y + part.y * ky,
                                     width: part.width * kx, height: part.height * ky)
                return view == .dragon ? panel(in: scaled, renderer: renderer) : scaled
            }
        }
        return nil
    }

    /// The dragon panel fitted and centred in `box`.
    private static func panel(in box: ArtRect, renderer: FrameRenderer?) -> ArtRect {
        guard let renderer else { return box }
        let size = renderer.defaultSize(of: .dragon)
        guard size.width > 0, size.height > 0 else { return box }
        let scale = min(box.width / Double(size.width), box.height / Double(size.height))
        let width = Double(size.width) * scale, height = Double(size.height) * scale
        return ArtRect(x: box.x + (box.width - width) / 2, y: box.y + (box.height - height) / 2, width: width, height: height)
    }

    /// The first ASCII letter or digit of a name, upper-cased: one cell wide
    /// in every terminal. `*` when there is none.
    static func initial(of name: String) -> Character {
        guard let scalar = name.unicodeScalars.first(where: { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) })
        else { return "*" }
        return Character(String(scalar).uppercased())
    }

    /// Bright colours that stand out on the scene's cyan, red and white.
    static let palette: [RGB] = [
        RGB(red: 255, green: 215, blue: 0), RGB(red: 255, green: 105, blue: 180), RGB(red: 50, green: 205, blue: 50),
        RGB(red: 255, green: 140, blue: 0), RGB(red: 186, green: 85, blue: 211), RGB(red: 135, green: 206, blue: 250),
    ]

    /// The same colour for an id every time (FNV-1a of its bytes).
    static func color(for id: String) -> RGB {
        var hash: UInt32 = 2_166_136_261
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return palette[Int(hash % UInt32(palette.count))]
    }
}
