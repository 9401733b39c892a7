import Foundation
import HappyCore

/// One client of one Happy room over any `HappyTransport`: joins, keeps the
/// room's state, sequence, epoch and presence (`RoomLedger`), sends intents
/// and pings and matches their answers by id, watches the connection with a
/// heartbeat, and — when configured — reconnects (full-jitter backoff; at
/// once after a server restart; never after 4000–4999) and resumes with
/// `since`/`epoch`, passing every event on exactly once.
///
/// Thread-safe. The delegate is called on the task that reads the
/// connection, one call at a time (on the main actor when the configuration
/// asks); the blocking helpers (`waitForWelcome`, `perform`, `ping`) must be
/// called from other threads.
public final class HappySession: @unchecked Sendable {
    /// Receives an intent's outcome or error: where the delegate is called, or at once
    /// on the caller's thread when the session is not connected.
    public typealias IntentCompletion = @Sendable (Result<IntentOutcome, SessionError>) -> Void
    /// Receives a ping's sample or error, called as an `IntentCompletion` is.
    public typealias PingCompletion = @Sendable (Result<PingSample, SessionError>) -> Void

    /// Where and as whom the session connects, and how it reconnects.
    public let configuration: SessionConfiguration
    /// What carries the session's connections.
    public let transport: any HappyTransport

