import Foundation

/// Catches signals (SIGINT, SIGTERM, SIGWINCH…) through dispatch sources,
/// so they arrive as ordinary calls instead of interrupting the program.
final class SignalTrap: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "happyclient.signals")

    /// Calls `handler` with the signal number each time one of `signals` arrives.
    init(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            sources.append(source)
        }
    }

    /// Restores the default actions.
    func cancel() {
        for source in sources {
            source.cancel()
            signal(Int32(source.handle), SIG_DFL)
        }
        sources.removeAll()
    }

    deinit { cancel() }
}

/// Signals caught while the loop was busy, taken in order.
final class PendingSignals: @unchecked Sendable {
    private let lock = NSLock()
    private var numbers: [Int32] = []

    func add(_ number: Int32) {
        lock.lock()
        numbers.append(number)
        lock.unlock()
    }

    func take() -> [Int32] {
        lock.lock()
        defer { lock.unlock() }
        let taken = numbers
        numbers.removeAll()
        return taken
    }
}
