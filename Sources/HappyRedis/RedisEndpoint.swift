import HappyCore

/// Where a node's Redis connections go: one fixed Redis, or the primary
/// Sentinel names at the moment. Connections made for an older `generation`
/// are closed and made again to `current`.
public protocol RedisEndpoint: AnyObject, Sendable {
    /// The Redis to connect to now, and its generation (it grows at each switch).
    var current: (url: RedisURL, generation: UInt64) { get }
    /// Which primary is followed, for `/healthz` and `/metrics`.
    var followed: FollowedPrimary { get }
    /// A connection saw the primary fail or refuse as a primary would not:
    /// check the topology now instead of at the next periodic check.
    func primaryLooksWrong(_ reason: String)
}

/// One Redis at a fixed address (`redis://`).
public final class FixedRedisEndpoint: RedisEndpoint {
    public let url: RedisURL

    public init(_ url: RedisURL) {
        self.url = url
    }

    public var current: (url: RedisURL, generation: UInt64) { (url, 0) }
    public var followed: FollowedPrimary { FollowedPrimary(address: url.address, source: "fixed") }
    public func primaryLooksWrong(_ reason: String) {}
}
