import Foundation
import HappyCore
import HappyServer

/// `happyserver token`: mints an access token with the configured secret.
struct TokenCommand {
    static let usage = """
        usage: happyserver token --sub NAME [--role viewer|player|admin] [--room ROOM] [--ttl SECONDS]
                                 [--config FILE | --secret SECRET]

        Prints an HS256 access token signed with auth.secret from the configuration
        (or --secret), carrying auth.audience and auth.issuer when they are set.
        --ttl sets the expiry in seconds from now: default 3600, at most 2592000
        (30 days); every token expires. --room limits the token to one room.
        """

    /// The longest `--ttl`: a token that leaks is good for a month at most.
    static let maxTTL: Int64 = 30 * 24 * 3600

    var subject: String?
    var role = Role.player
    var room: String?
    var ttl: Int64 = 3600
    var configPath: String?
    var secret: String?

    static func parse(_ arguments: [String]) throws(UsageError) -> TokenCommand {
        var command = TokenCommand()
        var reader = ArgumentReader(arguments)
        func value(_ flag: String) throws(UsageError) -> String { try reader.value(for: flag) }
        while let flag = reader.nextFlag() {
            switch flag {
            case "--sub": command.subject = try value(flag)
            case "--role":
                let text = try value(flag)
                guard let role = Role(rawValue: text) else {
                    throw UsageError(message: "--role must be viewer, player or admin, got \"\(text)\"")
                }
                command.role = role
            case "--room": command.room = try value(flag)
            case "--ttl":
                let text = try value(flag)
                guard let ttl = Int64(text), (1...maxTTL).contains(ttl) else {
                    throw UsageError(message: "--ttl must be a number of seconds from 1 to \(maxTTL) (30 days), got \"\(text)\"; "
                                     + "every token expires: mint a new one when it does")
                }
                command.ttl = ttl
            case "--config", "-c": command.configPath = try value(flag)
            case "--secret": command.secret = try value(flag)
            default: throw UsageError(message: "unknown argument \"\(flag)\"")
            }
        }
        guard let subject = command.subject else { throw UsageError(message: "--sub is required") }
        guard Names.isValidDisplayName(subject) else {
            throw UsageError(message: "--sub must be 1-32 printable characters")
        }
        if let room = command.room, !Names.isValidRoom(room) {
            throw UsageError(message: "--room must be 1-64 characters of A-Z a-z 0-9 _ -")
        }
        return command
    }

    /// The token, or an error message for the operator.
    func mint() throws(ConfigError) -> String {
        var auth = HappyConfig().auth
        if let secret {
            auth.secret = secret
        } else {
            var options = ServerOptions()
            options.configPath = configPath
            auth = try loadConfiguration(options).auth
        }
        guard let verifier = HMACSHA256.verifier(for: auth) else {
            throw ConfigError("auth.secret is empty: set it in the configuration (or pass --secret) to mint tokens")
        }
        let claims = AccessClaims(subject: subject!, role: role, room: room,
                                  expiresAt: SystemTime.wallMilliseconds() / 1000 + ttl,
                                  audience: verifier.audience, issuer: verifier.issuer)
        return verifier.mint(claims)
    }
}
