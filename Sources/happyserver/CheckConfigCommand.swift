import Foundation
import HappyCore

/// `happyserver check-config`: validates a configuration file without starting the server.
struct CheckConfigCommand {
    static let usage = """
        usage: happyserver check-config [FILE]

        Reads the configuration FILE (default: config.json in the current folder) as
        the server does at start, without starting it. A valid file: prints the
        effective settings, one "key = value" a line, with relative paths resolved
        against the file's folder, secrets redacted (auth.secret, webhook secrets,
        passwords, the credentials and query of URLs) and "# default: ..." after each
        value that differs from its default; exits 0. Otherwise: names each bad key
        with what it accepts, and exits 78.
        """

    var path: String?

    static func parse(_ arguments: [String]) throws(UsageError) -> CheckConfigCommand {
        var command = CheckConfigCommand()
        var reader = ArgumentReader(arguments)
        while let argument = reader.nextFlag() {
            switch argument {
            case "--config", "-c": command.path = try reader.value(for: argument)
            case _ where argument.hasPrefix("-") && argument.count > 1:
                throw UsageError(message: "unknown option \"\(argument)\"")
            default:
                guard command.path == nil else { throw UsageError(message: "one configuration file at a time") }
                command.path = argument
            }
        }
        return command
    }

    /// What the check found: the text for standard output or standard error, and the exit status.
    struct Outcome {
        var stdout: [String] = []
        var stderr: [String] = []
        var status: Int32 = 0
    }

    func run() -> Outcome {
        let path = self.path ?? "config.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            return Outcome(stderr: ["happyserver: cannot read the configuration file \(path): no such file or not readable"],
                           status: 78)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            return Outcome(stderr: ["happyserver: \(path): not UTF-8 text"], status: 78)
        }
        let problems = ConfigCheck.problems(in: text, source: path)
        guard problems.isEmpty, var config = try? HappyConfig.parse(text, source: path) else {
            let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
            return Outcome(stderr: problems.map { "happyserver: \($0.message)" } + ["happyserver: \(path): \(count)"],
                           status: 78)
        }
        config.resolvePaths(relativeTo: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        return Outcome(stdout: ["# \(path): valid; the effective settings (secrets redacted):"] + config.settingLines())
    }
}
