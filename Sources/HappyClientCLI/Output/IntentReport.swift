import HappyClientKit
import HappyCore

/// The line printed for an answered intent: `applied  happiness 80`,
/// `blocked  dragon (270, 10)`, `clamped  scale 2`.
enum IntentReport {
    static func line(for action: Action, _ outcome: IntentOutcome) -> String {
        "\(outcome.result)  \(Describe.subject(of: action, in: outcome.state))"
    }
}
