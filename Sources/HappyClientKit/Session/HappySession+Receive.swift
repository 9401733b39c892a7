import Foundation
import HappyCore

/// The connection's events: messages update the ledger and answer pending
/// requests; ends fail them and either reconnect or end the session.
extension HappySession: WebSocketDelegate {
    /// The connection opened; the welcome is still to come. Called by the session's own
    /// connection on the loop's thread; not for calling directly.
    public func webSocketDidOpen(_ connection: WebSocketConnection, subprotocol: String?) {
        lock.lock()
        if connection === self.connection { opened = true }
        lock.broadcast()
        lock.unlock()
    }

    /// Takes in a server message: updates the ledger, answers pending requests and tells
    /// the delegate. Called by the session's own connection; not for calling directly.
    public func webSocket(_ connection: WebSocketConnection, didReceive bytes: UnsafeRawBufferPointer, binary: Bool) {
        guard !binary else { return }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let (message, json) = ServerMessage.decode(text) else { return }
        lock.lock()
        guard connection === self.connection else {
            lock.unlock()
            return
        }
        let calls = handle(message, json: json, text: text)
        lock.broadcast()
        lock.unlock()
        run(calls)
    }

    /// The connection closed: fails pending requests, then reconnects or ends the
    /// session. Called by the session's own connection; not for calling directly.
    public func webSocketDidClose(_ connection: WebSocketConnection, code: UInt16?, reason: String) {
        ended(connection, close: CloseReason(code: code, reason: reason), failure: nil)
    }

    /// The connection could not be made: fails pending requests, then reconnects or
    /// ends the session. Called by the session's own connection; not for calling directly.
    public func webSocketDidFail(_ connection: WebSocketConnection, error: String) {
        ended(connection, close: nil, failure: error)
    }

    // MARK: messages (under the lock)

    private func handle(_ message: ServerMessage, json: JSONValue, text: String) -> [() -> Void] {
        switch message {
        case .welcome(let welcome):
            let outcome = ledger.welcome(welcome)
            self.welcome = welcome
            welcomeJSON = json
            geometry = SceneGeometry(welcome: json) ?? geometry
            limits = WelcomeLimits(welcome: json)
            if clockOffset == nil || bestPingTrip.isInfinite {
                clockOffset = Double(welcome.serverTime) - Double(SystemTime.wallMilliseconds())
            }
            welcomed = true
            everWelcomed = true
            attempt = 0
            applyPointerStep(pointerThrottle.connected(now: SystemTime.monotonicSeconds()))
            let pointers = pointerBoard.welcome(welcome)
            return [{ [weak self] in
                guard let self else { return }
                self.delegate?.session(self, didJoin: welcome, outcome: outcome)
            }] + (pointers.isEmpty ? [] : [pointerCall(pointers, text: nil)]) + setState(.connected)
        case .event(let event):
            guard ledger.event(event) else { return [] }
            return [{ [weak self] in
                guard let self else { return }
                self.delegate?.session(self, didReceive: event, text: text)
            }]
        case .ack(let id, let seq, let result):
            guard let id, let completion = pendingIntents.removeValue(forKey: id) else { return [] }
            guard let known = AckResult(rawValue: result) else {
                let error = WireError(.badMessage, "the server answered with an unknown ack result \"\(result)\"", id: id)
                return [{ completion(.failure(.refused(error))) }]
            }
            let outcome = IntentOutcome(result: known, seq: seq, state: ledger.state(after: seq) ?? .standard)
            return [{ completion(.success(outcome)) }]
        case .error(let error):
            if let id = error.id, let completion = pendingIntents.removeValue(forKey: id) {
                return [{ completion(.failure(.refused(error))) }]
            }
            if let id = error.id, let ping = pendingPings.removeValue(forKey: id) {
                return [{ ping.completion(.failure(.refused(error))) }]
            }
            return [{ [weak self] in
                guard let self else { return }
                self.delegate?.session(self, didReceiveError: error)
            }]
        case .presence(let joined, let left):
            var calls: [() -> Void] = []
            for change in [joined.map(PresenceChange.joined), left.map(PresenceChange.left)].compactMap({ $0 }) {
                ledger.presence(change)
                calls.append { [weak self] in
                    guard let self else { return }
                    self.delegate?.session(self, presence: change, text: text)
                }
            }
            if let left, let update = pointerBoard.left(left) { calls.append(pointerCall(update, text: nil)) }
            return calls
        case .tick(let tick):
            var calls: [() -> Void] = []
            for left in tick.presence?.left ?? [] {
                if let update = pointerBoard.left(left) { calls.append(pointerCall(update, text: nil)) }
            }
            let intake = ledger.tick(tick)
            guard intake.isNew else { return calls }
            var missed: [() -> Void] = []
            if let range = intake.missed {
                missed = [{ [weak self] in
                    guard let self else { return }
                    self.delegate?.session(self, missed: range, before: tick)
                }]
            }
            return missed + [{ [weak self] in
                guard let self else { return }
                self.delegate?.session(self, didReceive: tick, text: text)
            }] + calls
        case .delivery(let mode, let tickMs):
            ledger.delivery(mode)
            return [{ [weak self] in
                guard let self else { return }
                self.delegate?.session(self, didChangeDelivery: mode, tickMs: tickMs)
            }]
        case .presenceBatch(let batch):
            ledger.presence(batch)
            var calls: [() -> Void] = [{ [weak self] in
                guard let self else { return }
                self.delegate?.session(self, presence: .batch(batch), text: text)
            }]
            for left in batch.left {
                if let update = pointerBoard.left(left) { calls.append(pointerCall(update, text: nil)) }
            }
            return calls
        case .resync(let seq, let state):
            var presence: [Participant]?
            if case .array(let list)? = json["presence"] { presence = list.compactMap(Participant.init(json:)) }
            let count = json["presenceCount"]?.doubleValue.flatMap { $0.isFinite ? Int(exactly: $0.rounded(.towardZero)) : nil }
            ledger.resync(seq: seq, state: state, presence: presence, presenceCount: count)
            return [{ [weak self] in
                guard let self else { return }
                self.delegate?.session(self, didResync: seq, state: state, text: text)
            }]
        case .pong(let id, let serverTime):
            guard let id, let ping = pendingPings.removeValue(forKey: id) else { return [] }
            let sample = PingSample(sentAt: ping.sentAt, receivedAt: PingSample.now(), serverTime: serverTime,
                                    roundTripMilliseconds: (SystemTime.monotonicSeconds() - ping.sentAtMonotonic) * 1000)
            if sample.roundTripMilliseconds <= bestPingTrip {
                bestPingTrip = sample.roundTripMilliseconds
                clockOffset = sample.clockOffsetMilliseconds
            }
            return [{ ping.completion(.success(sample)) }]
        case .pointers(let message):
            return [pointerCall(pointerBoard.batch(message, you: ledger.you?.id), text: text)]
        case .other:
            return []
        }
    }

