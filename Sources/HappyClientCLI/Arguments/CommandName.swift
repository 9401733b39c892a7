/// The subcommands of `happyclient`.
public enum CommandName: String, CaseIterable, Sendable {
    case state, happiness, nudge, scale, pinch, heart, dragon, reset
    /// Any action of the protocol, by its name on the wire (the action table).
    case act
    case watch, play, ping, history, replay, frame
    /// The operator's commands (PROTOCOL.md section 13).
    case rooms, room, kick, deleteRoom = "delete-room"
    case help

    /// An option of a command: its name and whether a value follows it.
    struct Option: Equatable {
        var name: String
        var takesValue: Bool
    }

    /// The options this command accepts besides the common ones.
    var options: [Option] {
        switch self {
        case .state: return [Option(name: "--json", takesValue: false), Option(name: "--seq", takesValue: true)]
        case .watch: return [Option(name: "--json", takesValue: false), Option(name: "--pointers", takesValue: false)]
        case .heart:
            return ["--fill", "--stroke", "--width"].map { Option(name: $0, takesValue: true) }
        case .dragon: return [Option(name: "--times", takesValue: true)]
        case .ping: return [Option(name: "--count", takesValue: true)]
        case .play: return Self.playOptions
        case .history:
            return [Option(name: "--since", takesValue: true), Option(name: "--limit", takesValue: true),
                    Option(name: "--json", takesValue: false)]
        case .replay:
            return [Option(name: "--from", takesValue: true), Option(name: "--speed", takesValue: true)] + Self.playOptions
        case .frame:
            return ["--out", "--seq", "--width", "--height", "--phase"].map { Option(name: $0, takesValue: true) }
        case .rooms:
            return [Option(name: "--limit", takesValue: true), Option(name: "--after", takesValue: true),
                    Option(name: "--all", takesValue: false), Option(name: "--json", takesValue: false)]
        case .room: return [Option(name: "--json", takesValue: false)]
        // kick's --name is whom to remove; the common --name (a display name) goes before the command.
        case .kick: return ["--id", "--name", "--reason"].map { Option(name: $0, takesValue: true) }
        case .deleteRoom: return [Option(name: "--yes", takesValue: false)]
        case .happiness, .nudge, .scale, .pinch, .reset, .act, .help: return []
        }
    }

    /// The options of the full-screen view, shared by `play` and `replay`.
    private static let playOptions = [
        Option(name: "--plain", takesValue: false), Option(name: "--color", takesValue: true),
        Option(name: "--art", takesValue: true), Option(name: "--fps", takesValue: true),
    ]
}
