import Foundation
import XCTest

/// A `redis-server` of the test's own on a free loopback port, with
/// append-only persistence synced on every write (`appendfsync always`,
/// unless a test asks for another policy).
final class RedisProcess: @unchecked Sendable {
    let directory: URL
    private(set) var port: Int
    private var process: Process?
    private let appendFsync: String

    init(appendFsync: String = "always") throws {
        self.appendFsync = appendFsync
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("happy-redis-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    var url: String { "redis://127.0.0.1:\(port)/0" }

    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        process.arguments = ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
                             "--appendfsync", appendFsync, "--dir", directory.path, "--daemonize", "no"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date(timeIntervalSinceNow: 10)
        while Date() < deadline {
            if (try? cli(["PING"])) == "PONG" { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw NSError(domain: "RedisProcess", code: 1, userInfo: [NSLocalizedDescriptionKey: "redis-server did not start"])
    }

    func stop() {
        guard let process, process.isRunning else { return }
        resume()  // a paused Redis would not act on the signal
        process.terminate()
        process.waitUntilExit()
    }

    /// SIGKILL, as a crash.
    func kill() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGSTOP: Redis keeps its sockets (connections are accepted by the
    /// kernel and commands wait in their buffers) but answers nothing.
    func pause() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGSTOP)
    }

    /// SIGCONT after `pause()`; Redis then runs what waited in its buffers.
    func resume() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGCONT)
    }

    @discardableResult
    func cli(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        process.arguments = ["-p", "\(port)"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Int32 in
                guard bind(fd, raw, length) == 0 else { return -1 }
                return getsockname(fd, raw, &length)
            }
        }
        guard bound == 0 else { throw NSError(domain: "RedisProcess", code: 2) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
