import Foundation
import XCTest

/// A primary, two replicas and three sentinels of the test's own on free
/// loopback ports, configured as the chaos harness does: append-only synced
/// on every write, writes refused without a replica in sync
/// (`min-replicas-to-write 1`), a primary down after 1 s of silence.
final class SentinelGroup: @unchecked Sendable {
    static let master = "mymaster"
    let directory: URL
    let redisPorts: [Int]
    let sentinelPorts: [Int]
    private var processes: [Int: Process] = [:]

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("happy-sentinel-\(UUID().uuidString.prefix(8))")
        redisPorts = try (0..<3).map { _ in try RedisProcess.freePort() }
        sentinelPorts = try (0..<3).map { _ in try RedisProcess.freePort() }
        for (index, port) in redisPorts.enumerated() {
            var lines = ["port \(port)", "bind 127.0.0.1", "daemonize no", "appendonly yes", "appendfsync always",
                         "save \"\"", "min-replicas-to-write 1", "min-replicas-max-lag 3", "repl-diskless-sync-delay 0"]
            if index > 0 { lines.append("replicaof 127.0.0.1 \(redisPorts[0])") }
            try write(lines, name: "redis-\(port)")
            try start(port, program: "redis-server", name: "redis-\(port)")
        }
        for port in sentinelPorts {
            try write(["port \(port)", "bind 127.0.0.1", "daemonize no",
                       "sentinel monitor \(Self.master) 127.0.0.1 \(redisPorts[0]) 2",
                       "sentinel down-after-milliseconds \(Self.master) 1000",
                       "sentinel failover-timeout \(Self.master) 3000"], name: "sentinel-\(port)")
            try start(port, program: "redis-sentinel", name: "sentinel-\(port)")
        }
        // A failover needs every sentinel to know both replicas and the other sentinels.
        _ = try eventually(seconds: 30) { () -> Bool? in
            sentinelPorts.allSatisfy { port in
                let fields = cli(port, ["SENTINEL", "MASTER", Self.master]).split(separator: "\n").map(String.init)
                func value(_ name: String) -> Int { fields.firstIndex(of: name).flatMap { Int(fields[$0 + 1]) } ?? 0 }
                return value("num-slaves") == 2 && value("num-other-sentinels") == 2
            } ? true : nil
        }
    }

    deinit {
        for process in processes.values where process.isRunning {
            Foundation.kill(process.processIdentifier, SIGCONT)
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// `cluster.redis` for the nodes.
    var url: String { "redis+sentinel://" + sentinelPorts.map { "127.0.0.1:\($0)" }.joined(separator: ",") + "/\(Self.master)" }

    /// The primary's port as the first sentinel names it.
    func primaryPort() -> Int? {
        Int(cli(sentinelPorts[0], ["SENTINEL", "get-master-addr-by-name", Self.master]).split(separator: "\n").last ?? "")
    }

    /// Waits until every sentinel names a primary other than `old` that answers as one.
    func waitForFailover(from old: Int, seconds: Double = 30) throws -> Int {
        try eventually(seconds: seconds) { () -> Int? in
            let named = Set(sentinelPorts.map { cli($0, ["SENTINEL", "get-master-addr-by-name", Self.master])
                .split(separator: "\n").last.flatMap { Int($0) } ?? 0 })
            guard named.count == 1, let port = named.first, port != 0, port != old,
                  cli(port, ["ROLE"]).hasPrefix("master") else { return nil }
            return port
        }
    }

    /// True once the Redis on `port` replicates `primary` with its link up.
    func replicates(_ port: Int, primary: Int) -> Bool {
        let role = cli(port, ["ROLE"]).split(separator: "\n").map(String.init)
        return role.count >= 4 && role[0] == "slave" && role[2] == String(primary) && role[3] == "connected"
    }

    func kill(_ port: Int) {
        guard let process = processes[port], process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func pause(_ port: Int) { signal(port, SIGSTOP) }
    func resume(_ port: Int) { signal(port, SIGCONT) }

    private func signal(_ port: Int, _ number: Int32) {
        if let process = processes[port] { Foundation.kill(process.processIdentifier, number) }
    }

    /// Starts the Redis on `port` again with its config file (which Sentinel rewrites).
    func restart(_ port: Int) throws {
        try start(port, program: "redis-server", name: "redis-\(port)")
    }

    @discardableResult
    func cli(_ port: Int, _ arguments: [String]) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        process.arguments = ["-p", "\(port)"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "" }
        // A paused Redis would hold redis-cli (and the test) forever.
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { Foundation.kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 2, execute: watchdog)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func write(_ lines: [String], name: String) throws {
        let folder = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try (lines + ["dir \"\(folder.path)\""]).joined(separator: "\n").appending("\n")
            .write(to: folder.appendingPathComponent("redis.conf"), atomically: true, encoding: .utf8)
    }

    private func start(_ port: Int, program: String, name: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/\(program)")
        process.arguments = [directory.appendingPathComponent(name).appendingPathComponent("redis.conf").path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        processes[port] = process
        _ = try eventually(seconds: 10) { cli(port, ["PING"]) == "PONG" ? true : nil }
    }
}
