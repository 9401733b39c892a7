/// The server's HTTP routes in one table: what lws mounts, what answers each
/// method, the 404 and 405 answers, the query parameters each route knows
/// and whether pages on other origins may read it, all come from it.
struct HTTPRouter {
    enum PathPattern {
        /// Exactly this path.
        case exact(String)
        /// This path and anything below it (`/frame/` + view).
        case below(String)

        func matches(_ route: String) -> Bool {
            switch self {
            case .exact(let path): return route == path
            case .below(let prefix): return route.hasPrefix(prefix)
            }
        }

        /// The mount point lws hands it over at: the first path segment, so
        /// that a request for an unknown path beside the routes (`/api/x`)
        /// still gets the router's 404.
        var mountPoint: String {
            let path: String
            switch self {
            case .exact(let exact): path = exact
            case .below(let prefix): path = prefix
            }
            return "/" + (path.split(separator: "/").first.map(String.init) ?? "")
        }
    }

    struct Route {
        let methods: Set<String>
        let path: PathPattern
        /// The query parameters the route reads; any other is refused with a 400. Nil: not checked.
        let parameters: [String]?
        /// Pages on other origins may read its answers (CORS, as `auth.allowedOrigins` says).
        let readableFromOtherOrigins: Bool
        let handler: (HTTPRequest) -> Void
    }

    private(set) var routes: [Route] = []

    mutating func add(_ methods: Set<String>, _ path: PathPattern, parameters: [String]?,
                      readableFromOtherOrigins: Bool = false, _ handler: @escaping (HTTPRequest) -> Void) {
        routes.append(Route(methods: methods, path: path, parameters: parameters,
                            readableFromOtherOrigins: readableFromOtherOrigins, handler: handler))
    }

    /// Where lws must hand requests to the router (everything else is a file
    /// from `webRoot`), in the table's order.
    var mountPoints: [String] {
        var points: [String] = []
        for route in routes where !points.contains(route.path.mountPoint) { points.append(route.path.mountPoint) }
        return points
    }

    /// The route of the request, or the error to answer.
    func resolve(method: String, route: String) -> Result<Route, HTTPError> {
        var pathMatched = false
        for entry in routes where entry.path.matches(route) {
            if entry.methods.contains(method) { return .success(entry) }
            pathMatched = true
        }
        return .failure(pathMatched ? .methodNotAllowed(method, route) : .notFound(method, route))
    }
}
