import Foundation

/// A one-time outcome that one thread waits for and others may set.
final class Latch<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value?

    /// Sets the value unless one is set already.
    func set(_ newValue: Value) {
        condition.lock()
        if value == nil { value = newValue }
        condition.broadcast()
        condition.unlock()
    }

    var current: Value? {
        condition.lock()
        defer { condition.unlock() }
        return value
    }

    func wait() -> Value {
        condition.lock()
        defer { condition.unlock() }
        while value == nil { condition.wait() }
        return value!
    }

    /// The value, or nil when none is set within `timeout` seconds.
    func wait(timeout: Double) -> Value? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while value == nil, condition.wait(until: deadline) {}
        return value
    }
}
