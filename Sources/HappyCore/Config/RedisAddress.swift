/// `redis://[:password@]host:port[/db]`, as `cluster.redis` takes it.
public struct RedisURL: Equatable, Sendable {
    /// The server's host name or address.
    public var host: String
    /// The server's port (6379 when the URL gives none).
    public var port: Int
    /// The database number (`/db`; 0 when the URL gives none).
    public var database: Int
    /// The password, or nil when the URL gives none.
    public var password: String?

    /// A URL from its parts.
    public init(host: String, port: Int, database: Int = 0, password: String? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.password = password
    }

    /// Parses `text`; nil when it is not a `redis://` URL or is malformed (an empty
    /// host, a port outside 1-65535, a database that is not a number 0 or more).
    public init?(_ text: String) {
        guard text.hasPrefix("redis://") else { return nil }
        var rest = Substring(text.dropFirst("redis://".count))
        let password = Self.takePassword(&rest)
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let db = rest[rest.index(after: slash)...]
            if !db.isEmpty {
                guard let n = Int(db), n >= 0 else { return nil }
                database = n
            }
            rest = rest[..<slash]
        }
        guard let (host, port) = Self.hostAndPort(rest, defaultPort: 6379) else { return nil }
        self.init(host: host, port: port, database: database, password: password)
    }

    /// `host:port`, for messages and metrics.
    public var address: String { "\(host):\(port)" }

    /// Removes `[:]password@` from the front of `rest`, returning the password.
    static func takePassword(_ rest: inout Substring) -> String? {
        guard let at = rest.lastIndex(of: "@") else { return nil }
        var credentials = rest[..<at]
        if credentials.hasPrefix(":") { credentials = credentials.dropFirst() }
        rest = rest[rest.index(after: at)...]
        return String(credentials)
    }

    /// `host[:port]`; nil when the host is empty or the port is not 1-65535.
    static func hostAndPort(_ text: Substring, defaultPort: Int) -> (String, Int)? {
        var rest = text
        var port = defaultPort
        if let colon = rest.lastIndex(of: ":") {
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else { return nil }
            port = p
            rest = rest[..<colon]
        }
        guard !rest.isEmpty else { return nil }
        return (String(rest), port)
    }
}

/// `redis+sentinel://[:password@]host[:port][,host[:port]...]/master[/db]`:
/// the sentinels (port 26379 unless given) that know the primary named
/// `master`. The password and database are the primary's; the sentinels are
/// asked without a password.
public struct RedisSentinelURL: Equatable, Sendable {
    /// The sentinels to ask, in the order given.
    public var sentinels: [(host: String, port: Int)]
    /// The name under which the sentinels know the primary.
    public var master: String
    /// The primary's database number (0 when the URL gives none).
    public var database: Int
    /// The primary's password, or nil when the URL gives none.
    public var password: String?

    /// The port of a sentinel listed without one.
    public static let defaultPort = 26379

    /// Parses `text`; nil when it is not a `redis+sentinel://` URL, lists no
    /// sentinel, or has a malformed host, port, master name or database.
    public init?(_ text: String) {
        guard text.hasPrefix("redis+sentinel://") else { return nil }
        var rest = Substring(text.dropFirst("redis+sentinel://".count))
        password = RedisURL.takePassword(&rest)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let path = rest[rest.index(after: slash)...].split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(path.count), !path[0].isEmpty,
              path[0].allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else { return nil }
        master = String(path[0])
        database = 0
        if path.count == 2 {
            guard let n = Int(path[1]), n >= 0 else { return nil }
            database = n
        }
        var sentinels: [(host: String, port: Int)] = []
        for entry in rest[..<slash].split(separator: ",", omittingEmptySubsequences: false) {
            guard let (host, port) = RedisURL.hostAndPort(entry, defaultPort: Self.defaultPort) else { return nil }
            sentinels.append((host, port))
        }
        guard !sentinels.isEmpty else { return nil }
        self.sentinels = sentinels
    }

    /// The primary at `host:port`, with this URL's password and database.
    public func primary(host: String, port: Int) -> RedisURL {
        RedisURL(host: host, port: port, database: database, password: password)
    }

    /// Same master, database, password and sentinels (in order); written out
    /// because the sentinel tuples are not `Equatable`.
    public static func == (a: RedisSentinelURL, b: RedisSentinelURL) -> Bool {
        a.master == b.master && a.database == b.database && a.password == b.password
            && a.sentinels.map { "\($0.host):\($0.port)" } == b.sentinels.map { "\($0.host):\($0.port)" }
    }
}

/// What `cluster.redis` names: one Redis, or a primary found through Sentinel.
public enum RedisTarget: Equatable, Sendable {
    /// One Redis at a fixed address.
    case direct(RedisURL)
    /// A primary found (and followed across failovers) through Sentinel.
    case sentinel(RedisSentinelURL)

    /// Parses `cluster.redis`; nil when `text` is neither form.
    public init?(_ text: String) {
        if let url = RedisURL(text) {
            self = .direct(url)
        } else if let url = RedisSentinelURL(text) {
            self = .sentinel(url)
        } else {
            return nil
        }
    }

    /// Whether the primary is found through Sentinel (then `cluster.minReplicaAcks` defaults to 1).
    public var usesSentinel: Bool {
        if case .sentinel = self { return true }
        return false
    }
}
