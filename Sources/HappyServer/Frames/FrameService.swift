import HappyCore
import HappyRender

/// `GET /frame/{view}.png` and `GET /stream/{view}.png`: a room's views
/// rendered as PNG (ETag from epoch, seq, view, size and wave step; 304 for
/// a matching `If-None-Match`; the frame cache in front of the renderer),
/// and streams accepted and handed to `FrameStreams`.
final class FrameService {
    /// Where the shared art lives under `webRoot`.
    static let artPath = "assets/scene-art.json"

    private let producer: FrameProducer
    private let streams: FrameStreams
    private var config: HappyConfig

    /// Applies a configuration read again (SIGHUP) to what comes next.
    func reconfigure(_ config: HappyConfig) {
        self.config = config
    }
    private let directory: RoomDirectory
    private let history: RoomHistory
    private let roomAccess: RoomAccess
    private let lifecycle: ServerLifecycle
    private let responder: HTTPResponder
    private let metrics: Metrics
    private let logger: Logger
    private let clock: ServiceClock

    init(producer: FrameProducer, streams: FrameStreams, config: HappyConfig, directory: RoomDirectory,
         history: RoomHistory, roomAccess: RoomAccess, lifecycle: ServerLifecycle, responder: HTTPResponder,
         metrics: Metrics, logger: Logger, clock: ServiceClock) {
        self.producer = producer
        self.streams = streams
        self.config = config
        self.directory = directory
        self.history = history
        self.roomAccess = roomAccess
        self.lifecycle = lifecycle
        self.responder = responder
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }

    /// Loads the scene art from `<webRoot>/assets/scene-art.json`.
    static func loadArt(webRoot: String) throws(ServerError) -> SceneArt {
        let path = webRoot + "/" + artPath
        do {
            return try SceneArt.load(path: path)
        } catch {
            throw ServerError("\(error.message) (the renderer's art; \"webRoot\" must contain \(artPath))")
        }
    }

    func register(in router: inout HTTPRouter) {
        // A frame may be drawn into a canvas elsewhere; a stream is for an <img>, which needs no CORS.
        router.add(["GET"], .below("/frame/"), parameters: FrameQuery.parameters(of: .frame),
                   readableFromOtherOrigins: true) { [self] in frameRequest($0) }
        router.add(["GET"], .below("/stream/"), parameters: FrameQuery.parameters(of: .stream)) { [self] in
            streamRequest($0)
        }
    }

    /// The validated query and room of a frame or stream request, or nil after answering its error.
    private func checked(_ request: HTTPRequest, kind: FrameQuery.Kind) -> (FrameQuery, room: String)? {
        let parsed = FrameQuery.parse(request, kind: kind, defaultSize: producer.renderer.defaultSize(of:))
            .flatMap { query in roomAccess.check(request).map { (query, $0.room) } }
        switch parsed {
        case .failure(let error):
            responder.respond(request.exchange, error)
            return nil
        case .success(let checked):
            return checked
        }
    }

    // MARK: streams

    private func streamRequest(_ request: HTTPRequest) {
        guard let (query, name) = checked(request, kind: .stream) else { return }
        let exchange = request.exchange
        if lifecycle.isShuttingDown { return responder.respond(exchange, .unavailable("server shutting down")) }
        guard streams.open.count < config.limits.maxClients else {
            return responder.respond(exchange, .unavailable("too many frame streams: \(config.limits.maxClients) open"))
        }
        let perAddress = config.limits.streamsPerAddress
        guard streams.openCount(from: request.peerAddress) < perAddress else {
            return responder.respond(exchange, HTTPError(.rateLimited,
                "too many frame streams from \(request.peerAddress): \(perAddress) open (limits.streamsPerAddress)"),
                headers: [("Retry-After", "5")])
        }
        directory.touchedRuntime(for: name).whenReady { [self] runtime in
            guard !exchange.isClosed else { return }
            guard runtime.room != nil else { return responder.respond(exchange, .unloaded(runtime)) }
            guard !lifecycle.isShuttingDown else { return responder.respond(exchange, .unavailable("server shutting down")) }
            streams.open(exchange, in: runtime, query)
        }
    }

    // MARK: frames

    private func frameRequest(_ request: HTTPRequest) {
        guard let (query, name) = checked(request, kind: .frame) else { return }
        let exchange = request.exchange
        let ifNoneMatch = request.headers["if-none-match"]
        directory.touchedRuntime(for: name).whenReady { [weak self] runtime in
            guard let self, !exchange.isClosed else { return }
            guard let room = runtime.room else { return self.responder.respond(exchange, .unloaded(runtime)) }
            guard let seq = query.seq else {
                let step = query.view.animates
                    ? query.phase ?? WaveClock.step(atMilliseconds: self.clock.wallMilliseconds()) : 0
                let key = FrameKey(room: name, epoch: room.epoch, seq: room.committed.seq, view: query.view,
                                   width: query.width, height: query.height, step: step)
                let state = FrameState(scene: room.committed.scene, dragonStatus: room.dragonStatus, step: step)
                return self.render(key, state, for: exchange, ifNoneMatch: ifNoneMatch, cacheControl: "no-cache")
            }
            // A past frame never changes: its own key, and a long Cache-Control.
            self.history.state(of: runtime, at: seq) { [weak self] result in
                guard let self, !exchange.isClosed else { return }
                switch result {
                case .failure(let error):
                    self.responder.respond(exchange, error)
                case .success(let past):
                    let step = query.view.animates ? query.phase ?? 0 : 0
                    let key = FrameKey(room: name, epoch: past.epoch, seq: past.seq, view: query.view,
                                       width: query.width, height: query.height, step: step, isPast: true)
                    let state = FrameState(scene: past.scene, dragonStatus: past.dragonStatus, step: step)
                    self.render(key, state, for: exchange, ifNoneMatch: ifNoneMatch,
                                cacheControl: "public, max-age=31536000, immutable")
                }
            }
        }
    }

    /// Answers with the frame for `key` (304 when `ifNoneMatch` names it), from the cache or rendered.
    private func render(_ key: FrameKey, _ state: FrameState, for exchange: HTTPExchange, ifNoneMatch: String?,
                        cacheControl: String) {
        let etag = key.etag
        if let ifNoneMatch, EntityTag.header(ifNoneMatch, matches: etag) {
            var response = HTTPResponse(status: 304, contentType: "image/png", body: [], headers: [("ETag", etag)])
            response.cacheControl = cacheControl
            return responder.respond(exchange, response)
        }
        let accepted = producer.frame(key, state: state) { [weak self] result in
            guard let self, !exchange.isClosed else { return }
            switch result {
            case .success(let png):
                var response = HTTPResponse(status: 200, contentType: "image/png", body: png, headers: [("ETag", etag)])
                response.cacheControl = cacheControl
                self.responder.respond(exchange, response)
            case .failure(let error):
                self.logger.error("render failed", ["view": key.view.rawValue, "error": error.message])
                self.responder.respond(exchange, HTTPError(.renderFailed, "the frame could not be drawn"))
            }
        }
        if !accepted {
            metrics.renderRefusals += 1
            responder.respond(exchange, .unavailable("the renderer is busy; try again shortly"))
        }
    }
}
