/// A command line that cannot run: what was wrong, and the command it
/// belongs to (whose usage is shown with it).
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    public var command: CommandName?
    public var message: String

    public init(_ command: CommandName?, _ message: String) {
        self.command = command
        self.message = message
    }

    /// `happyclient: heart: --width needs a number from 0 to 20, got "x"`
    public var description: String {
        "happyclient: " + (command.map { "\($0.rawValue): " } ?? "") + message
    }

    /// The message, the usage it refers to and where to read more.
    public var fullText: String {
        let usage = command.map { HelpText.synopsis(of: $0) } ?? HelpText.shortUsage
        let more = command.map { "happyclient \($0.rawValue) --help" } ?? "happyclient --help"
        return "\(description)\n\(usage)\nTry '\(more)' for more."
    }
}
