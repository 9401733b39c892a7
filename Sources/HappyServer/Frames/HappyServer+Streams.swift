import CWebSockets
import HappyCore
import HappyRender

/// `GET /stream/{view}.png`: a `multipart/x-mixed-replace` response that
/// pushes a new PNG part whenever what the view shows changes, and for the
/// heart and the scene at `fps` while the wave moves. One shared lws timer
/// ticks every animated stream; frames come from the shared frame cache.
extension HappyServer {
    func streamRequest(_ exchange: HTTPExchange) {
        guard let request = frameQuery(exchange, kind: .stream) else { return }
        guard let name = roomArgument(exchange), httpAccess(exchange, room: name) != nil else { return }
        if shuttingDown {
            return respondError(exchange, status: 503, code: ErrorCode.unavailable.rawValue, "server shutting down")
        }
        guard frameStreams.count < config.limits.maxClients else {
            return respondError(exchange, status: 503, code: ErrorCode.unavailable.rawValue,
                                "too many frame streams: \(config.limits.maxClients) open")
        }
        let runtime = runtime(for: name)
        runtime.idleSince = SystemTime.monotonicSeconds()
        runtime.whenReady { [weak self] runtime in
            guard let self, !exchange.isClosed else { return }
            guard runtime.room != nil else { return self.respondUnloaded(exchange, runtime) }
            guard !self.shuttingDown else {
                return self.respondError(exchange, status: 503, code: ErrorCode.unavailable.rawValue,
                                         "server shutting down")
            }
            self.openStream(exchange, runtime, request)
        }
    }

    private func openStream(_ exchange: HTTPExchange, _ runtime: RoomRuntime, _ request: FrameQuery) {
        let stream = FrameStream(exchange: exchange, runtime: runtime, query: request, now: SystemTime.monotonicSeconds())
        exchange.streamWriter = { [weak self] _ in self?.writeStream(stream) ?? -1 }
        exchange.onClose = { [weak self] _ in self?.closeStream(stream) }
        frameStreams.append(stream)
        runtime.frameStreams.append(stream)
        metrics.streamsOpened += 1
        metrics.httpRequests["2xx", default: 0] += 1
        // lws would end a response that runs this long; the sweep watches streams instead.
        lws_set_timeout(exchange.wsi, NO_PENDING_TIMEOUT, 0)
        // As for WebSockets: without a fixed send buffer Linux grows it to
        // megabytes, where a slow reader's old frames would queue unseen.
        if happy_set_send_buffer(lws_get_socket_fd(exchange.wsi), Self.socketSendBufferBytes) != 0 {
            logger.warn("could not limit the socket send buffer", ["peer": exchange.peerAddress])
        }
        lws_callback_on_writable(exchange.wsi)
        refresh(stream)
        if stream.animates { scheduleStreamTick(at: stream.nextWaveAt) }
    }

    private func closeStream(_ stream: FrameStream) {
        stream.exchange.streamWriter = nil
        frameStreams.removeAll { $0 === stream }
        stream.runtime.frameStreams.removeAll { $0 === stream }
        stream.runtime.idleSince = SystemTime.monotonicSeconds()
    }

    // MARK: frames

