import Foundation
import XCTest

/// `happyclient`'s HTTP commands against a server that accepts the
/// connection and never answers: they wait out `--timeout` and exit 75,
/// sleeping meanwhile rather than spinning (the CPU time of the process is
/// read from the kernel when it ends).
final class HappyClientWaitTests: XCTestCase {
    /// CPU a waiting client may use in all: start-up and exit, never the wait itself
    /// (a spinning wait used more than 3 s in 4).
    private static let cpuBound = 0.3
    /// The `--timeout` given, in seconds.
    private static let wait = 4.0

    func testHTTPCommandsSleepWhileTheServerDoesNotAnswer() throws {
        let silent = SilentListener()
        for scheme in ["ws", "wss"] {
            for command in [["history"], ["frame", "--out", "/dev/null"], ["state", "--seq", "1"]] {
                let label = "\(scheme): \(command.joined(separator: " "))"
                let run = try MeasuredRun(["--url", "\(scheme)://127.0.0.1:\(silent.port)",
                                           "--timeout", "4"] + command)
                print("  \(label): \(run.summary)")
                XCTAssertEqual(run.status, 75, "\(label): \(run.stderr)")
                XCTAssertTrue(run.stderr.contains("within 4 s"), "\(label): \(run.stderr)")
                XCTAssertGreaterThan(run.elapsed, Self.wait - 0.1, "\(label) waited the whole timeout")
                XCTAssertLessThan(run.elapsed, Self.wait + 3, label)
                XCTAssertLessThan(run.cpu, Self.cpuBound, "\(label) spun while waiting: \(run.summary)")
            }
        }
    }
}

/// `happyclient` run to its end through posix_spawn and wait4, which gives
/// the CPU time the process used (user and system).
private struct MeasuredRun {
    var status: Int32
    var stderr: String
    var elapsed: Double
    var cpu: Double
    var user: Double
    var system: Double

    var summary: String {
        String(format: "exit %d in %.2f s, %.3f s user + %.3f s system", status, elapsed, user, system)
    }

    init(_ arguments: [String], timeout: Double = 30) throws {
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("happyclient-\(UUID().uuidString).err")
        defer { try? FileManager.default.removeItem(at: errors) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errors.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let binary = ClientProcess.binary.path
        var argv = ([binary] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        argv.append(nil)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HAPPY_") }
            .map { strdup("\($0.key)=\($0.value)") }
        defer { environment.forEach { free($0) } }
        environment.append(nil)

        let started = Date()
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, binary, &actions, nil, &argv, &environment)
        guard spawned == 0 else {
            throw NSError(domain: "MeasuredRun", code: Int(spawned),
                          userInfo: [NSLocalizedDescriptionKey: "cannot run \(binary): \(String(cString: strerror(spawned)))"])
        }
        var waitStatus: Int32 = 0
        var usage = rusage()
        let deadline = Date(timeIntervalSinceNow: timeout)
        // WNOHANG and a short sleep, so a client that never ends is killed rather than waited for.
        while true {
            let done = wait4(pid, &waitStatus, WNOHANG, &usage)
            if done == pid { break }
            if done < 0 && errno != EINTR { throw NSError(domain: "MeasuredRun", code: Int(errno)) }
            if Date() > deadline {
                kill(pid, SIGKILL)
                XCTFail("happyclient \(arguments) still ran after \(timeout) s")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        elapsed = Date().timeIntervalSince(started)
        status = (waitStatus & 0x7f) == 0 ? (waitStatus >> 8) & 0xff : 128 + (waitStatus & 0x7f)
        user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        cpu = user + system
        stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
    }
}
