import HappyClientKit
import HappyCore

/// The options every command takes: which server, room, name and token,
/// and how long to wait. Each also comes from an environment variable.
public struct CommonOptions: Equatable, Sendable {
    public static let defaultURL = "ws://127.0.0.1:8080"
    public static let defaultTimeout = 5.0

    public var url: WebSocketURL
    public var room: String?
    public var name: String?
    public var token: String?
    public var timeout: Double
    /// Join as an observer (`observe=1`): set for the commands that only watch.
    public var observe = false

    public init(url: WebSocketURL = WebSocketURL(CommonOptions.defaultURL)!, room: String? = nil,
                name: String? = nil, token: String? = nil, timeout: Double = CommonOptions.defaultTimeout) {
        self.url = url
        self.room = room
        self.name = name
        self.token = token
        self.timeout = timeout
    }

    /// A common option: its flag and its environment variable.
    enum Key: String, CaseIterable {
        case url = "--url", room = "--room", name = "--name", token = "--token", timeout = "--timeout"

        var environmentVariable: String? {
            switch self {
            case .url: return "HAPPY_URL"
            case .room: return "HAPPY_ROOM"
            case .name: return "HAPPY_NAME"
            case .token: return "HAPPY_TOKEN"
            case .timeout: return nil
            }
        }
    }

    /// Command-line values win over the environment, which wins over the
    /// defaults. Empty environment variables count as unset.
    static func resolve(_ given: [Key: String], environment: [String: String],
                        command: CommandName?) throws(UsageError) -> CommonOptions {
        var options = CommonOptions()
        for key in Key.allCases {
            let source: String
            let text: String
            if let value = given[key] {
                (source, text) = (key.rawValue, value)
            } else if let variable = key.environmentVariable, let value = environment[variable], !value.isEmpty {
                (source, text) = (variable, value)
            } else {
                continue
            }
            try options.set(key, text, source: source, command: command)
        }
        return options
    }

    private mutating func set(_ key: Key, _ text: String, source: String, command: CommandName?) throws(UsageError) {
        func fail(_ needs: String) -> UsageError {
            UsageError(command, "\(source) needs \(needs), got \(ValueParsing.quoted(text))")
        }
        switch key {
        case .url:
            let lower = text.lowercased()
            guard ["ws://", "wss://", "http://", "https://"].contains(where: { lower.hasPrefix($0) }),
                  let url = WebSocketURL(text) else { throw fail("a ws:// or wss:// URL such as \(Self.defaultURL)") }
            self.url = url
        case .room:
            guard Names.isValidRoom(text) else { throw fail("1-64 characters of A-Z a-z 0-9 _ -") }
            room = text
        case .name:
            guard Names.isValidDisplayName(text) else { throw fail("1-32 printable characters") }
            name = text
        case .token:
            guard !text.isEmpty else { throw fail("a token") }
            token = text
        case .timeout:
            guard let seconds = ValueParsing.number(text), seconds > 0, seconds <= 86_400 else {
                throw fail("a number of seconds greater than 0 (at most 86400)")
            }
            timeout = seconds
        }
    }

    /// The session configuration these options describe.
    public func sessionConfiguration(reconnects: Bool) -> SessionConfiguration {
        SessionConfiguration(server: url, room: room, name: name, token: token, observe: observe, reconnects: reconnects)
    }
}
