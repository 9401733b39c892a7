import Foundation
import HappyCore

/// What lws tells of an HTTP request before anything serves it.
struct HTTPRequestHead {
    var method: String
    var path: String
    var query: [String: String]
    /// Each `Content-Length` line, as sent.
    var contentLengths: [String]
    var transferEncoding: String?
}

/// The first look at every HTTP request, static files included, before lws
/// routes it: framing that two readers could take two ways is refused (a
/// proxy in front could see another request boundary than the server), each
/// client address keeps to its rate, and files stay inside `webRoot`.
final class HTTPGate {
    /// A refusal, answered at once and followed by the connection's close.
    struct Refusal: Equatable {
        var error: HTTPError
        var retryAfter: Int?

        var headers: [(name: String, value: String)] { retryAfter.map { [("Retry-After", "\($0)")] } ?? [] }
    }

    /// Where lws hands requests to the router; everything else is a file.
    private let mountPoints: [String]
    private let files: WebRootFiles
    private var limiter: HTTPRateLimiter
    private let metrics: Metrics
    private let refusals: RefusalLog
    private let clock: ServiceClock

    init(router: HTTPRouter, webRoot: String, limits: HappyConfig.LimitsSection, metrics: Metrics,
         refusals: RefusalLog, clock: ServiceClock) {
        mountPoints = router.mountPoints
        files = WebRootFiles(webRoot: webRoot)
        limiter = HTTPRateLimiter(limits: limits)
        self.metrics = metrics
        self.refusals = refusals
        self.clock = clock
    }

    /// Nil to let the request go on, else its refusal.
    func check(_ request: HTTPRequestHead, client: String) -> Refusal? {
        if let framing = Self.framingProblem(request) {
            metrics.countRefusal("framing")
            refusals.note("framing", ["peer": client, "problem": framing])
            return Refusal(error: HTTPError(.badMessage, framing))
        }
        let isRoute = mountPoints.contains { request.path == $0 || request.path.hasPrefix($0 + "/") }
        let cost = HTTPRateLimiter.cost(method: request.method, path: request.path, query: request.query, isRoute: isRoute)
        if let wait = limiter.take(cost, for: client, now: clock.now()) {
            metrics.countRefusal("httpRate")
            refusals.note("httpRate", ["peer": client, "path": request.path])
            return Refusal(error: HTTPError(.rateLimited,
                                            "too many requests from \(client); try again in \(wait) s"), retryAfter: wait)
        }
        if !isRoute && !files.allows(request.path) {
            metrics.countRefusal("outsideWebRoot")
            refusals.note("outsideWebRoot", ["peer": client, "path": request.path])
            return Refusal(error: .notFound(request.method, request.path))
        }
        return nil
    }

    /// Applies a configuration read again (SIGHUP): buckets start full at the new rate.
    func reconfigure(_ limits: HappyConfig.LimitsSection) {
        limiter = HTTPRateLimiter(limits: limits)
    }

    /// Forgets quiet addresses.
    func sweep(now: Double) {
        limiter.sweep(now: now)
    }

    /// Why the request's body cannot be told apart from what follows it, or nil.
    static func framingProblem(_ request: HTTPRequestHead) -> String? {
        if request.transferEncoding != nil {
            return "Transfer-Encoding is not accepted on requests: send the body with one Content-Length"
        }
        guard let first = request.contentLengths.first else { return nil }
        guard request.contentLengths.count == 1 else { return "Content-Length is given more than once" }
        let text = first.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let length = Int(text) else {
            return "Content-Length must be one decimal number of bytes"
        }
        if length > 0 && (request.method == "GET" || request.method == "HEAD") {
            return "a \(request.method) request carries no body (Content-Length \(length))"
        }
        return nil
    }
}
