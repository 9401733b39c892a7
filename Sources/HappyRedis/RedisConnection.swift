import CHiredis
import Foundation
import HappyCore

/// A Redis reply.
public enum RedisValue: Equatable, Sendable {
    case status(String)
    case error(String)
    case integer(Int64)
    case bulk([UInt8])
    case null
    case array([RedisValue])

    public var text: String? {
        switch self {
        case .status(let s): return s
        case .bulk(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .integer(let i): return String(i)
        default: return nil
        }
    }

    public var integer: Int64? {
        switch self {
        case .integer(let i): return i
        case .bulk: return text.flatMap { Int64($0) }
        default: return nil
        }
    }

    public var elements: [RedisValue] {
        if case .array(let list) = self { return list }
        return []
    }
}

/// One blocking hiredis connection, used from one thread at a time.
/// Commands are binary-safe argument lists. It connects to its endpoint's
/// current Redis, and again when the endpoint moves to another primary.
final class RedisConnection {
    let endpoint: RedisEndpoint
    /// The Redis connected to (or last tried).
    private(set) var url: RedisURL
    let timeout: Double
    private(set) var context: UnsafeMutablePointer<redisContext>?
    /// The endpoint's generation this connection was made for.
    private var generation: UInt64 = 0
    /// Counts the connections made: a command whose effect must be checked
    /// on the same connection (`WAIT`) sees whether it changed meanwhile.
    private(set) var serial: UInt64 = 0

    init(endpoint: RedisEndpoint, timeout: Double = 2, connectNow: Bool = true) throws(StoreError) {
        self.endpoint = endpoint
        url = endpoint.current.url
        self.timeout = timeout
        if connectNow { try connect() }
    }

    convenience init(url: RedisURL, timeout: Double = 2) throws(StoreError) {
        try self.init(endpoint: FixedRedisEndpoint(url), timeout: timeout)
    }

    deinit { close() }

    var isConnected: Bool { context != nil }
    var fileDescriptor: Int32 { context?.pointee.fd ?? -1 }
    /// Connected to a primary the endpoint no longer names.
    var isStale: Bool { context != nil && endpoint.current.generation != generation }

    func connect() throws(StoreError) {
        close()
        (url, generation) = endpoint.current
        serial += 1
        let seconds = Int(timeout)
        let tv = timeval(tv_sec: seconds, tv_usec: Int((timeout - Double(seconds)) * 1_000_000))
        guard let context = redisConnectWithTimeout(url.host, Int32(url.port), tv) else {
            throw StoreError(.unreachable, "cannot reach Redis at \(url.host):\(url.port): out of memory")
        }
        if context.pointee.err != 0 {
            let message = Self.errorText(context)
            redisFree(context)
            endpoint.primaryLooksWrong("cannot reach \(url.address): \(message)")
            throw StoreError(.unreachable, "cannot reach Redis at \(url.host):\(url.port): \(message)")
        }
        redisSetTimeout(context, tv)
        redisEnableKeepAlive(context)
        self.context = context
        if let password = url.password, !password.isEmpty {
            if case .error(let message) = try command(["AUTH", password]) {
                close()
                throw StoreError(.setup, "Redis refused the password of cluster.redis: \(message)")
            }
        }
        if url.database != 0, case .error(let message) = try command(["SELECT", String(url.database)]) {
            close()
            throw StoreError(.setup, "Redis refused database \(url.database): \(message)")
        }
    }

    func close() {
        if let context { redisFree(context) }
        context = nil
    }

    /// Sends one command and waits for its reply. A network failure closes
    /// the connection (the next call reconnects) and throws.
    @discardableResult
    func command(_ arguments: [String]) throws(StoreError) -> RedisValue {
        try command(bytes: arguments.map { Array($0.utf8) })
    }

    /// A connection found broken (Redis restarted since the last command) is
    /// made again and the command sent once more; callers whose command must
    /// not run twice make it idempotent (the commit script checks a token).
    func command(bytes arguments: [[UInt8]]) throws(StoreError) -> RedisValue {
        do {
            return try attempt(arguments)
        } catch {
            try connect()
            return try attempt(arguments)
        }
    }

