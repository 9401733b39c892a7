import Foundation
import HappyCore
import HappyServer
import HappyRedis

let version = "1.0.0"
let usage = """
    usage: happyserver [--config FILE] [--host HOST] [--port PORT]
           happyserver token --sub NAME [--role ROLE] [--room ROOM] [--ttl SECONDS]
           happyserver backup --to PATH [--config FILE] [--port PORT]
           happyserver restore --from PATH [--config FILE]
           happyserver --help | --version

    Serves the shared Happy scene: WebSocket at /ws, the page from webRoot,
    the HTTP API under /api. Reads config.json (or --config FILE); --host and
    --port override it, and port 0 picks a free port (the log line
    "listening" shows which).

    options:
      --config FILE   configuration file (default: config.json if present)
      --host HOST     address to listen on (overrides "host")
      --port PORT     port to listen on, 0 for any free one (overrides "port")
      --help          show this text
      --version       show the version

    commands (each has --help):
      token           mints an access token with auth.secret
      backup          copies the running server's database, while it serves
      restore         puts a backup in place of a stopped server's database
    """

func fail(_ message: String, status: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("happyserver: \(message)\n".utf8))
    exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "token" {
    let rest = Array(arguments.dropFirst())
    if rest.contains("--help") || rest.contains("-h") { print(TokenCommand.usage); exit(0) }
    do {
        print(try TokenCommand.parse(rest).mint())
        exit(0)
    } catch let error as UsageError {
        fail("\(error.message)\n\(TokenCommand.usage)")
    } catch let error as ConfigError {
        fail(error.message, status: 78)
    } catch {
        fail("\(error)")
    }
}

/// Runs `backup` or `restore` to its end.
func runCommand(usage: String, _ command: () throws -> String) -> Never {
    do {
        print(try command())
        exit(0)
    } catch let error as UsageError {
        fail("\(error.message)\n\(usage)")
    } catch let error as CommandFailure {
        fail(error.message, status: error.status.rawValue)
    } catch {
        fail("\(error)", status: CommandFailure.Status.software.rawValue)
    }
}

if arguments.first == "backup" || arguments.first == "restore" {
    let rest = Array(arguments.dropFirst())
    let backup = arguments.first == "backup"
    let usage = backup ? BackupCommand.usage : RestoreCommand.usage
    if rest.contains("--help") || rest.contains("-h") { print(usage); exit(0) }
    runCommand(usage: usage) {
        backup ? try BackupCommand.parse(rest, environment: ProcessInfo.processInfo.environment).run()
               : try RestoreCommand.parse(rest).run()
    }
}

var options = ServerOptions()
do {
    options = try ServerOptions.parse(arguments)
} catch {
    fail("\(error.message)\n\(usage)")
}
if options.showHelp { print(usage); exit(0) }
if options.showVersion { print("happyserver \(version)"); exit(0) }

var config: HappyConfig
do {
    config = try loadConfiguration(options)
} catch {
    fail(error.message, status: 78)
}

let logger = Logger(level: LogLevel(name: config.log.level) ?? .info, json: config.log.format == "json")
let operatorKey: OperatorKey?
do {
    try DataDirectory.prepare(config.dataDir, logger: logger)
    operatorKey = config.auth.secret.isEmpty ? try OperatorKey.loadOrCreate(dataDir: config.dataDir) : nil
} catch {
    fail(error.message, status: 73)
}
let store: any RoomStore
let redisEndpoint: (any RedisEndpoint)?
do {
    redisEndpoint = try openRedisEndpoint(config, logger: logger)
    store = try openStore(config, endpoint: redisEndpoint, logger: logger)
} catch {
    fail(error.message, status: 74)
}

let server: HappyServer
do {
    server = try HappyServer(config: config, store: store, logger: logger,
                             tokenVerifier: makeTokenVerifier(config), operatorKey: operatorKey,
                             clusterBus: makeClusterBus(endpoint: redisEndpoint),
                             webhookPoster: CurlWebhookPoster())
    try server.start()
} catch {
    store.close()
    fail(error.message, status: 71)
}
if let operatorKey {
    // A person at a terminal gets the inspector in one click; a service's log gets no secret.
    if isatty(STDERR_FILENO) == 1 {
        let url = operatorKey.inspectorURL(scheme: config.tls.isEnabled ? "https" : "http", host: config.host,
                                           port: server.boundPort)
        FileHandle.standardError.write(Data("happyserver: the inspector, for operators: \(url)\n".utf8))
    } else {
        logger.info("operator key", ["file": operatorKey.path,
                                     "inspector": "/admin#key= followed by the file's contents"])
    }
}
server.run()
