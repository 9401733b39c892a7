/// Which pages on other origins may read the server's read-only answers and
/// import its client module (CORS): any page (`*`) while `auth.allowedOrigins`
/// is empty, else only those listed, each answered with its own `Origin`
/// (and `Vary: Origin`, so that no cache hands one origin's answer to another).
/// Nothing here is a credential: tokens travel in the query or a header the
/// page sets, never in cookies, so no `Access-Control-Allow-Credentials`.
struct CrossOriginPolicy: Sendable {
    /// Static files a page elsewhere loads: `/js/happy-client.js` and its neighbours.
    static let sharedFilePrefix = "/js/"

    let allowedOrigins: [String]

    /// The headers for an answer to a request from `origin` (its `Origin` header, if any).
    func headers(origin: String?) -> [(name: String, value: String)] {
        guard !allowedOrigins.isEmpty else { return [("Access-Control-Allow-Origin", "*")] }
        guard let origin, allowedOrigins.contains(origin) else { return [("Vary", "Origin")] }
        return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
    }

    /// The headers for a static file at `path`: only those under `sharedFilePrefix` are shared.
    func fileHeaders(path: String, origin: String?) -> [(name: String, value: String)] {
        path.hasPrefix(Self.sharedFilePrefix) ? headers(origin: origin) : []
    }
}

/// The policy as it stands, shared by the routes and the file mount's
/// headers, and replaced when the configuration is read again. Used on the
/// service thread only (lws asks for file headers there too).
final class CurrentCrossOriginPolicy: @unchecked Sendable {
    var policy: CrossOriginPolicy

    init(_ policy: CrossOriginPolicy) {
        self.policy = policy
    }
}
