import Foundation

/// Polls `body` until it returns a value, or fails after `seconds`.
func eventually<T>(seconds: Double, _ body: () throws -> T?) throws -> T {
    let deadline = Date(timeIntervalSinceNow: seconds)
    repeat {
        if let value = try body() { return value }
        Thread.sleep(forTimeInterval: 0.1)
    } while Date() < deadline
    throw RawSocket.failure("condition not met within \(seconds) s")
}