    /// Asks for a new frame when what the stream's view shows has changed.
    func refresh(_ stream: FrameStream) {
        guard let frames, let room = stream.runtime.room, !stream.ending, !stream.exchange.isClosed else { return }
        let step = stream.animates ? WaveClock.step(atMilliseconds: SystemTime.wallMilliseconds()) : 0
        let state = FrameState(scene: room.committed.scene, dragonStatus: stream.runtime.dragonStatus, step: step)
        let relevant = state.relevant(to: stream.view)
        guard relevant != stream.shown else { return }
        stream.shown = relevant
        stream.requestSerial += 1
        let serial = stream.requestSerial
        let key = FrameKey(room: stream.runtime.name, epoch: room.epoch, seq: room.committed.seq, view: stream.view,
                           width: stream.width, height: stream.height, step: step)
        let accepted = frames.frame(key, state: state) { [weak self, weak stream] result in
            guard let self, let stream, !stream.exchange.isClosed, !stream.ending,
                  serial > stream.deliveredSerial else { return }
            switch result {
            case .success(let png):
                stream.deliveredSerial = serial
                if stream.enqueue(png, now: SystemTime.monotonicSeconds()) { self.metrics.streamFramesReplaced += 1 }
                if stream.headersSent { lws_callback_on_writable(stream.exchange.wsi) }
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
    func streamTick() {
        streamTickDue = nil
        let now = SystemTime.monotonicSeconds()
        var earliest = Double.infinity
        for stream in frameStreams where stream.animates && !stream.ending {
            if stream.nextWaveAt <= now + 0.001 {
                if !stream.isBehind { refresh(stream) }
                stream.nextWaveAt += stream.waveInterval
                if stream.nextWaveAt <= now { stream.nextWaveAt = now + stream.waveInterval }
            }
            earliest = min(earliest, stream.nextWaveAt)
        }
        if earliest.isFinite { scheduleStreamTick(at: earliest) }
    }

    func scheduleStreamTick(at time: Double) {
        guard let context else { return }
        if let due = streamTickDue, due <= time { return }
        streamTickDue = time
        let delay = max(0, time - SystemTime.monotonicSeconds())
        lws_sul_schedule(context, 0, &streamTimer.pointee.sul, happyStreamTickCallback, lws_usec_t(delay * 1_000_000))
    }

    // MARK: writing

    /// One write per WRITEABLE callback: the headers, then up to
    /// `writeBatchBytes` of the current part, then (when ending) the closing
    /// boundary, and the close once lws has sent it.
    func writeStream(_ stream: FrameStream) -> Int32 {
        let wsi = stream.exchange.wsi
        let base = scratch + OutboundFrame.headroom
        if stream.closingSent { return -1 }
        var length = 0
        var mode = happy_write_http
        if !stream.headersSent {
            var cursor: UnsafeMutablePointer<UInt8>? = base
            guard writeHeaders(wsi, status: 200, contentType: FrameStream.contentType, contentLength: nil,
                               cacheControl: "no-store", close: true, headers: [],
                               &cursor, base + Self.writeBatchBytes) else { return -1 }
            length = cursor! - base
            stream.headersSent = true
        } else if stream.writing != nil {
            let chunk = stream.nextChunk(into: base, capacity: Self.writeBatchBytes)
            length = chunk.count
            if chunk.finishedPart { metrics.streamFramesSent += 1 }
        } else if stream.ending {
            length = FrameStream.closingBoundary.count
            FrameStream.closingBoundary.withUnsafeBufferPointer { base.update(from: $0.baseAddress!, count: length) }
            mode = happy_write_http_final
            stream.closingSent = true
        }
        guard length > 0 else { return 0 }
        if lws_write(wsi, base, length, lws_write_protocol(UInt32(mode))) != length { return -1 }
        stream.stalledSince = SystemTime.monotonicSeconds()
        if stream.hasWork { lws_callback_on_writable(wsi) }
        return 0
    }

    // MARK: housekeeping

    /// From the sweep: drops streams whose client stopped reading or hung
    /// up while nothing was being written, and retries streams whose last
    /// frame could not be had.
    func sweepStreams(now: Double) {
        for stream in frameStreams where !stream.exchange.isClosed {
            let wsi = stream.exchange.wsi
            if stream.writing != nil && now - stream.stalledSince > config.limits.writeTimeoutSeconds {
                metrics.slowReaderCloses += 1
                logger.info("dropping stream client that stopped reading", ["peer": stream.exchange.peerAddress])
                lws_set_timeout(wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, happy_kill_async)
            } else if stream.writing == nil && PeerProbe.hasHungUp(wsi) {
                lws_set_timeout(wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, happy_kill_async)
            } else if stream.shown == nil {
                refresh(stream)
            }
        }
    }

    /// On shutdown: every stream finishes its current part and ends.
    func endStreams() {
        for stream in frameStreams where !stream.ending {
            stream.beginEnding()
            lws_callback_on_writable(stream.exchange.wsi)
        }
    }
}
