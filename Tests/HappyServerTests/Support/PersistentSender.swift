import Foundation

/// A WebSocket client that keeps sending while the server closes it, as a
/// flooding or busy client does: messages go out from a thread of their own
/// until the client has seen the server's close frame and answered it.
/// Its counters are shared with the sending thread under `lock`.
final class PersistentSender: @unchecked Sendable {
    /// What the client saw of a close the server started.
    struct Outcome {
        /// The server's close frame, or nil when the connection ended without one.
        var close: RawWebSocket.Frame?
        /// Text messages before the close frame.
        var texts: [String]
        /// How the server ended the connection after our close answer.
        var ending: RawSocket.Ending
        /// The server ended the connection while we still sent, before our close frame.
        var endedBeforeAnswer: Bool
        /// Messages sent before our close answer.
        var sent: Int
        /// Seconds from the close frame to the end of the connection.
        var secondsToEnd: Double
    }

    let socket: RawWebSocket
    private let lock = NSLock()
    private var stopped = false
    private var sentCount = 0
    private let finished = DispatchSemaphore(value: 0)

    /// Connects to `target` and starts sending `message(n)` every `interval`
    /// seconds, `batch` messages at a time; with `afterWelcome`, once the
    /// welcome came (a busy server may welcome late, and holds only so many
    /// messages before it).
    init(port: Int, target: String, interval: Double = 0.05, batch: Int = 50, afterWelcome: Bool = false,
         message: @escaping @Sendable (Int) -> RawMessage) throws {
        socket = try RawWebSocket(port: port, target: target, timeout: 10)
        if afterWelcome, socket.nextFrame() == nil { throw RawSocket.failure("no welcome from \(target)") }
        Thread.detachNewThread { [self] in
            var index = 0
            sending: while !isStopped {
                for _ in 0..<batch {
                    let next = message(index)
                    index += 1
                    lock.withLock {
                        guard !stopped else { return }
                        // Sent under the lock so that our close answer is the last frame.
                        if (try? self.socket.send(opcode: next.opcode, next.payload)) != nil { sentCount += 1 } else { stopped = true }
                    }
                    if isStopped { break sending }
                }
                Thread.sleep(forTimeInterval: interval)
            }
            finished.signal()
        }
    }

    /// One message to send: text or binary.
    struct RawMessage: Sendable {
        var opcode: UInt8
        var payload: [UInt8]
        static func text(_ text: String) -> RawMessage { RawMessage(opcode: 0x1, payload: Array(text.utf8)) }
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    /// Reads until the server's close frame, keeps sending for `answerDelay`
    /// seconds, answers it (the sender stops then), and waits up to
    /// `endWithin` seconds for the server to end the connection.
    /// `answer: false` keeps sending instead of answering.
    func awaitServerClose(answer: Bool = true, answerDelay: Double = 0.3, endWithin: Double = 5) -> Outcome {
        let (close, texts) = socket.readUntilClose()
        let closedAt = Date()
        var endedBeforeAnswer = false
        while answer && Date().timeIntervalSince(closedAt) < answerDelay && !endedBeforeAnswer {
            endedBeforeAnswer = socket.socket.hasEnded()
            Thread.sleep(forTimeInterval: 0.01)
        }
        let sent: Int
        if answer {
            sent = lock.withLock {
                if !stopped, case .close(let code?, _)? = close {
                    try? socket.send(opcode: 0x8, [UInt8(code >> 8), UInt8(code & 0xff)])
                }
                stopped = true
                return sentCount
            }
        } else {
            sent = lock.withLock { sentCount }
        }
        let ending = socket.socket.awaitEnd(seconds: endWithin)
        lock.withLock { stopped = true }
        finished.wait()
        return Outcome(close: close, texts: texts, ending: ending, endedBeforeAnswer: endedBeforeAnswer, sent: sent,
                       secondsToEnd: Date().timeIntervalSince(closedAt))
    }
}
