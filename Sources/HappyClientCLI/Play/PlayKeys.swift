import HappyCore

/// The keys of `play` and the intents they send.
enum PlayKeys {
    static let happinessStep = 5
    static let pinchFactor = 1.1
    static let rateStep = 0.1

    static let help = "←/→ dragon  ↑/↓ happiness  +/- scale  [ ] heart rate  h hide  q quit"

    /// The intent for `key` given the current scene; nil for other keys.
    static func action(for key: Key, scene: Scene) -> Action? {
        switch key {
        case .right: return .dragonForward
        case .left: return .dragonBack
        case .up: return .nudgeHappiness(happinessStep)
        case .down: return .nudgeHappiness(-happinessStep)
        case .character("+"), .character("="): return .pinch(pinchFactor)
        case .character("-"), .character("_"): return .pinch(1 / pinchFactor)
        case .character("]"): return .setRate(steppedRate(scene.heart.rate, by: rateStep))
        case .character("["): return .setRate(steppedRate(scene.heart.rate, by: -rateStep))
        case .character("h"), .character("H"): return .toggleHidden
        default: return nil
        }
    }

    static func isQuit(_ key: Key) -> Bool {
        key == .character("q") || key == .character("Q")
    }

    /// `rate + step` on the grid of tenths, within 0...1.
    static func steppedRate(_ rate: Double, by step: Double) -> Double {
        let tenths = ((rate + step) * 10).rounded() / 10
        return min(1, max(0, tenths))
    }
}
