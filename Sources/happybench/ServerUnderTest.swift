import Foundation

/// A happyserver process started for one workload, with its own config and
/// data directory, pinned to a CPU when asked; its CPU time and memory are
/// read from /proc.
final class ServerUnderTest: @unchecked Sendable {
    let process = Process()
    let directory: URL
    private(set) var port = 0
    private let output = Pipe()
    private var log = Data()
    private let lock = NSLock()

    init(binary: String, settings: [String: Any], cpu: Int?) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("happybench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var config = settings
        config["port"] = 0
        config["dataDir"] = directory.appendingPathComponent("data").path
        let configURL = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: config, options: [.sortedKeys]).write(to: configURL)
        var command = [binary, "--config", configURL.path]
        if let cpu { command = ["/usr/bin/taskset", "-c", "\(cpu)"] + command }
        // The server goes when this process does, even if it crashes or is killed.
        if FileManager.default.isExecutableFile(atPath: Self.setpriv) {
            command = [Self.setpriv, "--pdeathsig", "TERM"] + command
        }
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardError = output
        process.standardOutput = output
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock(); self.log.append(data); self.lock.unlock()
        }
        try process.run()
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline && process.isRunning {
            if let port = listeningPort() { self.port = port; return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw BenchError("happyserver did not start: \(logText)")
    }

    private static let setpriv = "/usr/bin/setpriv"

    var logText: String {
        lock.lock(); defer { lock.unlock() }
        return String(decoding: log, as: UTF8.self)
    }

    private func listeningPort() -> Int? {
        for line in logText.split(separator: "\n") where line.contains("listening") {
            if let range = line.range(of: "port=") { return Int(line[range.upperBound...].prefix(while: \.isNumber)) }
        }
        return nil
    }

    var pid: Int32 { process.processIdentifier }

    /// User plus system CPU seconds used so far.
    func cpuSeconds() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Seconds its threads spent runnable but waiting for a CPU (/proc schedstat):
    /// how much other processes on a shared machine held the server up.
    func runQueueWaitSeconds() -> Double {
        let tasks = "/proc/\(pid)/task"
        var nanoseconds = 0.0
        for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let stat = try? String(contentsOfFile: "\(tasks)/\(task)/schedstat", encoding: .utf8) else { continue }
            let fields = stat.split(separator: " ")
            if fields.count > 1, let waited = Double(fields[1]) { nanoseconds += waited }
        }
        return nanoseconds / 1e9
    }

    /// Bytes the server had the kernel read from and write to storage so far
    /// (`/proc/<pid>/io`: page cache misses and dirtied pages, not cache hits).
    func storageBytes() -> (read: Int, written: Int) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return (0, 0) }
        func value(_ name: String) -> Int {
            text.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        }
        return (value("read_bytes"), value("write_bytes"))
    }

    func residentKilobytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return line.split(separator: " ").compactMap { Int($0) }.first ?? 0
    }

    /// `/metrics` as name → value (unlabelled samples only), read with curl.
    func metrics() -> [String: Double] {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", "--max-time", "5", "http://127.0.0.1:\(port)/metrics"]
        let pipe = Pipe()
        curl.standardOutput = pipe
        curl.standardError = FileHandle.nullDevice
        guard (try? curl.run()) != nil else { return [:] }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        curl.waitUntilExit()
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.contains("{") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            let deadline = Date(timeIntervalSinceNow: 5)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            if process.isRunning { kill(pid, SIGKILL) }
        }
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        try? FileManager.default.removeItem(at: directory)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Cores used by everything but the given processes, sampled over an interval.
struct MachineLoad {
    private var total = 0.0
    private var idle = 0.0

    static func sample() -> MachineLoad {
        var load = MachineLoad()
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first else { return load }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        load.total = values.prefix(8).reduce(0, +)
        load.idle = (values.count > 4 ? values[3] + values[4] : 0)
        return load
    }

    /// Busy cores between two samples.
    static func busyCores(from start: MachineLoad, to end: MachineLoad, cores: Int) -> Double {
        let total = end.total - start.total
        guard total > 0 else { return 0 }
        return (total - (end.idle - start.idle)) / total * Double(cores)
    }
}

/// A redis-server of the benchmark's own, for the cluster workload.
final class RedisUnderTest {
    let process = Process()
    let directory: URL
    let port: Int

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("happybench-redis-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = Int.random(in: 20000...29999)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server") else {
            throw BenchError("redis-server is not installed (apt-get install redis-server)")
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        process.arguments = ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
                             "--appendfsync", "everysec", "--dir", directory.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: 0.3)
    }

    var url: String { "redis://127.0.0.1:\(port)/0" }

    func stop() {
        if process.isRunning { process.terminate(); process.waitUntilExit() }
        try? FileManager.default.removeItem(at: directory)
    }
}