    /// Sends one command on the connection made as `serial`, never on a new
    /// one, since its reply speaks of what that connection did (`WAIT`).
    func commandOnSameConnection(_ arguments: [String], serial expected: UInt64) throws(StoreError) -> RedisValue {
        guard context != nil, !isStale, serial == expected else {
            throw StoreError(.unreachable, "the connection to Redis at \(url.address) was lost or moved meanwhile")
        }
        return try attempt(arguments.map { Array($0.utf8) })
    }

    private func attempt(_ arguments: [[UInt8]]) throws(StoreError) -> RedisValue {
        if context == nil || isStale { try connect() }
        guard let context else { throw StoreError(.unreachable, "not connected to Redis") }
        let reply = Self.withArgv(arguments) { count, argv, lengths in
            redisCommandArgv(context, count, argv, lengths)
        }
        guard let reply else {
            let message = Self.errorText(context)
            close()
            throw StoreError(.unreachable, "Redis at \(url.host):\(url.port): \(message)")
        }
        defer { freeReplyObject(reply) }
        return Self.value(reply.assumingMemoryBound(to: redisReply.self))
    }

    /// What became of a command sent once, for commands whose effect must be
    /// known exactly (commits).
    enum SendOutcome {
        case reply(RedisValue)
        /// It certainly did not reach Redis: no connection, or the write failed
        /// before the whole command was handed to the kernel (Redis never runs
        /// a partial command). `connecting`: no connection could be made.
        case notSent(StoreError, connecting: Bool)
        /// The whole command left, but no reply came (timeout, reset): Redis may
        /// have run it, or may run it later (a paused Redis reads it on resume).
        case unknown(StoreError)
    }

    /// Sends one command once, without retrying, and says whether it may have run.
    func send(bytes arguments: [[UInt8]]) -> SendOutcome {
        if context == nil || isStale {
            do { try connect() } catch { return .notSent(error, connecting: true) }
        }
        guard let context else { return .notSent(StoreError(.unreachable, "not connected to Redis"), connecting: true) }
        let appended = Self.withArgv(arguments) { count, argv, lengths in
            redisAppendCommandArgv(context, count, argv, lengths)
        }
        guard appended == REDIS_OK else {
            let message = Self.errorText(context)
            close()
            return .notSent(StoreError(.unreachable, "Redis at \(url.host):\(url.port): \(message)"), connecting: false)
        }
        var done: Int32 = 0
        while done == 0 {
            if redisBufferWrite(context, &done) != REDIS_OK {
                let message = Self.errorText(context)
                close()
                return .notSent(StoreError(.unreachable, "Redis at \(url.host):\(url.port): \(message)"), connecting: false)
            }
        }
        var reply: UnsafeMutableRawPointer?
        guard redisGetReply(context, &reply) == REDIS_OK, let reply else {
            let message = Self.errorText(context)
            close()
            endpoint.primaryLooksWrong("no reply from \(url.address) within \(timeout) s")
            return .unknown(StoreError(.unreachable, "no reply from Redis at \(url.host):\(url.port) within "
                + "\(timeout) s: \(message.isEmpty ? "connection lost" : message)"))
        }
        defer { freeReplyObject(reply) }
        return .reply(Self.value(reply.assumingMemoryBound(to: redisReply.self)))
    }

    /// Queues a command without waiting (subscriptions).
    func append(_ arguments: [String]) -> Bool {
        guard let context else { return false }
        let bytes = arguments.map { Array($0.utf8) }
        return Self.withArgv(bytes) { count, argv, lengths in
            redisAppendCommandArgv(context, count, argv, lengths)
        } == REDIS_OK
    }

    /// Writes queued commands out.
    func flush() -> Bool {
        guard let context else { return false }
        var done: Int32 = 0
        while done == 0 {
            if redisBufferWrite(context, &done) != REDIS_OK { return false }
        }
        return true
    }

    /// Reads what the socket has and returns the complete replies in it.
    func readAvailable() -> [RedisValue]? {
        guard let context, redisBufferRead(context) == REDIS_OK else { return nil }
        var replies: [RedisValue] = []
        while true {
            var reply: UnsafeMutableRawPointer?
            guard redisGetReplyFromReader(context, &reply) == REDIS_OK else { return nil }
            guard let reply else { break }
            replies.append(Self.value(reply.assumingMemoryBound(to: redisReply.self)))
            freeReplyObject(reply)
        }
        return replies
    }

