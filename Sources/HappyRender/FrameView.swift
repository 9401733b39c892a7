import HappyCore

/// The views a frame can show: the three seeds, or all of them together.
public enum FrameView: String, CaseIterable, Sendable {
    case face, heart, dragon, scene

    /// The view draws the heart wave, so its picture changes with the wave step.
    public var animates: Bool { self == .heart || self == .scene }
}

/// Everything a frame is drawn from: the room's scene, the dragon status
/// label's text and the heart wave step (0...99, PROTOCOL.md section 8).
public struct FrameState: Equatable, Sendable {
    public var scene: Scene
    public var dragonStatus: String
    public var step: Int

    public init(scene: Scene, dragonStatus: String, step: Int) {
        self.scene = scene
        self.dragonStatus = dragonStatus
        self.step = step
    }

    /// Only what `view` draws; the rest set to fixed values, so two states
    /// that look the same in `view` compare equal (face: happiness and
    /// scale; heart: the heart and the step; dragon: position, hidden,
    /// status; scene: everything).
    public func relevant(to view: FrameView) -> FrameState {
        let blank = Scene.standard
        switch view {
        case .face:
            return FrameState(scene: Scene(face: scene.face, heart: blank.heart, dragon: blank.dragon),
                              dragonStatus: "", step: 0)
        case .heart:
            return FrameState(scene: Scene(face: blank.face, heart: scene.heart, dragon: blank.dragon),
                              dragonStatus: "", step: step)
        case .dragon:
            return FrameState(scene: Scene(face: blank.face, heart: blank.heart, dragon: scene.dragon),
                              dragonStatus: dragonStatus, step: 0)
        case .scene:
            return self
        }
    }
}
