import Foundation
import Synchronization

/// A Happy room, joined: its events, state, people, pointers and
/// connection status as async sequences, and `perform` for intents.
///
/// ```swift
/// let room = try await HappyRoom.connect(to: "ws://127.0.0.1:8080", room: "lobby", name: "alice")
/// let outcome = try await room.perform(.dragonForward)
/// for await update in room.events { print(update) }
/// ```
///
/// A room reconnects by itself when its connection drops and resumes where
/// it left off (PROTOCOL.md section 5): `events` yields every event once, in
/// order, across reconnects. Each access to a sequence property makes a new
/// sequence of its own; it ends when its task is cancelled, when the room is
/// left, or when the session ends for good (refused, removed by an
/// operator). Safe to use from any task or thread.
public final class HappyRoom: Sendable {
    /// Where and as whom the room was joined.
    public let configuration: SessionConfiguration
    /// The session underneath (the completion-handler and delegate API).
    public let session: HappySession
    private let hub: RoomHub

    /// Joins `room` on the server at `url` and waits for the welcome.
    ///
    /// - Parameters:
    ///   - url: `ws://host:port` or `wss://host:port` (`http(s)://` is taken as `ws(s)://`), with `/ws` when no path.
    ///   - room: the room's name; nil joins the server's default room.
    ///   - name: the display name; nil lets the server choose `guest-…`.
    ///   - token: an access token when the server asks for one (PROTOCOL.md section 7).
    ///   - observe: watch without being in the room's presence; intents are then refused.
    ///   - reconnects: reconnect and resume when the connection drops (the default).
    ///   - transport: what carries the connection; nil takes the platform's
    ///     (`defaultTransport()`: libwebsockets on Linux, URLSession elsewhere).
    ///   - timeout: how long to wait for the welcome, in seconds.
    /// - Throws: `SessionError.invalidURL` for an address that is not one,
    ///   `.cannotConnect`, `.closed` (refused: the room name, token or origin),
    ///   `.timeout`, or `.cancelled` when the task is cancelled meanwhile.
    public static func connect(to url: String, room: String? = nil, name: String? = nil, token: String? = nil,
                               observe: Bool = false, reconnects: Bool = true, transport: (any HappyTransport)? = nil,
                               timeout: Double = 10) async throws(SessionError) -> HappyRoom {
        let configuration = SessionConfiguration(server: try WebSocketURL(validating: url), room: room, name: name,
                                                 token: token, observe: observe, reconnects: reconnects)
        let carrier: any HappyTransport
        if let transport { carrier = transport } else { carrier = try defaultTransport() }
        let joined = HappyRoom(configuration: configuration, transport: carrier)
        try await joined.join(timeout: timeout)
        return joined
    }

    /// A room not joined yet, on the platform's transport: call `join(timeout:)`.
    /// Sequences made before joining see everything from the first welcome on.
    public convenience init(configuration: SessionConfiguration) throws(SessionError) {
        self.init(configuration: configuration, transport: try Self.defaultTransport())
    }

    /// A room not joined yet, whose connections `transport` makes (one
    /// transport serves any number of rooms and sessions).
    public init(configuration: SessionConfiguration, transport: any HappyTransport) {
        self.configuration = configuration
        session = HappySession(configuration: configuration, transport: transport)
        hub = RoomHub()
        session.delegate = hub
    }

    /// Opens the connection and waits for the welcome.
    public func join(timeout: Double = 10) async throws(SessionError) {
        session.start()
        let answer = Answer<Void>()
        let outcome = await withTaskCancellationHandler {
            await answer.wait(timeout: timeout, what: { [session] in session.welcomeTimeoutText(timeout) }) { _ in
                hub.whenJoined(answer)
            }
        } onCancel: {
            answer.give(.failure(.cancelled))
        }
        if case .failure(let error) = outcome {
            session.stop(wait: 0)
            throw error
        }
    }

    /// Closes the connection (close 1000) and ends every sequence.
    public func leave() {
        session.stop()
        hub.finish()
    }

    deinit {
        session.stop(wait: 0)
        hub.finish()
    }

    // MARK: intents

    /// Sends `action` and waits for its answer.
    ///
    /// - Returns: the ack: `result` (`.applied`, `.clamped`, `.unchanged`,
    ///   `.blocked` or `.counted`), the event's `seq` and the scene after it.
    /// - Throws: `.refused` with the server's error (`rate_limited`,
    ///   `forbidden`…), `.connectionLost`, `.timeout`, or `.cancelled` when
    ///   the task is cancelled first (the intent may still be applied).
    @discardableResult
    public func perform(_ action: Action, timeout: Double = 10) async throws(SessionError) -> IntentOutcome {
        let answer = Answer<IntentOutcome>()
        let id = Mutex<String?>(nil)
        let result = await withTaskCancellationHandler {
            await answer.wait(timeout: timeout, what: { "no answer to \(action.wireName) within \(Self.seconds(timeout))" }) { give in
                id.withLock { $0 = session.send(action) { give($0) } }
            }
        } onCancel: {
            answer.give(.failure(.cancelled))
        }
        if case .failure = result, let sent = id.withLock({ $0 }) { session.forget(sent) }
        return try result.get()
    }

