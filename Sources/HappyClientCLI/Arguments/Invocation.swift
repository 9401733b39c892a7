import HappyClientKit
import HappyCore

/// A parsed command line: the common options and what to do.
public struct Invocation: Equatable, Sendable {
    public var common: CommonOptions
    public var command: Command

    public init(common: CommonOptions = CommonOptions(), command: Command) {
        self.common = common
        self.command = command
    }
}

/// What `happyclient` was asked to do.
public enum Command: Equatable, Sendable {
    /// Show the tool's help, or a command's.
    case help(CommandName?)
    case state(json: Bool)
    /// Send these intents one after the other (`happiness 80`, `dragon forward --times 3`…).
    case intents(CommandName, [Action])
    /// Stream the room; with `pointers`, the others' live pointers too.
    case watch(json: Bool, pointers: Bool = false)
    case play(PlayOptions)
    case ping(count: Int)
}

/// The options of `play`.
public struct PlayOptions: Equatable, Sendable {
    /// How pixels become characters; nil picks from the environment.
    public var colorMode: ColorMode?
    /// The scene art file; nil fetches it from the server.
    public var artPath: String?
    /// Frames per second of the heart wave.
    public var framesPerSecond: Int

    public init(colorMode: ColorMode? = nil, artPath: String? = nil, framesPerSecond: Int = 10) {
        self.colorMode = colorMode
        self.artPath = artPath
        self.framesPerSecond = framesPerSecond
    }
}

/// How `play` draws pixels in the terminal.
public enum ColorMode: String, Equatable, Sendable, CaseIterable {
    /// `▀` half blocks with 24-bit foreground and background colours.
    case truecolor
    /// `▀` half blocks in the 16 standard ANSI colours.
    case ansi16 = "16"
    /// Plain ASCII shading, no colour.
    case none

    /// 24-bit when `COLORTERM` says so, plain when `NO_COLOR` is set or the
    /// terminal is dumb, else the 16 ANSI colours.
    public static func detect(environment: [String: String]) -> ColorMode {
        if environment["NO_COLOR"].map({ !$0.isEmpty }) == true || environment["TERM"] == "dumb" { return .none }
        let colorterm = environment["COLORTERM"]?.lowercased() ?? ""
        return colorterm == "truecolor" || colorterm == "24bit" ? .truecolor : .ansi16
    }
}
