import HappyCore

/// What every request's headers are checked for before it is routed, on the
/// WebSocket upgrade and the HTTP routes alike.
enum RequestScreen: Equatable {
    case pass
    /// The transport cut the request line at a CR or LF decoded from the target.
    case cutRequestLine
    /// A client behind a trusted proxy is at `limits.maxConnectionsPerAddress`.
    case overAddressCap
}

/// A request body as it arrives. Only this file writes it: `HTTPIntake`
/// collects it, then hands it to the route inside an `HTTPRequest`.
final class HTTPIncomingBody {
    /// The declared `Content-Length` of a body being waited for; 0 when none is.
    fileprivate(set) var expectedLength = 0
    fileprivate(set) var bytes: [UInt8] = []
}

/// HTTP requests from their headers to their route: screened, refused
/// early, their bodies collected within a deadline, then handed to the
/// router. WebSocket upgrades are screened here too.
final class HTTPIntake {
    /// Seconds a client has for its request headers (and handshake), and for a whole request body.
    static let requestTimeoutSeconds = 10.0
    static let cutRequestLineMessage =
        "the request target holds a line break (%0A or %0D); no name or value may contain control characters"

    /// The route table.
    let router: HTTPRouter
    private let responder: HTTPResponder
    private let addressLimits: AddressLimits
    private let access: AccessControl
    /// Which other origins may read the answers and files: also the file mount's.
    let crossOrigin: CurrentCrossOriginPolicy
    private let echoEnabled: Bool
    private let refusals: RefusalLog
    private let metrics: Metrics
    private let logger: Logger
    /// Whether requests carrying `X-Forwarded-For` from an untrusted peer were seen (and said so).
    private var warnedOfForwardedFor = false
    private let clock: ServiceClock
    /// Largest request body accepted (an intent is small).
    private(set) var maxRequestBody: Int

    init(router: HTTPRouter, responder: HTTPResponder, addressLimits: AddressLimits, access: AccessControl,
         config: HappyConfig, refusals: RefusalLog, metrics: Metrics, logger: Logger, clock: ServiceClock) {
        self.refusals = refusals
        self.router = router
        self.responder = responder
        self.addressLimits = addressLimits
        self.access = access
        crossOrigin = CurrentCrossOriginPolicy(CrossOriginPolicy(allowedOrigins: config.auth.allowedOrigins))
        echoEnabled = config.conformance.echo
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        maxRequestBody = max(config.limits.maxMessageBytes, 4096)
    }

    /// Applies a configuration read again (SIGHUP): origins and the body limit.
    func reconfigure(_ config: HappyConfig) {
        crossOrigin.policy = CrossOriginPolicy(allowedOrigins: config.auth.allowedOrigins)
        maxRequestBody = max(config.limits.maxMessageBytes, 4096)
    }

    /// Screens a request; returns the verdict and the client address
    /// (forwarded by a trusted proxy, else the peer).
    func screen(socket: SocketID, peer: String, forwardedFor: () -> String?,
                requestLineIsCut: Bool) -> (screen: RequestScreen, client: String) {
        let (client, admitted) = addressLimits.admitRequest(on: socket, peer: peer, forwardedFor: forwardedFor)
        if !warnedOfForwardedFor, !addressLimits.hasTrustedProxies, forwardedFor() != nil {
            // Behind a proxy on this host every client would look like loopback, and share one address's limits.
            warnedOfForwardedFor = true
            logger.warn("requests carry X-Forwarded-For but trustedProxies is empty: every client of that proxy "
                + "counts as the proxy's own address \(peer); list the proxy in trustedProxies", ["peer": peer])
        }
        if requestLineIsCut {
            metrics.countRefusal("requestLine")
            refusals.note("requestLine", ["peer": client])
            return (.cutRequestLine, client)
        }
        return (admitted ? .pass : .overAddressCap, client)
    }

