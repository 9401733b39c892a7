import Foundation

/// Sends one byte on each socket every interval, as a slowloris client does,
/// and counts the sockets the server has not closed yet.
final class Dribbler: @unchecked Sendable {
    private let lock = NSLock()
    private let sockets: [RawSocket]
    private var open: [Bool]
    private var stopped = false

    init(_ sockets: [RawSocket]) {
        self.sockets = sockets
        open = Array(repeating: true, count: sockets.count)
    }

    var openCount: Int { lock.withLock { open.filter { $0 }.count } }

    func stop() { lock.withLock { stopped = true } }

    func run(interval: Double, until deadline: Date) {
        while Date() < deadline, !lock.withLock({ stopped }) {
            for (index, socket) in sockets.enumerated() where lock.withLock({ open[index] }) {
                if socket.discardReceivedAndCheckClosed() || (try? socket.send("x")) == nil {
                    lock.withLock { open[index] = false }
                }
            }
            Thread.sleep(forTimeInterval: interval)
        }
    }
}