    /// An application-level ping: the round trip and the server's clock.
    public func ping(timeout: Double = 10) async throws(SessionError) -> PingSample {
        let answer = Answer<PingSample>()
        let result = await withTaskCancellationHandler {
            await answer.wait(timeout: timeout, what: { "no pong within \(Self.seconds(timeout))" }) { give in
                _ = session.ping { give($0) }
            }
        } onCancel: {
            answer.give(.failure(.cancelled))
        }
        return try result.get()
    }

    /// Shows the others where this client points (nil hides it); paced to
    /// the server's batch interval (PROTOCOL.md section 10).
    public func point(_ position: PointerPosition?) {
        session.sendPointer(position)
    }

    // MARK: the app's say

    /// Disconnects until `resume()`, for an app going to the background:
    /// `status` yields `.suspended`, the sequences stay open, nothing
    /// reconnects meanwhile.
    public func suspend() {
        session.suspend()
    }

    /// Connects again after `suspend()` and resumes where the room was left:
    /// `events` yields what happened meanwhile, each event once.
    public func resume() {
        session.resume()
    }

    /// Drops the connection and connects again at once, without backoff, for
    /// when the app knows the network changed (`NWPathMonitor` already does
    /// this where it exists).
    public func reconnectNow() {
        session.reconnectNow()
    }

    // MARK: what the room is now

    /// Everything the room knows at this moment.
    public var snapshot: SessionSnapshot { session.snapshot }
    /// This client, as the server named it.
    public var you: Participant? { session.snapshot.ledger.you }
    /// The scene now (nil before the first welcome).
    public var currentState: Scene? { session.snapshot.ledger.state }

    // MARK: sequences

    /// The room's events, ticks, skipped ranges and resyncs, in order, each
    /// once across reconnects. It starts with what comes after it is made.
    public var events: AsyncStream<RoomUpdate> { hub.updates() }

    /// The scene: now, then after every change (a slow reader gets the latest).
    public var state: AsyncStream<Scene> { hub.states(current: currentState) }

    /// Who is in the room: now, then after every join, leave or batch.
    public var presence: AsyncStream<RoomPresence> {
        let ledger = session.snapshot.ledger
        return hub.presence(current: ledger.room == nil ? nil : RoomPresence(people: ledger.presence,
                                                                            count: ledger.presenceCount))
    }

    /// The others' visible pointers, sorted by id: now, then after every change.
    public var pointers: AsyncStream<[PointerEntry]> {
        hub.pointers(current: session.pointers.values.sorted { $0.id < $1.id })
    }

    /// Everything the connection hears, in order, with each message as the server sent it
    /// (for logs and wire-level tools); starts with what comes after it is made.
    public var wire: AsyncStream<WireRecord> { hub.wire() }

    /// The connection's state: now, then every change (`.waiting` while it reconnects).
    public var status: AsyncStream<ConnectionState> { hub.statuses(current: session.snapshot.connectionState) }

    // MARK: the seed views

    /// Calls `handler` where the session calls its delegate, with every update and the scene after it.
    func observe(_ handler: @escaping @Sendable (RoomUpdate, Scene) -> Void) -> Int { hub.observe(handler) }
    func stopObserving(_ key: Int) { hub.stopObserving(key) }

    // MARK: shared pieces

    static func seconds(_ value: Double) -> String { HappySession.seconds(value) }
}

/// One answer handed from the session to an awaiting task, once: the
/// first of the answer, a cancellation or the timeout wins.
final class Answer<Value: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<Result<Value, SessionError>, Never>?,
                               early: Result<Value, SessionError>?, done: Bool)>((nil, nil, false))

    /// Suspends until `give` is called, at most `timeout` seconds (then
    /// `.timeout(what())`); `start` sends the request with a completion that gives.
    func wait(timeout: Double, what: @escaping @Sendable () -> String,
              _ start: (@escaping @Sendable (Result<Value, SessionError>) -> Void) -> Void)
        async -> Result<Value, SessionError> {
        await withCheckedContinuation { continuation in
            let early = state.withLock { state -> Result<Value, SessionError>? in
                if let early = state.early { return early }
                state.continuation = continuation
                return nil
            }
            if let early { return continuation.resume(returning: early) }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in give(.failure(.timeout(what()))) }
            start { [self] result in give(result) }
        }
    }

    func give(_ result: Result<Value, SessionError>) {
        let waiting = state.withLock { state -> CheckedContinuation<Result<Value, SessionError>, Never>? in
            guard !state.done else { return nil }
            state.done = true
            guard let continuation = state.continuation else {
                state.early = result
                return nil
            }
            state.continuation = nil
            return continuation
        }
        waiting?.resume(returning: result)
    }
}
