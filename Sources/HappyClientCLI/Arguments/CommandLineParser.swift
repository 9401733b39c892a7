import HappyClientKit
import HappyCore

/// The hand-written parser of `happyclient [options] <command> [command options]`.
/// Common options may come before or after the command; `--name=value` and
/// `--name value` both work; `--` ends the options; negative numbers are values.
public struct CommandLineParser {
    private let arguments: [String]
    private let environment: [String: String]
    private var index = 0

    /// Parses `arguments` (without the program name).
    public static func parse(_ arguments: [String], environment: [String: String] = [:]) throws(UsageError) -> Invocation {
        var parser = CommandLineParser(arguments: arguments, environment: environment)
        return try parser.parse()
    }

    private init(arguments: [String], environment: [String: String]) {
        self.arguments = arguments
        self.environment = environment
    }

    private mutating func parse() throws(UsageError) -> Invocation {
        var command: CommandName?
        var positionals: [String] = []
        var commonValues: [CommonOptions.Key: String] = [:]
        var commandValues: [String: String] = [:]
        var wantsHelp = false
        var wantsVersion = false
        var optionsEnded = false

        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !Self.looksLikeOption(argument) {
                if command == nil {
                    guard let name = CommandName(rawValue: argument) else {
                        throw UsageError(nil, "unknown command \(ValueParsing.quoted(argument))")
                    }
                    command = name
                } else {
                    positionals.append(argument)
                }
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            let (name, inline) = Self.split(argument)
            // A command's own option wins over a common one of the same name (kick --name).
            let own = command?.options.first { $0.name == name }
            if name == "--help" || name == "-h" {
                wantsHelp = true
            } else if name == "--version", inline == nil {
                wantsVersion = true
            } else if own == nil, let key = CommonOptions.Key(rawValue: name) {
                commonValues[key] = try value(for: name, inline: inline, command: command)
            } else if let command, let option = own {
                if option.takesValue {
                    commandValues[name] = try value(for: name, inline: inline, command: command)
                } else if inline != nil {
                    throw UsageError(command, "\(name) takes no value")
                } else {
                    commandValues[name] = ""
                }
            } else if command == nil, case let owners = CommandName.allCases.filter({ $0.options.contains { $0.name == name } }),
                      !owners.isEmpty {
                let names = owners.map(\.rawValue)
                let list = names.count > 1 ? names.dropLast().joined(separator: ", ") + " and " + names.last! : names[0]
                throw UsageError(nil, "\(name) is an option of \(list); put it after the command")
            } else {
                throw UsageError(command, "unknown option \(ValueParsing.quoted(name))")
            }
        }

        if wantsHelp { return Invocation(command: .help(command == .help ? nil : command)) }
        if wantsVersion { return Invocation(command: .version) }
        guard let command else { throw UsageError(nil, "no command given") }
        if command == .help { return Invocation(command: .help(try helpTopic(positionals))) }
        let common = try CommonOptions.resolve(commonValues, environment: environment, command: command)
        var builder = CommandBuilder(command: command, positionals: positionals, options: commandValues, room: common.room)
        return Invocation(common: common, command: try builder.build())
    }

    private mutating func value(for name: String, inline: String?, command: CommandName?) throws(UsageError) -> String {
        if let inline { return inline }
        guard index < arguments.count, !arguments[index].hasPrefix("--") else {
            throw UsageError(command, "\(name) needs a value")
        }
        index += 1
        return arguments[index - 1]
    }

    private func helpTopic(_ positionals: [String]) throws(UsageError) -> CommandName? {
        guard let first = positionals.first else { return nil }
        guard positionals.count == 1 else { throw UsageError(.help, "unexpected argument \(ValueParsing.quoted(positionals[1]))") }
        guard let topic = CommandName(rawValue: first) else {
            throw UsageError(.help, "unknown command \(ValueParsing.quoted(first))")
        }
        return topic == .help ? nil : topic
    }

    /// `--x`, `-h`; not `-5` or `-0.5`, which are values; not `-` alone.
    static func looksLikeOption(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument.count > 1 && !ValueParsing.isSignedNumber(argument)
    }

    /// `--width=2` → (`--width`, `2`).
    static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
