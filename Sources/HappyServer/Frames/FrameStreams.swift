import HappyCore
import HappyRender

/// The frame streams: `GET /stream/{view}.png` answered with a
/// `multipart/x-mixed-replace` response that gets a new PNG part whenever
/// what its view shows changes, and at `fps` while the wave moves. One
/// shared timer ticks every animated stream; frames come from the frame
/// service's cache and renderer.
final class FrameStreams {
    /// Kernel send buffer of a stream connection: the same as a WebSocket's.
    static let socketSendBufferBytes = longLivedSendBufferBytes

    /// The open streams.
    private(set) var open: [FrameStream] = []
    /// Arms the one shared wave timer (set by the transport).
    var scheduleTick: ((_ delaySeconds: Double) -> Void)?
    private var tickDue: Double?

    private unowned let frames: FrameService
    private let config: HappyConfig
    private let directory: RoomDirectory
    private let lifecycle: ServerLifecycle
    private let responder: HTTPResponder
    private let metrics: Metrics
    private let logger: Logger
    private let clock: ServiceClock
    private let scratch: UnsafeMutablePointer<UInt8>
    private let scratchBytes: Int

    init(frames: FrameService, config: HappyConfig, directory: RoomDirectory, lifecycle: ServerLifecycle,
         responder: HTTPResponder, metrics: Metrics, logger: Logger, clock: ServiceClock,
         scratch: UnsafeMutablePointer<UInt8>, scratchBytes: Int) {
        self.frames = frames
        self.config = config
        self.directory = directory
        self.lifecycle = lifecycle
        self.responder = responder
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.scratch = scratch
        self.scratchBytes = scratchBytes
    }

    func streamRequest(_ exchange: HTTPExchange) {
        guard let request = frames.frameQuery(exchange, kind: .stream) else { return }
        let name: String
        switch frames.roomAndRole(exchange) {
        case .failure(let error): return responder.respond(exchange, error)
        case .success(let access): name = access.room
        }
        if lifecycle.isShuttingDown { return responder.respond(exchange, .unavailable("server shutting down")) }
        guard open.count < config.limits.maxClients else {
            return responder.respond(exchange, .unavailable("too many frame streams: \(config.limits.maxClients) open"))
        }
        directory.touchedRuntime(for: name).whenReady { [weak self] runtime in
            guard let self, !exchange.isClosed else { return }
            guard runtime.room != nil else { return self.responder.respond(exchange, APIRoutes.unloaded(runtime)) }
            guard !self.lifecycle.isShuttingDown else {
                return self.responder.respond(exchange, .unavailable("server shutting down"))
            }
            self.openStream(exchange, runtime, request)
        }
    }

    private func openStream(_ exchange: HTTPExchange, _ runtime: RoomRuntime, _ request: FrameQuery) {
        let stream = FrameStream(exchange: exchange, runtime: runtime, query: request, now: clock.fresh())
        exchange.streamWriter = { [weak self] _ in self?.writeStream(stream) ?? false }
        exchange.onClose = { [weak self] _ in self?.closeStream(stream) }
        open.append(stream)
        runtime.frameStreams.append(stream)
        metrics.streamsOpened += 1
        responder.countResponse(status: 200)
        // The transport would end a response that runs this long; the sweep watches streams instead.
        exchange.transport.keepOpenWithoutTimeout()
        // As for WebSockets: without a fixed send buffer Linux grows it to
        // megabytes, where a slow reader's old frames would queue unseen.
        if !exchange.transport.limitSendBuffer(bytes: Self.socketSendBufferBytes) {
            logger.warn("could not limit the socket send buffer", ["peer": exchange.peerAddress])
        }
        exchange.transport.requestWritable()
        refresh(stream)
        if stream.animates { scheduleTick(at: stream.nextWaveAt) }
    }

    private func closeStream(_ stream: FrameStream) {
        stream.exchange.streamWriter = nil
        open.removeAll { $0 === stream }
        stream.runtime.frameStreams.removeAll { $0 === stream }
        stream.runtime.idleSince = clock.fresh()
    }

