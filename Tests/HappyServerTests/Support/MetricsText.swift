import Foundation

/// Values read from `/metrics` (Prometheus text format).
struct MetricsText {
    let text: String

    static func read(_ server: ServerProcess) throws -> MetricsText {
        MetricsText(text: try HTTP.get("\(server.httpBase)/metrics").text)
    }

    /// The value of the sample named exactly `sample` (labels included, as in
    /// `happy_intents_total{action="x"}`), or nil when there is no such line.
    subscript(_ sample: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(sample + " ") {
            return Double(line.dropFirst(sample.count + 1).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
