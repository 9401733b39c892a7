import HappyCore
import HappyRender

/// The open frame streams (`GET /stream/{view}.png`, accepted by
/// `FrameService`): each a `multipart/x-mixed-replace` response that gets a
/// new PNG part whenever what its view shows changes, and at `fps` while
/// the wave moves. One shared timer ticks every animated stream; frames
/// come from the producer's cache and renderer.
final class FrameStreams {
    /// Kernel send buffer of a stream connection: the same as a WebSocket's.
    static let socketSendBufferBytes = longLivedSendBufferBytes
    /// Largest chunk of a part written per writable callback.
    static let writeChunkBytes = 32 * 1024

    /// The open streams.
    private(set) var open: [FrameStream] = []
    private var tickDue: Double?

    private let producer: FrameProducer
    private var config: HappyConfig

    /// Applies a configuration read again (SIGHUP) to what comes next.
    func reconfigure(_ config: HappyConfig) {
        self.config = config
    }
    private let responder: HTTPResponder
    private let timers: any TimerScheduling
    private let metrics: Metrics
    private let logger: Logger
    private let clock: ServiceClock
    /// One chunk of a part at a time.
    private let scratch = WriteScratch(capacity: writeChunkBytes)
    private let streamsKey = RoomStreams.Key()

    init(producer: FrameProducer, config: HappyConfig, responder: HTTPResponder, timers: any TimerScheduling,
         metrics: Metrics, logger: Logger, clock: ServiceClock) {
        self.producer = producer
        self.config = config
        self.responder = responder
        self.timers = timers
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }

    /// Streams open from `address`.
    func openCount(from address: String) -> Int {
        open.reduce(0) { $0 + ($1.exchange.peerAddress == address && !$1.exchange.isClosed ? 1 : 0) }
    }

    /// Starts streaming `request`'s view of `runtime` on `exchange`.
    func open(_ exchange: HTTPExchange, in runtime: RoomRuntime, _ request: FrameQuery) {
        let stream = FrameStream(exchange: exchange, runtime: runtime, query: request, now: clock.fresh())
        responder.stream(exchange, writer: { [weak self] in self?.writeStream(stream) ?? false },
                         onClose: { [weak self] in self?.closeStream(stream) })
        open.append(stream)
        runtime.modify(streamsKey) { $0.add(stream) }
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

    /// The stream's exchange closed (its writer is gone with it).
    private func closeStream(_ stream: FrameStream) {
        open.removeAll { $0 === stream }
        let now = clock.fresh()
        stream.runtime.modify(streamsKey) { $0.remove(stream, now: now) }
    }

    /// Asks for a new frame when what the stream's view shows has changed.
    func refresh(_ stream: FrameStream) {
        guard let room = stream.runtime.room, !stream.ending, !stream.exchange.isClosed else { return }
        let step = stream.animates ? WaveClock.step(atMilliseconds: clock.wallMilliseconds()) : 0
        let state = FrameState(scene: room.committed.scene, dragonStatus: room.dragonStatus, step: step)
        let relevant = state.relevant(to: stream.view)
        guard relevant != stream.shown else { return }
        stream.shown = relevant
        stream.requestSerial += 1
        let serial = stream.requestSerial
        let key = FrameKey(room: stream.runtime.name, epoch: room.epoch, seq: room.committed.seq, view: stream.view,
                           width: stream.width, height: stream.height, step: step)
        let accepted = producer.frame(key, state: state, forStream: true) { [weak self, weak stream] result in
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

    /// After a group commit: the streams of every room that changed (a room may be listed more than once).
    func refreshStreams(ofChanged rooms: [RoomRuntime]) {
        var seen: Set<ObjectIdentifier> = []
        for runtime in rooms where !runtime.streams.isEmpty {
            guard seen.insert(ObjectIdentifier(runtime)).inserted else { continue }
            for stream in runtime.streams.list { refresh(stream) }
        }
    }

    /// Every stream of one room (its state jumped, e.g. from another node).
    func refreshStreams(of runtime: RoomRuntime) {
        for stream in runtime.streams.list { refresh(stream) }
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
        if let due = tickDue, due <= time { return }
        tickDue = time
        timers.schedule(.streams, afterSeconds: max(0, time - clock.fresh()))
    }

    /// One write per writable callback: the headers, then up to a scratch
    /// buffer of the current part, then (when ending) the closing boundary,
    /// and the close once it is out. False closes the connection.
    private func writeStream(_ stream: FrameStream) -> Bool {
        let transport = stream.exchange.transport
        let base = scratch.start
        if stream.closingSent || stream.clientHasLeft { return false }
        var length = 0
        var final = false
        if !stream.headersSent {
            var cursor: UnsafeMutablePointer<UInt8>? = base
            let head = HTTPResponseHead(status: 200, contentType: FrameStream.contentType, contentLength: nil,
                                        cacheControl: "no-store", close: true, headers: responder.commonHeaders)
            guard transport.writeHeaders(head, into: &cursor, end: scratch.end) else { return false }
            length = cursor! - base
            stream.headersSent = true
        } else if stream.writing != nil {
            let chunk = stream.nextChunk(into: base, capacity: Self.writeChunkBytes)
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
                // Closed from its writable callback: lws does not read a
                // connection whose response is in progress, so its end of
                // file stays readable and lws's own timers (a kill's) wait.
                stream.clientLeft()
                transport.requestWritable()
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

extension RoomStreams {
    /// Made only here: `FrameStreams` alone changes a room's `streams`.
    struct Key { fileprivate init() {} }
}
