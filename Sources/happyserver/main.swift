import Foundation
import HappyCore
import HappyServer
import HappyRedis
import HappyVersion

let version = String(cString: happy_version())
let usage = """
    usage: happyserver [--config FILE] [--host HOST] [--port PORT]
           happyserver check-config [FILE]
           happyserver token --sub NAME [--role ROLE] [--room ROOM] [--ttl SECONDS]
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

    commands:
      check-config    validate a configuration file and print its effective
                      settings, secrets redacted (exit 0), or name each bad key
                      (exit 78); happyserver check-config --help
      token           mint an access token; happyserver token --help

    signals: SIGTERM and SIGINT stop the server cleanly (new intents are refused
    with "unavailable", accepted ones are recorded and delivered, then every
    client is closed with 1001).

    exit status: 0 after a clean stop, 2 for a wrong command line, 71 when it
    cannot listen, 74 when the store cannot be opened, 78 for a bad configuration.
    """

func fail(_ message: String, status: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("happyserver: \(message)\n".utf8))
    exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "check-config" {
    let rest = Array(arguments.dropFirst())
    if rest.contains("--help") || rest.contains("-h") { print(CheckConfigCommand.usage); exit(0) }
    do {
        let outcome = try CheckConfigCommand.parse(rest).run()
        outcome.stdout.forEach { print($0) }
        outcome.stderr.forEach { FileHandle.standardError.write(Data("\($0)\n".utf8)) }
        exit(outcome.status)
    } catch {
        fail("\(error.message)\n\(CheckConfigCommand.usage)")
    }
}
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
                             tokenVerifier: makeTokenVerifier(config), clusterBus: makeClusterBus(endpoint: redisEndpoint),
                             webhookPoster: CurlWebhookPoster())
    try server.start()
} catch {
    store.close()
    fail(error.message, status: 71)
}
server.run()
