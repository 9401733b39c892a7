import HappyCore
import HappyRender

/// `GET /frame/{view}.png` and `GET /stream/{view}.png`: a room's views
/// rendered as PNG (ETag from epoch, seq, view, size and wave step; 304 for
/// a matching `If-None-Match`; the frame cache in front of the renderer),
/// and `multipart/x-mixed-replace` streams that push a new PNG whenever
/// what the view shows changes, and at `fps` while the wave moves.
final class FrameService {
    /// Where the shared art lives under `webRoot`.
    static let artPath = "assets/scene-art.json"
    /// Told the art's label texts once loaded (the commit coordinator stores labels).
    var onArtLoaded: ((DragonStatus) -> Void)?
    /// Renders and caches frames; nil until the art is loaded.
    private(set) var producer: FrameProducer?
    /// The open streams of `/stream/`.
    private(set) var streams: FrameStreams!

    private let config: HappyConfig
    private let directory: RoomDirectory
    private let history: RoomHistory
    private let lifecycle: ServerLifecycle
    private let responder: HTTPResponder
    private let metrics: Metrics
    private let logger: Logger
    private let clock: ServiceClock
    /// Validates the room and the caller (shared with the API routes and streams).
    let roomAndRole: (HTTPExchange) -> Result<(room: String, role: Role), HTTPError>

    init(config: HappyConfig, directory: RoomDirectory, history: RoomHistory, lifecycle: ServerLifecycle, responder: HTTPResponder,
         metrics: Metrics, logger: Logger, clock: ServiceClock, scratch: UnsafeMutablePointer<UInt8>, scratchBytes: Int,
         roomAndRole: @escaping (HTTPExchange) -> Result<(room: String, role: Role), HTTPError>) {
        self.config = config
        self.directory = directory
        self.history = history
        self.lifecycle = lifecycle
        self.responder = responder
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.roomAndRole = roomAndRole
        streams = FrameStreams(frames: self, config: config, directory: directory, lifecycle: lifecycle,
                               responder: responder, metrics: metrics, logger: logger, clock: clock,
                               scratch: scratch, scratchBytes: scratchBytes)
    }

    /// Loads the scene art from `<webRoot>/assets/scene-art.json` and starts the renderer.
    func load(webRoot: String, inbox: WakeInbox) throws(ServerError) {
        let path = webRoot + "/" + Self.artPath
        let art: SceneArt
        do {
            art = try SceneArt.load(path: path)
        } catch {
            throw ServerError("\(error.message) (the renderer's art; \"webRoot\" must contain \(Self.artPath))")
        }
        producer = FrameProducer(renderer: FrameRenderer(art: art, geometry: config.sceneRules.geometry),
                                 inbox: inbox, metrics: metrics)
        directory.dragonStatus = art.panel.status
        onArtLoaded?(art.panel.status)
    }

    func register(in router: inout HTTPRouter) {
        router.add(["GET"], .below("/frame/")) { [unowned self] in frameRequest($0) }
        router.add(["GET"], .below("/stream/")) { [unowned self] in streams.streamRequest($0) }
    }

    // MARK: frames

    private func frameRequest(_ exchange: HTTPExchange) {
        guard let request = frameQuery(exchange, kind: .frame) else { return }
        let name: String
        switch roomAndRole(exchange) {
        case .failure(let error): return responder.respond(exchange, error)
        case .success(let access): name = access.room
        }
        let ifNoneMatch = exchange.headers["if-none-match"]
        directory.touchedRuntime(for: name).whenReady { [weak self] runtime in
            guard let self, !exchange.isClosed else { return }
            guard let room = runtime.room, self.producer != nil else {
                return self.responder.respond(exchange, APIRoutes.unloaded(runtime))
            }
            guard let seq = request.seq else {
                let step = request.view.animates
                    ? request.phase ?? WaveClock.step(atMilliseconds: self.clock.wallMilliseconds()) : 0
                let key = FrameKey(room: name, epoch: room.epoch, seq: room.committed.seq, view: request.view,
                                   width: request.width, height: request.height, step: step)
                let state = FrameState(scene: room.committed.scene, dragonStatus: runtime.dragonStatus, step: step)
                return self.render(key, state, for: exchange, ifNoneMatch: ifNoneMatch, cacheControl: "no-cache")
            }
            // A past frame never changes: its own key, and a long Cache-Control.
            self.history.state(of: runtime, at: seq) { [weak self] result in
                guard let self, !exchange.isClosed else { return }
                switch result {
                case .failure(let error):
                    self.responder.respond(exchange, error)
                case .success(let past):
                    let step = request.view.animates ? request.phase ?? 0 : 0
                    let key = FrameKey(room: name, epoch: past.epoch, seq: past.seq, view: request.view,
                                       width: request.width, height: request.height, step: step, isPast: true)
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
        guard let producer else { return responder.respond(exchange, .unavailable("frames are not available")) }
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
                self.responder.respond(exchange, HTTPError(status: 500, code: "render_failed", "the frame could not be drawn"))
            }
        }
        if !accepted {
            metrics.renderRefusals += 1
            responder.respond(exchange, .unavailable("the renderer is busy; try again shortly"))
        }
    }

    /// The validated query of a frame or stream request, or nil after answering 4xx.
    func frameQuery(_ exchange: HTTPExchange, kind: FrameQuery.Kind) -> FrameQuery? {
        guard let producer else {
            responder.respond(exchange, .unavailable("frames are not available"))
            return nil
        }
        let parsed = FrameQuery.view(in: exchange.route, kind: kind).map { viewResult in
            viewResult.flatMap { view in
                FrameQuery.parse(view: view, kind: kind, query: exchange.query,
                                 defaultSize: producer.renderer.defaultSize(of: view))
            }
        }
        switch parsed {
        case .success(let query)?:
            return query
        case .failure(let refusal)?:
            responder.respond(exchange, HTTPError(status: refusal.status, code: refusal.code, refusal.message))
            return nil
        case nil:
            responder.respond(exchange, .notFound(exchange.method, exchange.route))
            return nil
        }
    }
}