    /// Asks for a new frame when what the stream's view shows has changed.
    func refresh(_ stream: FrameStream) {
        guard let producer = frames.producer, let room = stream.runtime.room, !stream.ending, !stream.exchange.isClosed else { return }
        let step = stream.animates ? WaveClock.step(atMilliseconds: clock.wallMilliseconds()) : 0
        let state = FrameState(scene: room.committed.scene, dragonStatus: stream.runtime.dragonStatus, step: step)
        let relevant = state.relevant(to: stream.view)
        guard relevant != stream.shown else { return }
        stream.shown = relevant
        stream.requestSerial += 1
        let serial = stream.requestSerial
        let key = FrameKey(room: stream.runtime.name, epoch: room.epoch, seq: room.committed.seq, view: stream.view,
                           width: stream.width, height: stream.height, step: step)
        let accepted = producer.frame(key, state: state) { [weak self, weak stream] result in
            guard let self, let stream, !stream.exchange.isClosed, !stream.ending,
                  serial > stream.deliveredSerial else { return }
            switch result {
            case .success(let png):
                stream.deliveredSerial = serial
                if stream.enqueue(png, now: self.clock.fresh()) { self.metrics.streamFramesReplaced += 1 }
                if stream.headersSent { stream.exchange.transport.requestWritable() }
            case .failure:
                if serial == stream.requestSerial { stream.shown = nil }  // try again on the next tick or change
            }
        }
        if !accepted {
            metrics.renderRefusals += 1
            stream.shown = nil
        }
    }

    /// After a group commit: the streams of every room that changed.
    func refreshStreams(after intents: [PendingIntent]) {
        var seen: Set<ObjectIdentifier> = []
        for intent in intents where intent.applied.event != nil && !intent.runtime.frameStreams.isEmpty {
            guard seen.insert(ObjectIdentifier(intent.runtime)).inserted else { continue }
            for stream in intent.runtime.frameStreams { refresh(stream) }
        }
    }

    /// Every stream of one room (its state jumped, e.g. from another node).
    func refreshStreams(of runtime: RoomRuntime) {
        for stream in runtime.frameStreams { refresh(stream) }
    }

    /// The shared wave timer: refreshes the animated streams that are due
    /// (skipping those still holding an unsent frame) and sleeps until the next.
    func tick() {
        tickDue = nil
        let now = clock.fresh()
        var earliest = Double.infinity
        for stream in open where stream.animates && !stream.ending {
            if stream.nextWaveAt <= now + 0.001 {
                if !stream.isBehind { refresh(stream) }
                stream.nextWaveAt += stream.waveInterval
                if stream.nextWaveAt <= now { stream.nextWaveAt = now + stream.waveInterval }
            }
            earliest = min(earliest, stream.nextWaveAt)
        }
        if earliest.isFinite { scheduleTick(at: earliest) }
    }

    private func scheduleTick(at time: Double) {
        guard let scheduleTick else { return }
        if let due = tickDue, due <= time { return }
        tickDue = time
        scheduleTick(max(0, time - clock.fresh()))
    }

    /// One write per writable callback: the headers, then up to a scratch
    /// buffer of the current part, then (when ending) the closing boundary,
    /// and the close once it is out. False closes the connection.
    private func writeStream(_ stream: FrameStream) -> Bool {
        let transport = stream.exchange.transport
        let base = scratch
        if stream.closingSent { return false }
        var length = 0
        var final = false
        if !stream.headersSent {
            var cursor: UnsafeMutablePointer<UInt8>? = base
            let head = HTTPResponseHead(status: 200, contentType: FrameStream.contentType, contentLength: nil,
                                        cacheControl: "no-store", close: true, headers: [])
            guard transport.writeHeaders(head, into: &cursor, end: base + scratchBytes) else { return false }
            length = cursor! - base
            stream.headersSent = true
        } else if stream.writing != nil {
            let chunk = stream.nextChunk(into: base, capacity: scratchBytes)
            length = chunk.count
            if chunk.finishedPart { metrics.streamFramesSent += 1 }
        } else if stream.ending {
            length = FrameStream.closingBoundary.count
            FrameStream.closingBoundary.withUnsafeBufferPointer { base.update(from: $0.baseAddress!, count: length) }
            final = true
            stream.closingSent = true
        }
        guard length > 0 else { return true }
        guard transport.write(base, count: length, final: final) else { return false }
        stream.stalledSince = clock.fresh()
        if stream.hasWork { transport.requestWritable() }
        return true
    }

    // MARK: housekeeping

    /// From the sweep: drops streams whose client stopped reading or hung
    /// up while nothing was being written, and retries streams whose last
    /// frame could not be had.
    func sweep(now: Double) {
        for stream in open where !stream.exchange.isClosed {
            let transport = stream.exchange.transport
            if stream.writing != nil && now - stream.stalledSince > config.limits.writeTimeoutSeconds {
                metrics.slowReaderCloses += 1
                logger.info("dropping stream client that stopped reading", ["peer": stream.exchange.peerAddress])
                transport.kill()
            } else if stream.writing == nil && transport.peerHasHungUp {
                transport.kill()
            } else if stream.shown == nil {
                refresh(stream)
            }
        }
    }

    /// On shutdown: every stream finishes its current part and ends.
    func endStreams() {
        for stream in open where !stream.ending {
            stream.beginEnding()
            stream.exchange.transport.requestWritable()
        }
    }
}
