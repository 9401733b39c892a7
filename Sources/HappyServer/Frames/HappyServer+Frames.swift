import CWebSockets
import HappyCore
import HappyRender

/// `GET /frame/{view}.png`: a room's view rendered as PNG, with an ETag
/// from (epoch, seq, view, size, wave step), 304 for a matching
/// `If-None-Match`, and the frame cache in front of the renderer.
extension HappyServer {
    /// Where the shared art lives under `webRoot`.
    static let artPath = "assets/scene-art.json"

    /// Loads the scene art from `<webRoot>/assets/scene-art.json`.
    func makeFrameRenderer(webRoot: String) throws(ServerError) -> FrameRenderer {
        let path = webRoot + "/" + Self.artPath
        do {
            return FrameRenderer(art: try SceneArt.load(path: path), geometry: rules.geometry)
        } catch {
            throw ServerError("\(error.message) (the renderer's art; \"webRoot\" must contain \(Self.artPath))")
        }
    }

    func frameRequest(_ exchange: HTTPExchange) {
        guard let request = frameQuery(exchange, kind: .frame) else { return }
        guard let name = roomArgument(exchange), httpAccess(exchange, room: name) != nil else { return }
        // Headers are only readable while lws is in this callback.
        let ifNoneMatch = LWSHeaders.value(exchange.wsi, WSI_TOKEN_HTTP_IF_NONE_MATCH)
        let runtime = runtime(for: name)
        runtime.idleSince = SystemTime.monotonicSeconds()
        runtime.whenReady { [weak self] runtime in
            guard let self, !exchange.isClosed else { return }
            guard let room = runtime.room, let frames = self.frames else {
                return self.respondUnloaded(exchange, runtime)
            }
            let step = request.view.animates
                ? request.phase ?? WaveClock.step(atMilliseconds: SystemTime.wallMilliseconds()) : 0
            let key = FrameKey(room: name, epoch: room.epoch, seq: room.committed.seq, view: request.view,
                               width: request.width, height: request.height, step: step)
            let etag = key.etag
            if let ifNoneMatch, EntityTag.header(ifNoneMatch, matches: etag) {
                var response = HTTPResponse(status: 304, contentType: "image/png", body: [], headers: [("ETag", etag)])
                response.cacheControl = "no-cache"
                return self.respond(exchange, response)
            }
            let state = FrameState(scene: room.committed.scene, dragonStatus: runtime.dragonStatus, step: step)
            let accepted = frames.frame(key, state: state) { [weak self] result in
                guard let self, !exchange.isClosed else { return }
                switch result {
                case .success(let png):
                    var response = HTTPResponse(status: 200, contentType: "image/png", body: png,
                                                headers: [("ETag", etag)])
                    response.cacheControl = "no-cache"
                    self.respond(exchange, response)
                case .failure(let error):
                    self.logger.error("render failed", ["view": key.view.rawValue, "error": error.message])
                    self.respondError(exchange, status: 500, code: "render_failed", "the frame could not be drawn")
                }
            }
            if !accepted {
                self.metrics.renderRefusals += 1
                self.respondError(exchange, status: 503, code: ErrorCode.unavailable.rawValue,
                                  "the renderer is busy; try again shortly")
            }
        }
    }

    /// The validated query of a frame or stream request, or nil after answering 4xx.
    func frameQuery(_ exchange: HTTPExchange, kind: FrameQuery.Kind) -> FrameQuery? {
        guard let frames else {
            respondError(exchange, status: 503, code: ErrorCode.unavailable.rawValue, "frames are not available")
            return nil
        }
        let parsed = FrameQuery.view(in: exchange.route, kind: kind).map { viewResult in
            viewResult.flatMap { view in
                FrameQuery.parse(view: view, kind: kind, query: exchange.query,
                                 defaultSize: frames.renderer.defaultSize(of: view))
            }
        }
        switch parsed {
        case .success(let query)?:
            return query
        case .failure(let refusal)?:
            respondError(exchange, status: refusal.status, code: refusal.code, refusal.message)
            return nil
        case nil:
            respondError(exchange, status: 404, code: "not_found", "no route \(exchange.method) \(exchange.route)")
            return nil
        }
    }

    func respondUnloaded(_ exchange: HTTPExchange, _ runtime: RoomRuntime) {
        respond(exchange, status: 503, json: ServerMessageEncoder.error(WireError(
            .unavailable, "room \(runtime.name) could not be loaded: \(runtime.loadError?.message ?? "")")))
    }

    // MARK: the dragon status label

    /// The label's text for a room just loaded: from the newest dragon event in its history.
    func recoverDragonStatus(_ runtime: RoomRuntime, history: [StoredEvent]) {
        guard let status = frames?.renderer.art.panel.status else { return }
        runtime.dragonStatus = status.recover(from: history.lazy.map(\.json))
    }

    /// Follows events recorded by another node (cluster catch-up), keeping
    /// the label when none of them is a dragon event.
    func followDragonStatus(_ runtime: RoomRuntime, events: [StoredEvent]) {
        guard let status = frames?.renderer.art.panel.status else { return }
        let text = status.recover(from: events.lazy.map(\.json))
        if text != status.initial || events.contains(where: { Self.isReset($0.json) }) { runtime.dragonStatus = text }
    }

    private static func isReset(_ json: [UInt8]) -> Bool {
        (try? JSONParser.parse(json, maxDepth: 64))?["name"]?.stringValue == EventName.didReset.rawValue
    }

    /// Follows a recorded event (called from `deliver`, in seq order).
    func noteDragonStatus(_ event: RoomEvent, in runtime: RoomRuntime) {
        guard let status = frames?.renderer.art.panel.status,
              let text = status.after(event.name, dragon: event.state.dragon) else { return }
        runtime.dragonStatus = text
    }
}
