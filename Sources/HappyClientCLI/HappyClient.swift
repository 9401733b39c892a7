import Foundation
import HappyClientKit
import HappyVersion

/// The `happyclient` program: parses the command line and runs the command.
public enum HappyClient {
    /// Runs with `arguments` (without the program name); returns the exit code.
    public static func run(arguments: [String], environment: [String: String],
                           console: Console = .standard) -> Int32 {
        let invocation: Invocation
        do {
            invocation = try CommandLineParser.parse(arguments, environment: environment)
        } catch {
            console.err(error.fullText)
            return ExitStatus.usage.rawValue
        }
        if case .help(let topic) = invocation.command {
            console.out(HelpText.help(for: topic))
            return ExitStatus.success.rawValue
        }
        if case .version = invocation.command {
            console.out("happyclient \(version)")
            return ExitStatus.success.rawValue
        }
        var common = invocation.common
        if invocation.command.actsInTheRoom, common.name == nil { common.name = LoginName.current(environment: environment) }
        common.observe = invocation.command.observesTheRoom
        let loop: ClientLoop
        do {
            loop = try ClientLoop(name: "happyclient")
        } catch {
            console.err("happyclient: cannot start the WebSocket client: \(error)")
            return ExitStatus.cannotConnect.rawValue
        }
        let context = CommandContext(common: common, loop: loop, console: console, environment: environment)
        let status: Int32
        switch invocation.command {
        case .help, .version: status = ExitStatus.success.rawValue
        case .state(let json, nil): status = context.runState(json: json)
        case .state(let json, let seq?): status = context.runPastState(seq: seq, json: json)
        case .intents(_, let actions): status = context.runIntents(actions)
        case .watch(let json, let pointers): status = context.runWatch(json: json, pointers: pointers)
        case .play(let options): status = context.runPlay(options)
        case .ping(let count): status = context.runPing(count: count)
        case .history(let options): status = context.runHistory(options)
        case .replay(let options): status = context.runReplay(options)
        case .frame(let options): status = context.runFrame(options)
        case .rooms(let options): status = context.runRooms(options)
        case .room(let name, let json): status = context.runRoom(name, json: json)
        case .kick(let options): status = context.runKick(options)
        case .deleteRoom(let room): status = context.runDeleteRoom(room)
        }
        loop.shutdown()
        return status
    }
}

extension HappyClient {
    /// The version `happyclient --version` prints: `make`'s, from `git describe`, or 0.0~dev.
    public static let version = String(cString: happy_version())
}
