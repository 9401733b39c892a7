import Foundation
import HappyCore

/// Blocking forms of the session's requests, for one-shot commands. Each
/// waits at most `timeout` seconds; never call them where the delegate is called.
extension HappySession {
    /// Starts the session if needed and waits for the welcome.
    @discardableResult
    public func waitForWelcome(timeout: Double) throws(SessionError) -> SessionSnapshot {
        start()
        let deadline = Date(timeIntervalSinceNow: timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            switch connectionState {
            case .connected?:
                return lockedSnapshot()
            case .ended(let error)?:
                throw error
            default:
                break
            }
            if !lock.wait(until: deadline) { throw .timeout(lockedWelcomeTimeoutText(timeout)) }
        }
    }

    /// What a wait for the welcome that ran out says: whether the server answered at all.
    func welcomeTimeoutText(_ timeout: Double) -> String {
        lock.lock()
        defer { lock.unlock() }
        return lockedWelcomeTimeoutText(timeout)
    }

    private func lockedWelcomeTimeoutText(_ timeout: Double) -> String {
        let url = configuration.displayURL
        return opened ? "connected to \(url) but no welcome within \(Self.seconds(timeout))"
            : "no answer from \(url) within \(Self.seconds(timeout))"
    }

    /// Sends `action` and waits for its ack (or error).
    public func perform(_ action: Action, timeout: Double) throws(SessionError) -> IntentOutcome {
        let box = ResultBox<IntentOutcome>()
        let id = send(action) { box.set($0) }
        guard let result = box.wait(timeout: timeout) else {
            forget(id)
            throw .timeout("no answer to \(action.wireName) within \(Self.seconds(timeout))")
        }
        return try result.get()
    }

    /// Sends a ping and waits for the pong.
    public func ping(timeout: Double) throws(SessionError) -> PingSample {
        let box = ResultBox<PingSample>()
        let id = ping { box.set($0) }
        guard let result = box.wait(timeout: timeout) else {
            forget(id)
            throw .timeout("no pong within \(Self.seconds(timeout))")
        }
        return try result.get()
    }

    /// `5 s`, `0.5 s`
    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// One result handed from the session to a waiting thread.
final class ResultBox<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<Value, SessionError>?

    func set(_ result: Result<Value, SessionError>) {
        condition.lock()
        if self.result == nil { self.result = result }
        condition.broadcast()
        condition.unlock()
    }

    func wait(timeout: Double) -> Result<Value, SessionError>? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while result == nil {
            if !condition.wait(until: deadline) { break }
        }
        return result
    }
}
