import Foundation
import HappyCore
import HappyServer
import HappyRedis
import HappySQLite

/// A usage error: what was wrong with the command line.
struct UsageError: Error {
    let message: String
}

/// Walks a command line flag by flag; a flag's value is the next argument.
struct ArgumentReader {
    private let arguments: [String]
    private var index = 0

    init(_ arguments: [String]) {
        self.arguments = arguments
    }

    /// The next flag, or nil at the end.
    mutating func nextFlag() -> String? {
        guard index < arguments.count else { return nil }
        defer { index += 1 }
        return arguments[index]
    }

    /// The value of `flag` (the argument after it).
    mutating func value(for flag: String) throws(UsageError) -> String {
        guard index < arguments.count else { throw UsageError(message: "\(flag) needs a value") }
        defer { index += 1 }
        return arguments[index]
    }
}

/// The command line of `happyserver`.
struct ServerOptions {
    var configPath: String?
    var host: String?
    var port: Int?
    var showHelp = false
    var showVersion = false

    static func parse(_ arguments: [String]) throws(UsageError) -> ServerOptions {
        var options = ServerOptions()
        var reader = ArgumentReader(arguments)
        while let argument = reader.nextFlag() {
            switch argument {
            case "--config", "-c": options.configPath = try reader.value(for: argument)
            case "--host": options.host = try reader.value(for: argument)
            case "--port", "-p": options.port = try port(try reader.value(for: argument))
            case "--help", "-h": options.showHelp = true
            case "--version": options.showVersion = true
            default: throw UsageError(message: "unknown argument \"\(argument)\"")
            }
        }
        return options
    }

    /// The value of `--port`.
    static func port(_ text: String) throws(UsageError) -> Int {
        guard let port = Int(text), (0...65535).contains(port) else {
            throw UsageError(message: "--port must be a number from 0 to 65535, got \"\(text)\"")
        }
        return port
    }
}

/// Reads the configuration file (when there is one) and applies the overrides.
func loadConfiguration(_ options: ServerOptions) throws(ConfigError) -> HappyConfig {
    var config = HappyConfig()
    let path = options.configPath ?? (FileManager.default.fileExists(atPath: "config.json") ? "config.json" : nil)
    if let path {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError("cannot read the configuration file \(path): no such file or not readable")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError("\(path): not UTF-8 text")
        }
        config = try HappyConfig.parse(text, source: path)
        config.resolvePaths(relativeTo: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }
    if let host = options.host { config.host = host }
    if let port = options.port { config.port = port }
    try config.validate(source: path ?? "defaults")
    return config
}

/// Where the Redis connections go when `cluster.redis` is set: the fixed
/// address, or the primary the sentinels name, followed from then on.
func openRedisEndpoint(_ config: HappyConfig, logger: Logger) throws(StoreError) -> (any RedisEndpoint)? {
    switch RedisTarget(config.cluster.redis) {
    case nil:
        return nil
    case .direct(let url)?:
        return FixedRedisEndpoint(url)
    case .sentinel(let url)?:
        let endpoint = try SentinelRedisEndpoint(url) { from, to, why in
            logger.info("redis primary switched", ["from": from, "to": to, "why": why])
        }
        logger.info("redis primary found through sentinel", ["primary": endpoint.current.url.address,
                                                              "master": url.master])
        endpoint.start()
        return endpoint
    }
}

/// The store `config` asks for (Redis through `endpoint` in cluster mode).
func openStore(_ config: HappyConfig, endpoint: (any RedisEndpoint)?, logger: Logger) throws(StoreError) -> any RoomStore {
    if let endpoint {
        let store = try RedisRoomStore(endpoint: endpoint, nodeID: nodeID, historySize: config.limits.historySize,
                                       defaults: config.sceneRules.defaults, historyLimit: config.persistence.historyLimit,
                                       allowNonDurable: config.cluster.allowNonDurableRedis,
                                       replicaAcks: config.cluster.replicaAcks, webhooks: config.webhooks)
        let url = endpoint.current.url
        logger.info("store opened", ["redis": "\(url.host):\(url.port)/\(url.database)", "node": nodeID,
                                     "replicaAcks": "\(config.cluster.replicaAcks)"])
        return store
    }
    guard config.persistence.enabled else {
        // In memory, history is bounded by the resume window too: every room's
        // events stay for the life of the process.
        let historyLimit = min(config.persistence.historyLimit, config.limits.historySize)
        logger.info("persistence disabled: rooms are kept in memory only and lost on restart",
                    ["historyLimit": "\(historyLimit)"])
        return MemoryRoomStore(historySize: config.limits.historySize, historyLimit: historyLimit)
    }
    let started = Date()
    let store = try SQLiteRoomStore(directory: config.dataDir, historySize: config.limits.historySize,
                                    historyLimit: config.persistence.historyLimit, fsync: config.persistence.fsync,
                                    webhooks: config.webhooks)
    logger.info("store opened", ["path": store.path, "fsync": "\(config.persistence.fsync)",
                                 "seconds": String(format: "%.3f", Date().timeIntervalSince(started))])
    if store.deliveriesMovedToKeys > 0 {
        logger.info("webhook deliveries queued by an older version (by place in the list) now wait under their webhook's URL",
                    ["deliveries": "\(store.deliveriesMovedToKeys)"])
    }
    return store
}

/// This process's identity in a cluster: six random hex digits.
let nodeID = String(Identifiers.newEpoch().suffix(6))

/// The cluster bus, in cluster mode.
func makeClusterBus(endpoint: (any RedisEndpoint)?) -> ClusterBus? {
    endpoint.map { RedisClusterBus(endpoint: $0, nodeID: nodeID) }
}

/// The access-token checker, when `auth.secret` is set.
func makeTokenVerifier(_ config: HappyConfig) -> TokenVerifier? {
    HMACSHA256.verifier(for: config.auth)
}

extension HappyConfig {
    /// Makes relative file paths in the config relative to the config file's folder.
    mutating func resolvePaths(relativeTo base: String) {
        func resolve(_ path: String) -> String {
            guard !path.isEmpty, !path.hasPrefix("/") else { return path }
            return URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: base, isDirectory: true)).standardizedFileURL.path
        }
        webRoot = resolve(webRoot)
        dataDir = resolve(dataDir)
        tls.cert = resolve(tls.cert)
        tls.key = resolve(tls.key)
        backup.dir = resolve(backup.dir)
    }
}
