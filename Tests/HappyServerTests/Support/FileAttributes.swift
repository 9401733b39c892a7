import Foundation
import XCTest

/// Makes a directory and its files refuse writes, even to root (ext4's
/// immutable attribute), and back. Used to provoke store write failures.
enum WriteBlocker {
    static func block(_ directory: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        try run(["+i"], directory, file: file, line: line)
    }

    static func unblock(_ directory: URL) {
        try? run(["-i"], directory, file: #filePath, line: #line)
    }

    private static func run(_ flag: [String], _ directory: URL, file: StaticString, line: UInt) throws {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let paths = [directory.path] + entries.map { directory.appendingPathComponent($0).path }
        if getuid() != 0 {
            // Without root, permissions are enough.
            let mode = flag == ["+i"] ? 0o555 : 0o755
            for path in paths { chmod(path, mode_t(mode)) }
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = flag + paths
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTFail("chattr \(flag) failed (the test needs ext4 or similar for \(directory.path)): \(message)",
                    file: file, line: line)
        }
    }
}
