import Foundation
import Glibc

/// What the process taking over says during an upgrade, one line each.
enum HandoverMessage: String, Sendable {
    /// It runs, its configuration is good: the old process may let go.
    case ready
    /// It accepts connections: the old process's clients may come over.
    case serving
    /// It went away (exited, or closed the channel) before saying `serving`.
    case gone
}

/// The binary a running server was started from, and its arguments: what
/// an upgrade starts again (the file at that path may be a new version).
public struct ProcessImage: Sendable {
    public var path: String
    public var arguments: [String]

    public init(path: String, arguments: [String]) {
        self.path = path
        self.arguments = arguments
    }

    /// This process's: its executable's path as it was at start, and its arguments.
    public static func current() -> ProcessImage {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return ProcessImage(path: path, arguments: Array(CommandLine.arguments.dropFirst()))
    }
}

/// The environment that tells a new process it takes over from a running
/// one: the listening socket and the channel it talks on, at fixed descriptors.
public enum HandoverEnvironment {
    public static let listenVariable = "HAPPY_LISTEN_FD"
    public static let channelVariable = "HAPPY_HANDOVER_FD"
    static let listenDescriptor: Int32 = 3
    static let channelDescriptor: Int32 = 4
}

/// The running process's side of an upgrade, as nginx does it: start the
/// binary found at the server's own path with the same arguments, the
/// listening socket and a channel passed to it; hear `ready`, let go of the
/// store and say `released`; hear `serving`, then send the clients over.
final class ProcessHandover {
    private(set) var child: pid_t = 0
    private var channel: Int32 = -1

    /// Starts the new process; its messages reach the service thread through `inbox`.
    func start(_ image: ProcessImage, listenDescriptor: Int32, inbox: WakeInbox) throws(ServerError) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw ServerError("upgrade: socketpair: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 leaves the copies open across exec; every other descriptor is closed on exec.
        posix_spawn_file_actions_adddup2(&actions, listenDescriptor, HandoverEnvironment.listenDescriptor)
        posix_spawn_file_actions_adddup2(&actions, pair[1], HandoverEnvironment.channelDescriptor)
        var environment = ProcessInfo.processInfo.environment
        environment[HandoverEnvironment.listenVariable] = "\(HandoverEnvironment.listenDescriptor)"
        environment[HandoverEnvironment.channelVariable] = "\(HandoverEnvironment.channelDescriptor)"
        let argv = [image.path] + image.arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let status = withCStrings(argv) { cArgv in
            withCStrings(envp) { cEnvp in posix_spawn(&pid, image.path, &actions, nil, cArgv, cEnvp) }
        }
        close(pair[1])
        guard status == 0 else {
            close(pair[0])
            throw ServerError("upgrade: cannot start \(image.path): \(String(cString: strerror(status)))")
        }
        child = pid
        channel = pair[0]
        let reader = channel
        Thread.detachNewThread {
            // Lines until the channel closes; nothing after `serving` matters.
            var pending = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[0..<count]
                while let end = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[..<end], as: UTF8.self)
                    pending.removeSubrange(...end)
                    if let message = HandoverMessage(rawValue: line) { inbox.post(.handover(message)) }
                    if line == HandoverMessage.serving.rawValue { return }
                }
            }
            inbox.post(.handover(.gone))
        }
    }

    /// Tells the new process the store is free.
    func release() {
        let line = Array("released\n".utf8)
        _ = line.withUnsafeBytes { write(channel, $0.baseAddress, $0.count) }
    }

    /// How the new process ended, if it has (without waiting).
    func childExit() -> String? {
        var status: Int32 = 0
        guard child > 0, waitpid(child, &status, WNOHANG) == child else { return nil }
        child = 0
        if status & 0x7F == 0 { return "exited with status \((status >> 8) & 0xFF)" }
        return "killed by signal \(status & 0x7F)"
    }

    /// Gives up on the new process (it said nothing in time): stops it.
    func abandon() {
        if child > 0 { kill(child, SIGKILL) }
        finish()
    }

    /// The handover is over: the channel closes.
    func finish() {
        if channel >= 0 { close(channel) }
        channel = -1
    }
}

/// Runs `body` with `strings` as a NULL-terminated C array.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
