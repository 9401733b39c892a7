/// The subcommands of `happyclient`.
public enum CommandName: String, CaseIterable, Sendable {
    case state, happiness, nudge, scale, pinch, heart, dragon, reset, watch, play, ping, help

    /// An option of a command: its name and whether a value follows it.
    struct Option: Equatable {
        var name: String
        var takesValue: Bool
    }

    /// The options this command accepts besides the common ones.
    var options: [Option] {
        switch self {
        case .state: return [Option(name: "--json", takesValue: false)]
        case .watch: return [Option(name: "--json", takesValue: false), Option(name: "--pointers", takesValue: false)]
        case .heart:
            return ["--fill", "--stroke", "--width"].map { Option(name: $0, takesValue: true) }
        case .dragon: return [Option(name: "--times", takesValue: true)]
        case .ping: return [Option(name: "--count", takesValue: true)]
        case .play:
            return [Option(name: "--plain", takesValue: false), Option(name: "--color", takesValue: true),
                    Option(name: "--art", takesValue: true), Option(name: "--fps", takesValue: true)]
        case .happiness, .nudge, .scale, .pinch, .reset, .help: return []
        }
    }
}
