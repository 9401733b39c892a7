import Foundation
import XCTest

/// The built `happyclient` binary, run as a process: to its end, or in the
/// background while its output is collected.
final class ClientProcess: @unchecked Sendable {
    static let binary = built("happyclient")

    /// A product of the package (`happyclient`, the examples), found beside the test binary.
    static func built(_ name: String) -> URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return ServerProcess.repositoryRoot.appendingPathComponent(".build/debug/\(name)")
    }

    /// How a run went.
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
        var seconds: Double
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    let process = Process()
    private let out = LogCollector()
    private let err = LogCollector()
    private let outPipe = Pipe()
    private let errPipe = Pipe()
    private let started = Date()

    /// Starts `happyclient arguments`; `environment` adds to the test's
    /// environment, from which any `HAPPY_*` variables are removed.
    init(_ arguments: [String], environment: [String: String] = [:], binary: URL = ClientProcess.binary) throws {
        process.executableURL = binary
        process.arguments = arguments
        var base = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HAPPY_") }
        for (key, value) in environment { base[key] = value }
        process.environment = base
        process.standardOutput = outPipe
        process.standardError = errPipe
        for (pipe, collector) in [(outPipe, out), (errPipe, err)] {
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                if data.isEmpty { handle.readabilityHandler = nil } else { collector.append(data) }
            }
        }
        try process.run()
    }

    var stdout: String { out.text }
    var stderr: String { err.text }
    var isRunning: Bool { process.isRunning }

    /// Waits until `condition` holds for the output so far.
    @discardableResult
    func waitForOutput(timeout: Double = 10, _ condition: (_ stdout: String, _ stderr: String) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if condition(out.text, err.text) { return true }
            if !process.isRunning { return condition(out.text, err.text) }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition(out.text, err.text)
    }

    /// Sends `signal` to the process.
    func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the end (SIGKILL after `timeout`) and collects the output.
    func finish(timeout: Double = 20) -> Outcome {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            XCTFail("happyclient \(process.arguments ?? []) still ran after \(timeout) s")
        }
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(started)
        // The pipes reach their end once everything written is read; a long
        // output on a busy machine can take a while to drain.
        let quiet = Date(timeIntervalSinceNow: 15)
        while Date() < quiet, outPipe.fileHandleForReading.readabilityHandler != nil
                || errPipe.fileHandleForReading.readabilityHandler != nil {
            Thread.sleep(forTimeInterval: 0.01)
        }
        return Outcome(status: process.terminationStatus, stdout: out.text, stderr: err.text, seconds: seconds)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Runs `happyclient arguments` to its end.
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 20) throws -> Outcome {
        try ClientProcess(arguments, environment: environment).finish(timeout: timeout)
    }
}

/// Loopback ports for tests that need them fixed in advance.
enum LoopbackPort {
    /// A port nothing listens on right now.
    static func free() -> Int {
        let listener = SilentListener(listen: false)
        return listener.port
    }
}

/// A loopback TCP socket bound to a free port that never accepts: with
/// `listen`, connections complete in the kernel and then hear nothing.
final class SilentListener {
    private let fd: Int32
    let port: Int

    init(listen shouldListen: Bool = true) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                _ = bind(fd, pointer, length)
                return getsockname(fd, pointer, &length)
            }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        if shouldListen { _ = listen(fd, 8) }
    }

    deinit { close(fd) }
}