    // MARK: C plumbing

    private static func withArgv<R>(_ arguments: [[UInt8]],
                                    _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>] = []
        defer { pointers.forEach { $0.deallocate() } }
        var argv: [UnsafePointer<CChar>?] = []
        var lengths: [Int] = []
        for argument in arguments {
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, argument.count))
            argument.withUnsafeBytes { raw in
                if let base = raw.baseAddress { UnsafeMutableRawPointer(pointer).copyMemory(from: base, byteCount: argument.count) }
            }
            pointers.append(pointer)
            argv.append(UnsafePointer(pointer))
            lengths.append(argument.count)
        }
        return argv.withUnsafeMutableBufferPointer { argvBuffer in
            lengths.withUnsafeBufferPointer { lengthBuffer in
                body(Int32(arguments.count), argvBuffer.baseAddress!, lengthBuffer.baseAddress!)
            }
        }
    }

    private static func value(_ reply: UnsafeMutablePointer<redisReply>) -> RedisValue {
        let r = reply.pointee
        switch r.type {
        case Int32(happy_redis_reply_string):
            return .bulk(Array(UnsafeRawBufferPointer(start: r.str, count: Int(r.len))))
        case Int32(happy_redis_reply_status):
            return .status(String(decoding: UnsafeRawBufferPointer(start: r.str, count: Int(r.len)), as: UTF8.self))
        case Int32(happy_redis_reply_error):
            return .error(String(decoding: UnsafeRawBufferPointer(start: r.str, count: Int(r.len)), as: UTF8.self))
        case Int32(happy_redis_reply_integer):
            return .integer(r.integer)
        case Int32(happy_redis_reply_array):
            return .array((0..<Int(r.elements)).compactMap { index in r.element[index].map { value($0) } })
        default:
            return .null
        }
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }
}

/// A connection for reads that may come from any thread, one at a time (its
/// lock), beside a connection busy with writes. It connects on first use and
/// runs read-only Lua scripts, loaded once and then called by their SHA.
final class RedisReadConnection: @unchecked Sendable {
    let endpoint: RedisEndpoint
    private let lock = NSLock()
    private var connection: RedisConnection?
    /// Script text → its SHA in Redis.
    private var loaded: [String: String] = [:]

    init(endpoint: RedisEndpoint) {
        self.endpoint = endpoint
    }

    /// Runs `script`; then, with `replicaAcks` above 0, has that many replicas
    /// confirm that what it read is theirs too (see `RedisReplication`).
    func evaluate(_ script: String, keys: [String], arguments: [String],
                  replicaAcks: Int = 0) throws(StoreError) -> RedisValue {
        lock.lock()
        defer { lock.unlock() }
        let connection: RedisConnection
        if let open = self.connection {
            connection = open
        } else {
            connection = try RedisConnection(endpoint: endpoint)
            self.connection = connection
        }
        let url = connection.url
        // A Redis restarted since the script was loaded has forgotten it: load it again, once.
        for _ in 0..<2 {
            let sha: String
            if let known = loaded[script] {
                sha = known
            } else {
                let reply = try connection.command(["SCRIPT", "LOAD", script])
                guard case .bulk = reply, let text = reply.text else {
                    throw StoreError(.io, "Redis at \(url.host):\(url.port) did not load a read script: \(reply)")
                }
                loaded[script] = text
                sha = text
            }
            let reply = try connection.command(["EVALSHA", sha, String(keys.count)] + keys + arguments)
            let serial = connection.serial
            guard case .error(let message) = reply else {
                try RedisReplication.confirm(on: connection, serial: serial, replicas: replicaAcks, fence: true)
                return reply
            }
            guard message.hasPrefix("NOSCRIPT") else {
                throw StoreError(.io, "Redis at \(url.host):\(url.port) refused a read: \(message)")
            }
            loaded[script] = nil
        }
        throw StoreError(.io, "Redis at \(url.host):\(url.port) keeps forgetting a read script")
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        connection?.close()
        connection = nil
    }
}
