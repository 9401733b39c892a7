import Foundation
import HappyCore

/// Reading numbers and colours from arguments, as strictly as the server
/// reads them from JSON.
enum ValueParsing {
    /// A finite decimal number (`80`, `+5`, `-0.5`, `1e2`); no hex, no `inf`/`nan`.
    static func number(_ text: String) -> Double? {
        let allowed = Set("0123456789+-.eE")
        guard !text.isEmpty, text.allSatisfy({ allowed.contains($0) }),
              let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// A whole number within `range`; `80.0` counts as 80, as on the wire.
    static func integer(_ text: String, in range: ClosedRange<Int>) -> Int? {
        guard let value = number(text), value == value.rounded(),
              value >= Double(range.lowerBound), value <= Double(range.upperBound) else { return nil }
        return Int(value)
    }

    static func color(_ text: String) -> RGBColor? {
        RGBColor(hex: text)
    }

    /// `"x"`, for messages.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// A negative (or explicitly signed) number, which is a value even though it starts with `-`.
    static func isSignedNumber(_ text: String) -> Bool {
        guard let first = text.first, first == "-" || first == "+" else { return false }
        return number(text) != nil
    }
}
