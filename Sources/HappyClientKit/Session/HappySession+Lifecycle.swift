import Foundation
import HappyCore

/// How a session's connections come and go: opening one and reading its
/// events, the end of one (reconnect or give up), the heartbeat that
/// notices a dead one, and the app's own say: suspend, resume, reconnect now.
extension HappySession {
    /// Opens a connection, resuming where the ledger left off, and starts
    /// reading its events; returns the delegate calls to make once unlocked.
    func openConnection() -> [() -> Void] {
        let resume = ledger.resumePoint
        let url = configuration.connectURL(resumingAfter: resume?.since, epoch: resume?.epoch)
        opened = false
        welcomed = false
        heartbeat = nil
        generation += 1
        retryToken += 1
        let notify = setState(.connecting(attempt: attempt))
        let made = transport.connect(to: url, options: configuration.options)
        connection = made
        Task { [weak self] in
            for await event in made.events {
                guard let self else { return }
                self.receive(event, on: made)
            }
        }
        return notify
    }

    /// Makes delegate calls and completions in order: here, or on the main
    /// queue when the configuration asks for the main actor.
    func deliver(_ calls: [() -> Void]) {
        guard !calls.isEmpty else { return }
        guard configuration.deliversOnMainActor else {
            for call in calls { call() }
            return
        }
        let batch = CallBatch(calls)
        DispatchQueue.main.async { batch.run() }
    }

    /// Disconnects on purpose and stays away until `resume()`: for an app
    /// going to the background. Pending requests fail; the status becomes
    /// `.suspended`; nothing reconnects meanwhile.
    public func suspend() {
        lock.lock()
        guard !stopping, !suspended, connectionState != nil, !isEnded else {
            lock.unlock()
            return
        }
        suspended = true
        retryToken += 1
        let current = detachConnection(failing: .connectionLost(url: configuration.displayURL, reason: "suspended"))
        let calls = current.calls + setState(.suspended)
        lock.unlock()
        current.connection?.close(code: 1000, reason: "client suspended")
        deliver(calls)
    }

    /// Connects again after `suspend()`, at once, resuming where the room was
    /// left (`since`/`epoch`): the events of the pause follow the welcome.
    public func resume() {
        lock.lock()
        guard suspended, !stopping else {
            lock.unlock()
            return
        }
        suspended = false
        attempt = 0
        let calls = openConnection()
        lock.unlock()
        deliver(calls)
    }

    /// Drops the connection, if any, and connects again at once without
    /// backoff, resuming where the room was: for when the network changed
    /// under it (the old socket is likely dead) or a retry is waiting. Does
    /// nothing before the first welcome, while suspended or after the end.
    public func reconnectNow(reason: String = "reconnecting at once") {
        lock.lock()
        guard configuration.reconnects, everWelcomed, !stopping, !suspended, !isEnded else {
            lock.unlock()
            return
        }
        let current = detachConnection(failing: .connectionLost(url: configuration.displayURL, reason: reason))
        attempt = 0
        let calls = current.calls + openConnection()
        lock.unlock()
        current.connection?.abort()
        deliver(calls)
    }

    /// Lets go of the connection (its later events are ignored) and fails what
    /// waited on it; the caller closes or aborts it once unlocked. Under the lock.
    private func detachConnection(failing error: SessionError) -> (connection: (any TransportConnection)?,
                                                                  calls: [() -> Void]) {
        let current = connection
        connection = nil
        heartbeat = nil
        welcomed = false
        var calls = failPending(error)
        if let update = pointerBoard.disconnected() { calls.append(pointerCall(update, text: nil)) }
        return (current, calls)
    }

    /// The session is over: the network path no longer matters. Under the lock.
    func stopWatchingThePath() {
        pathWatch?.cancel()
        pathWatch = nil
    }

    // MARK: heartbeat

    /// Starts watching the connection that just opened. Under the lock.
    func startHeartbeat() {
        guard let beat = configuration.heartbeat else { return }
        let now = SystemTime.monotonicSeconds()
        heartbeat = HeartbeatMonitor(beat, openedAt: now)
        scheduleHeartbeatCheck(at: now + beat.interval)
    }

    private func scheduleHeartbeatCheck(at time: Double) {
        let generation = self.generation
        let delay = max(0, time - SystemTime.monotonicSeconds())
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.checkHeartbeat(generation: generation)
        }
    }

    private func checkHeartbeat(generation: UInt64) {
        lock.lock()
        guard generation == self.generation, let connection, var monitor = heartbeat else {
            lock.unlock()
            return
        }
        let step = monitor.check(at: SystemTime.monotonicSeconds())
        heartbeat = monitor
        switch step {
        case .ping(let checkAt):
            scheduleHeartbeatCheck(at: checkAt)
            lock.unlock()
            connection.ping { [weak self] in self?.pongArrived(generation: generation) }
        case .wait(let until):
            scheduleHeartbeatCheck(at: until)
            lock.unlock()
        case .timedOut:
            lock.unlock()
            let seconds = Self.seconds(monitor.heartbeat.timeout)
            ended(connection, close: nil, failure: "no answer to a ping within \(seconds)")
            connection.abort()
        }
    }

    private func pongArrived(generation: UInt64) {
        lock.lock()
        if generation == self.generation { heartbeat?.heard(at: SystemTime.monotonicSeconds()) }
        lock.unlock()
    }

    /// The connection ended (or the session gave up on it): fails pending
    /// requests, then reconnects or ends the session as `ReconnectPolicy` says.
    func ended(_ connection: any TransportConnection, close: CloseReason?, failure: String?) {
        lock.lock()
        guard connection === self.connection else {
            lock.unlock()
            return
        }
        self.connection = nil
        heartbeat = nil
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
        var retry: (token: UInt64, delay: Double)?
        if stopping {
            calls += setState(.ended(.stopped))
        } else {
            defer { if isEnded { stopWatchingThePath() } }
            let policy = ReconnectPolicy(reconnects: configuration.reconnects, backoff: configuration.backoff)
            switch policy.decide(close: close, error: error, everWelcomed: everWelcomed, attempt: attempt,
                                 random: Double.random(in: 0..<1)) {
            case .end(let error):
                calls += setState(.ended(error))
            case .retry(let delay, let next):
                attempt = next
                retryToken += 1
                retry = (retryToken, delay)
                calls += setState(.waiting(retryIn: delay, reason: reason))
            }
        }
        lock.unlock()
        deliver(calls)
        // Planned once this connection's calls are made, so that none of them
        // can follow a call of the next connection.
        if let retry {
            DispatchQueue.global().asyncAfter(deadline: .now() + retry.delay) { [weak self] in
                self?.reconnect(token: retry.token)
            }
        }
    }

    func failPending(_ error: SessionError) -> [() -> Void] {
        let intents = pendingIntents.values
        let pings = pendingPings.values
        pendingIntents.removeAll()
        pendingPings.removeAll()
        return intents.map { completion in { completion(.failure(error)) } }
            + pings.map { ping in { ping.completion(.failure(error)) } }
    }

    private func reconnect(token: UInt64) {
        lock.lock()
        guard token == retryToken, !stopping, !suspended, connection == nil else {
            lock.unlock()
            return
        }
        let calls = openConnection()
        lock.unlock()
        deliver(calls)
    }
}

/// Calls handed to the main queue. Each captures the session weakly or a
/// `@Sendable` completion; they run there one batch after the other.
private final class CallBatch: @unchecked Sendable {
    private let calls: [() -> Void]

    init(_ calls: [() -> Void]) { self.calls = calls }

    func run() {
        for call in calls { call() }
    }
}