    private func pointerCall(_ update: PointerUpdate, text: String?) -> () -> Void {
        { [weak self] in
            guard let self else { return }
            self.delegate?.session(self, didUpdatePointers: update, text: text)
        }
    }

    // MARK: ends

    private func ended(_ connection: WebSocketConnection, close: CloseReason?, failure: String?) {
        lock.lock()
        guard connection === self.connection else {
            lock.unlock()
            return
        }
        self.connection = nil
        let url = configuration.displayURL
        let wasWelcomed = welcomed
        welcomed = false
        let reason = failure ?? close?.description ?? "connection closed"
        let error: SessionError
        if let close, close.isOperatorRemoval {
            error = .removed(url: url, close)
        } else if let close, close.code != nil, !wasWelcomed || close.isFinal {
            error = .closed(url: url, close)
        } else if wasWelcomed {
            error = .connectionLost(url: url, reason: reason)
        } else if opened {
            error = .connectionLost(url: url, reason: reason + " (before the welcome)")
        } else {
            error = .cannotConnect(url: url, reason: failure ?? reason)
        }
        var calls = failPending(error)
        if let update = pointerBoard.disconnected() { calls.append(pointerCall(update, text: nil)) }
        if stopping {
            calls += setState(.ended(.stopped))
        } else if !configuration.reconnects || !everWelcomed || (close?.isFinal ?? false) {
            calls += setState(.ended(error))
        } else {
            let delay = configuration.backoff.delay(attempt: attempt)
            attempt += 1
            calls += setState(.waiting(retryIn: delay, reason: reason))
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.reconnect() }
        }
        lock.unlock()
        run(calls)
    }

    private func failPending(_ error: SessionError) -> [() -> Void] {
        let intents = pendingIntents.values
        let pings = pendingPings.values
        pendingIntents.removeAll()
        pendingPings.removeAll()
        return intents.map { completion in { completion(.failure(error)) } }
            + pings.map { ping in { ping.completion(.failure(error)) } }
    }

    private func reconnect() {
        lock.lock()
        guard !stopping, connection == nil else {
            lock.unlock()
            return
        }
        let calls = openConnection()
        lock.unlock()
        run(calls)
    }
}
