import Foundation
import HappyClientKit

/// The last lines of `ping`: round-trip statistics and the clock offset
/// measured by the fastest ping.
struct PingSummary {
    var samples: [PingSample]

    var lines: [String] {
        guard let fastest = samples.min(by: { $0.roundTripMilliseconds < $1.roundTripMilliseconds }) else { return [] }
        let trips = samples.map(\.roundTripMilliseconds)
        let average = trips.reduce(0, +) / Double(trips.count)
        let offset = fastest.clockOffsetMilliseconds
        let sign = offset >= 0 ? "+" : "-"
        let direction = offset >= 0 ? "ahead of" : "behind"
        return [
            "rtt min/avg/max = \(Self.milliseconds(trips.min()!))/\(Self.milliseconds(average))/"
                + "\(Self.milliseconds(trips.max()!)) ms over \(samples.count) ping\(samples.count == 1 ? "" : "s")",
            "clock offset \(sign)\(Self.milliseconds(abs(offset))) ms (the server's clock is \(direction) this one; "
                + "±\(Self.milliseconds(fastest.roundTripMilliseconds / 2)) ms)",
        ]
    }

    /// `0.42`
    static func milliseconds(_ value: Double) -> String {
        String(format: "%.2f", value)
    }
}
