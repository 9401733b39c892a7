import Foundation
import HappyCore

/// Short texts for scene values, shared by every output.
enum Describe {
    /// `2`, `0.9`, `1.32`: at most three decimals, no trailing zeros.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return String(value) }
        let rounded = (value * 1000).rounded() / 1000
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int(rounded)) }
        var text = String(format: "%.3f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    /// `(20, 10)`
    static func position(_ dragon: Scene.Dragon) -> String {
        "(\(number(dragon.x)), \(number(dragon.y)))"
    }

    static func visibility(_ dragon: Scene.Dragon) -> String {
        dragon.hidden ? "hidden" : "shown"
    }

    static func style(_ heart: Scene.Heart) -> String {
        "fill \(heart.fillColor.hex) stroke \(heart.strokeColor.hex) width \(number(heart.lineWidth))"
    }

    /// `happiness 50, scale 0.9, heart rate 0.5, dragon (10, 10) shown`
    static func summary(_ scene: Scene) -> String {
        "happiness \(scene.face.happiness), scale \(number(scene.face.scale)), heart rate \(number(scene.heart.rate)), "
            + "dragon \(position(scene.dragon)) \(visibility(scene.dragon))"
    }

    /// `alice (c7)`
    static func participant(_ participant: Participant) -> String {
        "\(participant.name) (\(participant.id))"
    }

    /// What an action changes, as it stands in `scene` (the summary of the event it causes):
    /// `happiness 80`, `scale 2`, `dragon (270, 10)`.
    static func subject(of action: Action, in scene: Scene) -> String {
        switch action.kind.spec.event.spec.summary {
        case .value(let path): return "\(path.word ?? path.rawValue) \(value(scene.value(at: path)))"
        case .heartStyle: return "heart \(style(scene.heart))"
        case .dragonPosition: return "dragon \(position(scene.dragon))"
        case .dragonVisibility: return "dragon \(visibility(scene.dragon))"
        case .roomReset: return "room \(summary(scene))"
        }
    }

    /// `80`, `0.9`, `#ff0000`, `true`.
    static func value(_ value: SceneValue) -> String {
        switch value {
        case .integer(let integer): return String(integer)
        case .number(let number): return self.number(number)
        case .bool(let flag): return String(flag)
        case .color(let color): return color.hex
        }
    }
}

/// Wall-clock times of day for output lines.
enum TimeOfDay {
    /// `12:04:05` for a time in milliseconds since 1970, `offsetSeconds` east of UTC.
    static func format(milliseconds: Int64, offsetSeconds: Int) -> String {
        let seconds = Int(milliseconds.quotientAndRemainder(dividingBy: 1000).quotient) + offsetSeconds
        let ofDay = ((seconds % 86_400) + 86_400) % 86_400
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(ofDay / 3600)):\(two(ofDay / 60 % 60)):\(two(ofDay % 60))"
    }
}
