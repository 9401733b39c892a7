import Foundation
import HappyCore
import XCTest

/// A real `happyserver` process on an ephemeral loopback port, with its own
/// config file and data directory, for integration tests.
final class ServerProcess: @unchecked Sendable {
    static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url
    }()

    static let binary: URL = {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("happyserver")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return repositoryRoot.appendingPathComponent(".build/debug/happyserver")
    }()

    let directory: URL
    let configURL: URL
    /// Command-line arguments after `--config FILE`.
    private let extraArguments: [String]
    /// The directory was made for this server and goes away with it.
    private let ownsDirectory: Bool
    /// Where the server runs; the config's folder unless given.
    var workingDirectory: URL
    private(set) var process: Process?
    private(set) var port = 0
    private let log = LogCollector()

    /// `settings` are config.json keys (nested objects as dictionaries); port,
    /// webRoot and dataDir default to the test's own. The config file goes in
    /// `directory`; the server runs in `workingDirectory` (default: the same).
    init(_ settings: [String: Any] = [:], arguments: [String] = [], directory: URL? = nil,
         workingDirectory: URL? = nil, start: Bool = true) throws {
        extraArguments = arguments
        ownsDirectory = directory == nil
        self.directory = directory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("happy-test-\(UUID().uuidString.prefix(8))")
        self.workingDirectory = workingDirectory ?? self.directory
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        configURL = self.directory.appendingPathComponent("config.json")
        var config: [String: Any] = [
            "port": 0,
            "webRoot": Self.repositoryRoot.appendingPathComponent("web").path,
            "dataDir": self.directory.appendingPathComponent("data").path,
            "log": ["level": "debug", "format": "text"],
        ]
        for (key, value) in settings { config[key] = value }
        let data = try JSONSerialization.data(withJSONObject: config, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: configURL)
        if start { try self.start() }
    }

    deinit {
        kill()
        if ownsDirectory { try? FileManager.default.removeItem(at: directory) }
    }

    var pid: Int32 { process?.processIdentifier ?? 0 }
    var dataDirectory: URL { directory.appendingPathComponent("data") }

    /// The operator key the server made in its data directory (without `auth.secret`).
    var operatorKey: String {
        let file = dataDirectory.appendingPathComponent("operator.key")
        return (try? String(contentsOf: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    /// An operator's request headers: the key, and a JSON body.
    var operatorHeaders: [String: String] {
        ["Authorization": "Bearer \(operatorKey)", "Content-Type": "application/json"]
    }
    var wsURL: String { "ws://127.0.0.1:\(port)/ws" }
    var httpBase: String { "http://127.0.0.1:\(port)" }
    var logText: String { log.text }

    /// Starts (or restarts) the server and waits until it listens.
    func start(timeout: Double = 20) throws {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["--config", configURL.path] + extraArguments
        process.currentDirectoryURL = workingDirectory
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        let log = self.log
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil } else { log.append(data) }
        }
        log.reset()
        try process.run()
        self.process = process
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if let port = log.listeningPort() { self.port = port; return }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw NSError(domain: "ServerProcess", code: 1, userInfo: [NSLocalizedDescriptionKey:
            "happyserver did not start listening: \(log.text)"])
    }

    /// The processes serving this server's configuration now: after an
    /// upgrade (SIGUSR2) that is a process this one did not start.
    func servingPids() -> [Int32] {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap(Int32.init) ?? []
        return pids.filter { pid in
            guard let command = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")),
                  let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  !status.contains("State:\tZ") else { return false }
            return command.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.contains(configURL.path)
        }
    }

    /// Stops processes that took over from the one this started (they are not its children).
    private func stopSuccessors(signal: Int32, timeout: Double = 10) {
        let successors = servingPids().filter { $0 != pid }
        for successor in successors { Foundation.kill(successor, signal) }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline && !servingPids().filter({ successors.contains($0) }).isEmpty {
            Thread.sleep(forTimeInterval: 0.02)
        }
        for left in servingPids() where successors.contains(left) { Foundation.kill(left, SIGKILL) }
    }

    /// SIGTERM and wait; returns the exit status.
    @discardableResult
    func stop(timeout: Double = 10) -> Int32 {
        stopSuccessors(signal: SIGTERM)
        guard let process, process.isRunning else { return process?.terminationStatus ?? 0 }
        process.terminate()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            // Leave a trace of what the server was doing when it would not stop.
            print("happyserver \(process.processIdentifier) did not stop within \(timeout) s; its log:\n\(logText)")
            Foundation.kill(process.processIdentifier, SIGKILL)
            guard Self.waitForExit(process) else { return -1 }
        }
        return process.terminationStatus
    }

    /// SIGKILL: a crash.
    func kill() {
        stopSuccessors(signal: SIGKILL, timeout: 2)
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        Self.waitForExit(process)
    }

    /// Waits up to `seconds` for a killed process to be seen gone. Not
    /// `waitUntilExit`: it waits for ever when Foundation misses the exit of
    /// a child that crashed, and a test must end.
    @discardableResult
    private static func waitForExit(_ process: Process, seconds: Double = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { print("process \(process.processIdentifier) not seen gone \(seconds) s after SIGKILL") }
        return !process.isRunning
    }

    var isRunning: Bool { process?.isRunning ?? false }

    /// How a process run to its end went.
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the binary with `arguments` to its end (killed after `timeout`).
    static func run(_ arguments: [String], in directory: URL? = nil, timeout: Double = 10) throws -> Outcome {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let out = LogCollector(), err = LogCollector()
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        for (pipe, collector) in [(outPipe, out), (errPipe, err)] {
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                if data.isEmpty { handle.readabilityHandler = nil } else { collector.append(data) }
            }
        }
        try process.run()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw NSError(domain: "ServerProcess", code: 2, userInfo: [NSLocalizedDescriptionKey:
                "happyserver \(arguments) still ran after \(timeout) s: \(out.text) \(err.text)"])
        }
        process.waitUntilExit()
        // Let the readability handlers take the last bytes.
        let quiet = Date(timeIntervalSinceNow: 1)
        while Date() < quiet, outPipe.fileHandleForReading.readabilityHandler != nil
                || errPipe.fileHandleForReading.readabilityHandler != nil {
            Thread.sleep(forTimeInterval: 0.01)
        }
        return Outcome(status: process.terminationStatus, stdout: out.text, stderr: err.text)
    }

    /// Resident memory of the server process in bytes.
    func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
    }
}

/// Collects a child process's output and finds the "listening" line.
final class LogCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    func append(_ chunk: Data) {
        lock.lock(); data.append(chunk); lock.unlock()
    }

    func reset() {
        lock.lock(); data = Data(); lock.unlock()
    }

    var text: String {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }

    func listeningPort() -> Int? {
        for line in text.split(separator: "\n") where line.contains("listening") {
            // text: port=8080, json: "port":"8080"
            if let range = line.range(of: "port=") ?? line.range(of: #""port":""#) {
                return Int(line[range.upperBound...].prefix(while: \.isNumber))
            }
        }
        return nil
    }
}
