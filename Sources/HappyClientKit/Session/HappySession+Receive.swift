import Foundation
import HappyCore

/// The connection's events: messages update the ledger and answer pending
/// requests; ends fail them and either reconnect or end the session.
extension HappySession {
    /// Takes in one event of `connection`, on the task that reads it; events
    /// of a connection the session no longer uses are dropped.
    func receive(_ event: WebSocketEvent, on connection: any TransportConnection) {
        switch event {
        case .open:
            connectionOpened(connection)
        case .text(let text):
            messageArrived(text, on: connection)
        case .binary:
            heard(on: connection)
        case .closed(let code, let reason):
            ended(connection, close: CloseReason(code: code, reason: reason), failure: nil)
        case .failed(let error):
            ended(connection, close: nil, failure: error)
        }
    }

    private func connectionOpened(_ connection: any TransportConnection) {
        lock.lock()
        if connection === self.connection {
            opened = true
            startHeartbeat()
        }
        lock.broadcast()
        lock.unlock()
    }

    private func messageArrived(_ text: String, on connection: any TransportConnection) {
        guard let (message, json) = ServerMessage.decode(text) else { return heard(on: connection) }
        lock.lock()
        guard connection === self.connection else {
            lock.unlock()
            return
        }
        heartbeat?.heard(at: SystemTime.monotonicSeconds())
        let calls = handle(message, json: json, text: text)
        lock.broadcast()
        lock.unlock()
        deliver(calls)
    }

    private func heard(on connection: any TransportConnection) {
        lock.lock()
        if connection === self.connection { heartbeat?.heard(at: SystemTime.monotonicSeconds()) }
        lock.unlock()
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

    func pointerCall(_ update: PointerUpdate, text: String?) -> () -> Void {
        { [weak self] in
            guard let self else { return }
            self.delegate?.session(self, didUpdatePointers: update, text: text)
        }
    }
}
