import Foundation
import XCTest

/// Polls `body` until it returns a value, or fails after `seconds`.
func eventually<T>(seconds: Double, _ body: () throws -> T?) throws -> T {
    let deadline = Date(timeIntervalSinceNow: seconds)
    repeat {
        if let value = try body() { return value }
        Thread.sleep(forTimeInterval: 0.1)
    } while Date() < deadline
    throw RawSocket.failure("condition not met within \(seconds) s")
}

/// The server's log once it holds every one of `lines` (it arrives through a pipe).
func logOnceItHas(_ server: ServerProcess, _ lines: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
    do {
        return try eventually(seconds: 10) {
            let log = server.logText
            return lines.allSatisfy { log.contains($0) } ? log : nil
        }
    } catch {
        XCTFail("the log lacks one of \(lines):\n\(server.logText)", file: file, line: line)
        throw error
    }
}
