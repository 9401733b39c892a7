import Foundation

/// The value of one sample in Prometheus text, by its full name with labels
/// (`happy_errors_total{code="bad_json"}`); nil when the sample is missing.
/// A check such as `!text.contains("x 0")` also passes when `x` is missing,
/// so tests read the value instead.
func metricValue(_ text: String, _ name: String) -> Double? {
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " "), line[..<space] == name else { continue }
        return Double(line[line.index(after: space)...])
    }
    return nil
}

extension ServerProcess {
    /// The server's `/metrics` text.
    func metricsText() throws -> String {
        let response = try RawHTTP.get(port: port, target: "/metrics")
        guard response.status == 200 else { throw RawSocket.failure("/metrics answered \(response.status)") }
        return response.body
    }

    /// One sample's current value; throws when the server does not report it.
    func metric(_ name: String) throws -> Double {
        let text = try metricsText()
        guard let value = metricValue(text, name) else { throw RawSocket.failure("no sample \(name) in /metrics:\n\(text)") }
        return value
    }
}