    /// The HTTP answer to a WebSocket upgrade that may not go on, or nil.
    /// Only `/ws` (and `/echo` when enabled) upgrade, and browser pages
    /// only from `auth.allowedOrigins` when it is set.
    func upgradeRefusal(_ screen: RequestScreen, client: String, path: String,
                        origin: String?) -> (status: Int, message: String)? {
        switch screen {
        case .cutRequestLine: return (400, Self.cutRequestLineMessage)
        case .overAddressCap: return (429, "too many connections from \(client)")
        case .pass: break
        }
        guard path == "/ws" || (path == "/echo" && echoEnabled) else {
            metrics.countRefusal("path")
            return (404, "no WebSocket endpoint at \(path)")
        }
        guard access.allowsOrigin(origin) else {
            metrics.countRefusal("origin")
            refusals.note("origin", ["origin": origin ?? "", "peer": client])
            return (403, "origin not allowed")
        }
        return nil
    }

    /// A request's headers are in. `declaredBodyLength`: its Content-Length
    /// on a POST. Routes it, or waits for its body, or refuses it.
    func begin(_ exchange: HTTPExchange, screen: RequestScreen, declaredBodyLength: Int?) {
        if let refusal = refusal(of: exchange, screen) {
            // The body, if any, is not read, and after a cut request line the framing is unknown.
            return responder.respond(exchange, refusal, closeConnection: true)
        }
        if exchange.method == "POST", let declared = declaredBodyLength, declared > 0 {
            guard declared <= maxRequestBody else {
                return responder.respond(exchange, HTTPError(status: 413, .badMessage,
                                                             "request body over \(maxRequestBody) bytes"),
                                         closeConnection: true)
            }
            exchange.incomingBody.expectedLength = declared
            return  // the body follows
        }
        route(HTTPRequest(exchange, body: []))
    }

    /// The answer to a request refused before routing, or nil to route it.
    private func refusal(of exchange: HTTPExchange, _ screen: RequestScreen) -> HTTPError? {
        switch screen {
        case .cutRequestLine:
            return HTTPError(.invalidValue, Self.cutRequestLineMessage)
        case .overAddressCap:
            return HTTPError(.rateLimited, "too many connections from \(exchange.peerAddress)")
        case .pass:
            let names = exchange.query.filter { $0.value.unicodeScalars.contains(where: \.isControl) }.keys.sorted()
            guard let name = names.first else { return nil }
            return HTTPError(.invalidValue, "query argument \(name) holds a control character")
        }
    }

    /// A chunk of the request body; false drops the connection. The
    /// transport restarts its body timeout at every chunk, so a client
    /// sending a byte now and then would hold the connection for ever: the
    /// whole body must arrive within `requestTimeoutSeconds` of the headers.
    func body(_ exchange: HTTPExchange, _ chunk: UnsafeRawBufferPointer) -> Bool {
        let incoming = exchange.incomingBody
        guard incoming.bytes.count + chunk.count <= maxRequestBody else { return false }
        if clock.fresh() - exchange.startedAt > Self.requestTimeoutSeconds {
            metrics.countRefusal("slowBody")
            logger.info("dropping slow request body", ["peer": exchange.peerAddress, "path": exchange.route,
                                                      "received": "\(incoming.bytes.count)"])
            return false
        }
        incoming.bytes.append(contentsOf: chunk)
        return true
    }

    func bodyComplete(_ exchange: HTTPExchange) {
        guard exchange.response == nil else { return }
        let body = exchange.incomingBody.bytes
        exchange.incomingBody.bytes = []
        route(HTTPRequest(exchange, body: body))
    }

    /// Hands the complete request to its route's handler, after the checks the route table asks for.
    private func route(_ request: HTTPRequest) {
        let exchange = request.exchange
        let route: HTTPRouter.Route
        switch router.resolve(method: request.method, route: request.route) {
        case .failure(let error): return responder.respond(exchange, error)
        case .success(let resolved): route = resolved
        }
        if route.readableFromOtherOrigins {
            let headers = crossOrigin.policy.headers(origin: request.headers["origin"])
            responder.sendCrossOriginHeaders(headers, on: exchange)
        }
        if let known = route.parameters {
            do throws(HTTPError) {
                try QueryArgument.checkKnown(request.query, known, route: request.route)
            } catch {
                return responder.respond(exchange, error)
            }
        }
        route.handler(request)
    }
}

extension Unicode.Scalar {
    /// C0 and C1 control characters (line breaks, NUL, DEL and the like).
    var isControl: Bool { properties.generalCategory == .control }
}
