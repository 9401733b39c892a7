import Foundation
import XCTest

/// Access tokens from `happyserver token`, signed with a server's configured secret.
enum TokenMinter {
    static func mint(_ server: ServerProcess, subject: String, role: String, room: String? = nil,
                     file: StaticString = #filePath, line: UInt = #line) throws -> String {
        var arguments = ["token", "--sub", subject, "--role", role, "--config", server.configURL.path]
        if let room { arguments += ["--room", room] }
        let outcome = try ServerProcess.run(arguments)
        XCTAssertEqual(outcome.status, 0, outcome.stderr, file: file, line: line)
        return outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
