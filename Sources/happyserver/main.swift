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
      check-config    validates a configuration file and prints its effective
                      settings, secrets redacted (exit 0), or names each bad key (exit 78)
      token           mints an access token with auth.secret
      backup          copies the running server's database, while it serves
      restore         puts a backup in place of a stopped server's database

    signals: SIGTERM and SIGINT stop the server cleanly (new intents are refused
    with "unavailable", accepted ones are recorded and delivered, then every
    client is closed with 1001; a node of a cluster closes them with 1012, as
    the other nodes serve their rooms). SIGHUP reads the configuration again: limits,
    tokens and secrets, origins, proxies, crowd settings, webhooks and the log
    level apply to what comes next, with nobody dropped; a key that cannot change
    while running is named in the log and kept; a broken file is refused whole.
    SIGUSR2 upgrades in place: the binary at this server's path starts with the
    same arguments, takes over the listening socket and the store, and this
    process's clients move to it (close 1012, rejoined at once and resumed);
    if the new one fails to start, this one goes on serving and logs why.

    exit status: 0 after a clean stop or an upgrade, 1 when an upgrade failed
    after the store was handed over, 2 for a wrong command line, 71 when it
    cannot listen, 73 when the data directory or operator key cannot be made,
    74 when the store cannot be opened, 75 when a process taking over was not
    let in, 78 for a bad configuration.
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

// Started by a running server to take over from it (an upgrade, SIGUSR2)?
let takeover = TakeoverChannel.fromEnvironment()

var config: HappyConfig
do {
    config = try loadConfiguration(options)
} catch {
    fail(error.message, status: 78)
}

let logger = Logger(level: LogLevel(name: config.log.level) ?? .info, json: config.log.format == "json")
let operatorKey: OperatorKey
do {
    try DataDirectory.prepare(config.dataDir, logger: logger)
    // Kept whatever auth.secret says: a reload may clear the secret, and then the key is the credential.
    operatorKey = try OperatorKey.loadOrCreate(dataDir: config.dataDir)
} catch {
    fail(error.message, status: 73)
}
if let takeover {
    // The running server lets go of the store once this one is known to run with a good configuration.
    do {
        try HappyServer.checkStartable(config)
    } catch {
        fail("upgrade: \(error.message)", status: 71)
    }
    takeover.tellReady()
    do {
        try takeover.waitForRelease(seconds: 60)
    } catch {
        fail("upgrade: \(error.message)", status: 75)
    }
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
    let readOptions = options
    server = try HappyServer(config: config, store: store, logger: logger,
                             tokenVerifier: makeTokenVerifier(config), operatorKey: operatorKey,
                             clusterBus: makeClusterBus(endpoint: redisEndpoint),
                             webhookPoster: CurlWebhookPoster(), image: ProcessImage.current(),
                             readConfiguration: { () -> Result<HappyConfig, ConfigError> in
                                 Result { () throws(ConfigError) in try loadConfiguration(readOptions) }
                             })
    try server.start(inheritedListener: takeover?.listenDescriptor)
} catch {
    store.close()
    fail(error.message, status: 71)
}
if let takeover {
    // systemd follows this process from now on (NotifyAccess=all).
    SystemdNotify.send("MAINPID=\(getpid())\nREADY=1")
    takeover.tellServing()
} else {
    SystemdNotify.send("READY=1")
}
if config.auth.secret.isEmpty && takeover == nil {
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
exit(server.exitStatus)
