import Foundation
import XCTest

/// A detached tmux session of a fixed size on a private tmux server (its
/// own socket name), running a plain bash, for driving full-screen programs.
final class TmuxSession {
    static let executable: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    private let tmux: String
    private let socketName = "happy-test-\(UUID().uuidString.prefix(8))"
    let target = "play"

    /// The test's environment for the tmux server, without what `swift test`
    /// adds for its own output (`NO_COLOR`) and without `HAPPY_*` settings.
    private static let environment: [String] = ProcessInfo.processInfo.environment
        .filter { $0.key != "NO_COLOR" && !$0.key.hasPrefix("HAPPY_") }
        .map { "\($0.key)=\($0.value)" }

    /// Starts the session; `environment` is set for the shell.
    init(columns: Int, rows: Int, environment: [String: String] = [:]) throws {
        guard let tmux = Self.executable else {
            throw NSError(domain: "Tmux", code: 1, userInfo: [NSLocalizedDescriptionKey:
                "tmux is not installed: run scripts/bootstrap.sh test (or apt-get install tmux)"])
        }
        self.tmux = tmux
        var arguments = ["new-session", "-d", "-s", target, "-x", "\(columns)", "-y", "\(rows)"]
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) { arguments += ["-e", "\(key)=\(value)"] }
        arguments += ["env PS1='$ ' bash --norc --noprofile"]
        try run(arguments)
    }

    deinit {
        _ = try? run(["kill-server"])
    }

    /// Types `text` literally, then Enter.
    func type(_ text: String) throws {
        try run(["send-keys", "-t", target, "-l", text])
        try run(["send-keys", "-t", target, "Enter"])
    }

    /// Presses keys by tmux name (`Right`, `q`, `C-c`).
    func press(_ keys: String...) throws {
        try run(["send-keys", "-t", target] + keys)
    }

    /// The pane's text now.
    func capture() -> String {
        (try? run(["capture-pane", "-p", "-t", target])) ?? ""
    }

    func resize(columns: Int, rows: Int) throws {
        try run(["resize-window", "-t", target, "-x", "\(columns)", "-y", "\(rows)"])
    }

    /// Waits until the pane's text satisfies `condition`; returns the last capture.
    @discardableResult
    func waitForScreen(timeout: Double = 10, _ condition: (String) -> Bool) -> (Bool, String) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var screen = capture()
        while !condition(screen) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            screen = capture()
        }
        return (condition(screen), screen)
    }

    /// Runs a tmux command through posix_spawn and waitpid: Foundation's
    /// `Process` does not see the tmux client exit once it has started the
    /// tmux server. Output goes through a file, as the server keeps pipes open.
    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: output) }
        let argv = [tmux, "-L", socketName, "-f", "/dev/null"] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var cStrings = argv.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        cStrings.append(nil)
        var environment = Self.environment.map { strdup($0) }
        defer { environment.forEach { free($0) } }
        environment.append(nil)
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, tmux, &actions, nil, &cStrings, &environment)
        guard spawned == 0 else {
            throw NSError(domain: "Tmux", code: Int(spawned), userInfo: [NSLocalizedDescriptionKey: "cannot run \(tmux)"])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw NSError(domain: "Tmux", code: Int(status), userInfo: [NSLocalizedDescriptionKey:
                "tmux \(arguments.joined(separator: " ")): \(text)"])
        }
        return text
    }
}