    /// Hears the room's events; held weakly. Set it before `start`.
    public var delegate: HappySessionDelegate? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return storedDelegate
        }
        set {
            lock.lock()
            storedDelegate = newValue
            lock.unlock()
        }
    }

    // Guarded by `lock`; `lock` is signalled on every change.
    let lock = NSCondition()
    private weak var storedDelegate: HappySessionDelegate?
    var ledger = RoomLedger()
    var pointerBoard = PointerBoard()
    var pointerThrottle: PointerThrottle
    var connection: (any TransportConnection)?
    /// Counts connections, so that a timer of an older one does nothing.
    var generation: UInt64 = 0
    var heartbeat: HeartbeatMonitor?
    /// Counts planned reconnects, so that one overtaken by events does nothing.
    var retryToken: UInt64 = 0
    var suspended = false
    var connectionState: ConnectionState?
    /// Counts state changes, so a late delegate call for an older one is dropped.
    var stateChanges: UInt64 = 0
    /// Delivers state calls one at a time (recursive: a delegate may stop the session).
    let stateDelivery = NSRecursiveLock()
    var opened = false
    var welcomed = false
    var everWelcomed = false
    var stopping = false
    var attempt = 0
    var nextID = 0
    var pendingIntents: [String: IntentCompletion] = [:]
    var pendingPings: [String: (sentAt: Double, sentAtMonotonic: Double, completion: PingCompletion)] = [:]
    var welcome: WelcomeMessage?
    var welcomeJSON: JSONValue?
    var geometry = SceneGeometry()
    var limits: WelcomeLimits?
    var clockOffset: Double?
    var bestPingTrip = Double.infinity
    /// Follows the network path where the platform tells it (Apple's Network framework).
    var pathWatch: (any NetworkPathWatching)?

    /// A session not started yet: set `delegate`, then call `start()`. Its connections
    /// are made by `transport` (one transport serves any number of sessions).
    public init(configuration: SessionConfiguration, transport: any HappyTransport) {
        self.configuration = configuration
        self.transport = transport
        pointerThrottle = PointerThrottle(interval: configuration.pointerInterval)
    }

    /// Opens the first connection.
    public func start() {
        lock.lock()
        guard connection == nil, !stopping, connectionState == nil else {
            lock.unlock()
            return
        }
        let notify = openConnection()
        if configuration.reconnects && configuration.reconnectsWhenNetworkChanges {
            pathWatch = NetworkPath.watch { [weak self] in self?.reconnectNow(reason: "the network changed") }
        }
        lock.unlock()
        deliver(notify)
    }

    /// Before `start`: asks the first connection to replay the room's events
    /// after `since` (those of `epoch` still in its history) to the delegate.
    public func replay(after since: UInt64, epoch: String) {
        lock.lock()
        if connectionState == nil { ledger.prime(since: since, epoch: epoch) }
        lock.unlock()
    }

    /// Closes the connection (with 1000) and stops reconnecting; waits up
    /// to `wait` seconds for the close handshake.
    public func stop(wait: Double = 0.5) {
        lock.lock()
        stopping = true
        retryToken += 1
        stopWatchingThePath()
        let current = connection
        var notify: [() -> Void] = []
        if current == nil && !isEnded { notify = setState(.ended(.stopped)) }
        lock.unlock()
        deliver(notify)
        guard let current else { return }
        current.close(code: 1000, reason: "client leaving")
        let deadline = Date(timeIntervalSinceNow: wait)
        lock.lock()
        while connection === current, lock.wait(until: deadline) {}
        let stillOpen = connection === current
        lock.unlock()
        if stillOpen { current.abort() }
    }

    /// What the session knows now.
    public var snapshot: SessionSnapshot {
        lock.lock()
        defer { lock.unlock() }
        return lockedSnapshot()
    }

    /// Sends an intent with a new id; `completion` gets the ack's outcome or
    /// the error. Returns the id. Fails at once when not connected.
    @discardableResult
    public func send(_ action: Action, completion: @escaping IntentCompletion) -> String {
        lock.lock()
        let id = makeID("i")
        guard welcomed, let connection else {
            let error = notConnectedError()
            lock.unlock()
            completion(.failure(error))
            return id
        }
        pendingIntents[id] = completion
        lock.unlock()
        connection.send(text: IntentEncoder.intent(action, id: id))
        return id
    }

    /// Sends an application-level ping; `completion` gets the sample.
    @discardableResult
    public func ping(completion: @escaping PingCompletion) -> String {
        lock.lock()
        let id = makeID("p")
        guard welcomed, let connection else {
            let error = notConnectedError()
            lock.unlock()
            completion(.failure(error))
            return id
        }
        pendingPings[id] = (PingSample.now(), SystemTime.monotonicSeconds(), completion)
        lock.unlock()
        connection.send(text: IntentEncoder.ping(id: id))
        return id
    }

    /// Shows the others where this client points and what it is doing
    /// (nil hides it). Paced to one message per `pointerInterval`, the latest
    /// position winning; nothing is sent when it would not change what the
    /// server shows. While disconnected the position waits for the next
    /// connection, which shows it again.
    public func sendPointer(_ position: PointerPosition?) {
        lock.lock()
        defer { lock.unlock() }
        guard welcomed, connection != nil else {
            pointerThrottle.hold(position)
            return
        }
        applyPointerStep(pointerThrottle.offer(position, now: SystemTime.monotonicSeconds()))
    }

    /// The others' visible pointers, by id.
    public var pointers: [String: PointerEntry] {
        lock.lock()
        defer { lock.unlock() }
        return pointerBoard.pointers
    }

    /// Forgets a request that is no longer awaited (its answer is ignored).
    public func forget(_ id: String) {
        lock.lock()
        pendingIntents[id] = nil
        pendingPings[id] = nil
        lock.unlock()
    }

    // MARK: under the lock

    func lockedSnapshot() -> SessionSnapshot {
        SessionSnapshot(ledger: ledger, pointers: pointerBoard.pointers, connectionState: connectionState,
                        welcome: welcome, welcomeJSON: welcomeJSON, geometry: geometry, limits: limits,
                        clockOffsetMilliseconds: clockOffset)
    }

    /// Carries out a step of the pointer throttle. Sends under the lock, so
    /// that pointer messages leave in the order the throttle chose them.
    func applyPointerStep(_ step: PointerThrottle.Step) {
        switch step {
        case .send(let position):
            guard welcomed, let connection else { return }
            connection.send(text: IntentEncoder.pointer(position))
        case .wake(let at):
            let delay = max(0, at - SystemTime.monotonicSeconds())
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.sendDuePointer() }
        case .nothing:
            break
        }
    }

    private func sendDuePointer() {
        lock.lock()
        applyPointerStep(pointerThrottle.due(now: SystemTime.monotonicSeconds()))
        lock.unlock()
    }

    func makeID(_ prefix: String) -> String {
        nextID += 1
        return "\(prefix)\(nextID)"
    }

    func notConnectedError() -> SessionError {
        if case .ended(let error)? = connectionState { return error }
        return .connectionLost(url: configuration.displayURL, reason: "not connected")
    }

    var isEnded: Bool {
        if case .ended? = connectionState { return true }
        return false
    }

    /// Records a new state; returns the delegate call to make once unlocked.
    /// A call that runs after a newer state was recorded (another thread
    /// moved on meanwhile) is dropped, so the delegate never sees an older
    /// state last.
    func setState(_ state: ConnectionState) -> [() -> Void] {
        connectionState = state
        stateChanges += 1
        let change = stateChanges
        lock.broadcast()
        return [{ [weak self] in
            guard let self, let delegate = self.delegate else { return }
            self.stateDelivery.lock()
            defer { self.stateDelivery.unlock() }
            self.lock.lock()
            let current = self.stateChanges == change
            self.lock.unlock()
            guard current else { return }
            delegate.session(self, didChange: state)
        }]
    }
}
