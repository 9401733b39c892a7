import HappyCore

/// Logs refusals without letting a flood of them flood the log: the first
/// few of each reason in a window are written one by one, the rest are
/// counted and summed up in one line when the window ends. Metrics still
/// count every refusal.
final class RefusalLog {
    /// Seconds of one window.
    static let windowSeconds = 5.0
    /// Lines written one by one per reason and window.
    static let linesPerReason = 3

    private let logger: Logger
    private let clock: ServiceClock
    private var windowStart: Double
    private var written: [String: Int] = [:]
    private var unwritten: [String: Int] = [:]

    init(logger: Logger, clock: ServiceClock) {
        self.logger = logger
        self.clock = clock
        windowStart = clock.fresh()
    }

    /// A refusal for `reason`, with what identifies it: `refused reason=… fields…`.
    func note(_ reason: String, _ fields: @autoclosure () -> KeyValuePairs<String, String>) {
        note(reason, line: "refused", [(key: "reason", value: reason)] + fields().map { (key: $0.key, value: $0.value) })
    }

    /// A refusal counted under `reason`, written as `line` with `fields`.
    func note(_ reason: String, line: String, _ fields: @autoclosure () -> [(key: String, value: String)]) {
        flush(now: clock.now())
        guard logger.isEnabled(.info) else { return }
        if written[reason, default: 0] < Self.linesPerReason {
            written[reason, default: 0] += 1
            logger.log(.info, line, fields: fields())
        } else {
            unwritten[reason, default: 0] += 1
        }
    }

    /// Ends the window when its time is up: one line for what was only counted.
    func flush(now: Double) {
        guard now - windowStart >= Self.windowSeconds else { return }
        if !unwritten.isEmpty {
            let total = unwritten.values.reduce(0, +)
            let reasons = unwritten.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            logger.info("refused more than the log shows", ["count": "\(total)", "seconds": "\(Int(now - windowStart))",
                                                            "reasons": reasons])
        }
        written.removeAll(keepingCapacity: true)
        unwritten.removeAll(keepingCapacity: true)
        windowStart = now
    }
}
