import Foundation
import HappyCore
import HappyLWS

/// Why the server could not start.
public struct ServerError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The Happy server: the composition root that builds the components and
/// wires them to one libwebsockets context, whose service thread owns all
/// of them. Only `requestShutdown()` may be called from another thread.
/// docs/architecture.md maps the components.
public final class HappyServer: @unchecked Sendable {
    public let config: HappyConfig
    let logger: Logger
    let metrics = Metrics()
    let inbox = WakeInbox()
    let clock: ServiceClock
    let lifecycle = ServerLifecycle()
    /// The lws context, once started.
    private var host: LWSServerHost?
    private var dispatch: ServerDispatch?
    private var timers: ServerTimers?
    /// The sweep is set more than a second ahead.
    private var sweepIsFarOff = false
    private let signals = ShutdownSignals()
    private let startedAt: Double

    // The components, in the order they are built.
    let broadcaster: Broadcaster
    let access: AccessControl
    let coordinator: CommitCoordinator
    let directory: RoomDirectory
    let history: RoomHistory
    let responder: HTTPResponder
    let api: APIRoutes
    let frames: FrameService
    let cluster: ClusterLink
    let delivery: IntentDelivery
    let pointers: PointerService
    let intake: MessageIntake
    let registry: ConnectionRegistry
    let addressLimits: AddressLimits
    let http: HTTPIntake

    private var shutdownDeadline = 0.0
    private var closingClients = false
    private var stopped = false

    public var boundPort: Int { host?.boundPort ?? 0 }

    /// Everything the server depends on comes in here: the store, the
    /// cluster bus (cluster mode) and the token verifier (`auth.secret`).
    public convenience init(config: HappyConfig, store: any RoomStore, logger: Logger,
                            tokenVerifier: TokenVerifier? = nil, clusterBus: (any ClusterBus)? = nil) {
        self.init(config: config, store: store, logger: logger, tokenVerifier: tokenVerifier, clusterBus: clusterBus,
                  time: SystemTimeSource.shared)
    }

    init(config: HappyConfig, store: any RoomStore, logger: Logger, tokenVerifier: TokenVerifier?,
         clusterBus: (any ClusterBus)?, time: any TimeSource) {
        self.config = config
        self.logger = logger
        clock = ServiceClock(source: time)
        startedAt = clock.fresh()
        let limits = config.limits
        broadcaster = Broadcaster(metrics: metrics, clock: clock, logger: logger,
                                  presenceBroadcastMax: limits.presenceBroadcastMax)
        let scratch = broadcaster.scratch + OutboundFrame.headroom
        access = AccessControl(auth: config.auth, verifier: tokenVerifier, clock: clock)
        coordinator = CommitCoordinator(worker: StoreWorker(store: store, inbox: inbox),
                                        reducer: SceneReducer(rules: config.sceneRules), clock: clock,
                                        metrics: metrics, logger: logger)
        directory = RoomDirectory(config: config, coordinator: coordinator, clusterBus: clusterBus, clock: clock,
                                  metrics: metrics, logger: logger)
        history = RoomHistory(coordinator: coordinator, directory: directory, defaults: config.sceneRules.defaults)
        responder = HTTPResponder(metrics: metrics, logger: logger, scratch: scratch,
                                  scratchBytes: Broadcaster.writeBatchBytes)
        var renderMetrics: () -> String = { "" }
        api = APIRoutes(config: config, directory: directory, access: access, coordinator: coordinator,
                        history: history, lifecycle: lifecycle, responder: responder, metrics: metrics, clock: clock,
                        renderMetrics: { renderMetrics() })
        frames = FrameService(config: config, directory: directory, history: history, lifecycle: lifecycle,
                              responder: responder, metrics: metrics, logger: logger, clock: clock, scratch: scratch,
                              scratchBytes: Broadcaster.writeBatchBytes, roomAndRole: { [api] in api.roomAndRole($0) })
        cluster = ClusterLink(bus: clusterBus, directory: directory, coordinator: coordinator, broadcaster: broadcaster,
                              streams: frames.streams, config: config, metrics: metrics, logger: logger)
        delivery = IntentDelivery(directory: directory, broadcaster: broadcaster, responder: responder, streams: frames.streams,
                                  cluster: cluster, metrics: metrics)
        coordinator.delegate = delivery
        pointers = PointerService(limits: limits, broadcaster: broadcaster, metrics: metrics, clock: clock)
        intake = MessageIntake(limits: limits, access: access, coordinator: coordinator, broadcaster: broadcaster,
                               pointers: pointers, lifecycle: lifecycle, metrics: metrics, logger: logger, clock: clock)
        registry = ConnectionRegistry(config: config, directory: directory, access: access, intake: intake,
                                      broadcaster: broadcaster, pointers: pointers, clusterBus: clusterBus,
                                      lifecycle: lifecycle, metrics: metrics, logger: logger, clock: clock)
        addressLimits = AddressLimits(cap: limits.maxConnectionsPerAddress, trustedProxies: config.proxies,
                                      metrics: metrics, logger: logger)
        http = HTTPIntake(responder: responder, addressLimits: addressLimits, access: access, config: config,
                          metrics: metrics, logger: logger, clock: clock)
        frames.onArtLoaded = { [coordinator] labels in coordinator.dragonStatus = labels }
        api.register(in: &http.router)
        frames.register(in: &http.router)
        renderMetrics = { [unowned self] in MetricsRenderer.render(metrics, gauges()) }
    }

    /// The gauges of `/metrics`, read from their owners.
    func gauges() -> MetricsGauges {
        MetricsGauges(connections: registry.connections.count, rooms: directory.rooms.count,
                      occupiedRooms: directory.occupiedCount, storeHealthy: coordinator.storeHealthy,
                      frameStreams: frames.streams.open.count, uptimeSeconds: clock.fresh() - startedAt,
                      process: ProcessStats.read())
    }

    // MARK: start

    /// Loads the art, creates the lws context and starts listening.
    public func start() throws(ServerError) {
        let webRoot = try checkedWebRoot()
        try frames.load(webRoot: webRoot, inbox: inbox)
        LWSProcess.ignoreBrokenPipeSignal()
        let fdLimit = LWSProcess.raiseDescriptorLimit()
        let dispatch = ServerDispatch(server: self)
        self.dispatch = dispatch
        let host: LWSServerHost
        do {
            host = try LWSServerHost(LWSServerDescription(config: config, webRoot: webRoot,
                                                          mountPoints: http.router.mountPoints,
                                                          debugLogging: logger.isEnabled(.debug)),
                                     handler: dispatch)
        } catch .contextNotCreated {
            throw ServerError("could not create the libwebsockets context")
        } catch {
            throw ServerError("could not listen on \(config.host):\(config.port) "
                + "(is the port in use or the address not local? change \"port\"/\"host\" or use --port)")
        }
        self.host = host
        inbox.attach(host.context)
        let timers = ServerTimers(context: host.context,
                                  afterEach: { [unowned self] in broadcaster.writeDeferredNow() },
                                  sweep: { [unowned self] in sweep() },
                                  streams: { [unowned self] in frames.streams.tick() },
                                  pointers: { [unowned self] in pointers.tick() })
        self.timers = timers
        frames.streams.scheduleTick = timers.scheduleStreams
        pointers.scheduleTick = timers.schedulePointers
        registry.releaseFreeMemory = LWSProcess.releaseFreeMemory
        cluster.start(inbox: inbox)
        timers.scheduleSweep(afterSeconds: 1)
        signals.install(posting: inbox)
        let scheme = config.tls.isEnabled ? "https" : "http"
        logger.lifecycle("listening", ["url": "\(scheme)://\(config.host):\(boundPort)/", "port": "\(boundPort)",
                                       "store": coordinator.storeKind, "webRoot": config.webRoot,
                                       "fdLimit": "\(fdLimit)"])
    }

    /// The absolute path of `webRoot`, which must be a directory.
    private func checkedWebRoot() throws(ServerError) -> String {
        let webRoot = URL(fileURLWithPath: config.webRoot).standardizedFileURL.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: webRoot, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ServerError("webRoot \"\(config.webRoot)\" (\(webRoot)) is not a directory; set \"webRoot\" in the config")
        }
        return webRoot
    }

    // MARK: run

    /// Serves until shut down. Call from the thread that called `start()`.
    public func run() {
        ServiceThread.claim()
        guard let host else { return }
        while !stopped {
            // What a turn queues is written at its end, coalesced per client,
            // to every client whose transport holds nothing back.
            let serving = broadcaster.writingAfter { () -> Bool in
                guard host.service() else { return false }
                afterServiceTurn()
                return true
            }
            if !serving { break }
        }
        teardown()
    }

    /// Asks the server to stop; safe from any thread.
    public func requestShutdown() {
        inbox.post(.shutdownRequested(signal: 0))
    }

    /// Work due at the end of every loop turn: the group commit.
    func afterServiceTurn() {
        clock.nextTurn()
        coordinator.flush()
        // A stream opened or a room emptied while the sweep was set far off.
        if sweepIsFarOff && sweepNeededEverySecond { scheduleSweep() }
        if lifecycle.isShuttingDown { continueShutdown() }
    }

    /// Keepalive, streams, idle rooms, rate-limit state: every second while
    /// frame streams are open or rooms without clients wait to leave memory,
    /// else every `registry.sweepInterval`.
    func sweep() {
        ServiceThread.assertCurrent()
        let now = clock.fresh()
        registry.sweep(now: now)
        frames.streams.sweep(now: now)
        directory.evictIdleRooms(now: now)
        api.sweep(now: now)
        scheduleSweep()
    }

    /// Frame streams retry, and rooms without clients leave memory, within
    /// a second of their time; WebSocket keepalive alone needs less.
    private var sweepNeededEverySecond: Bool {
        !frames.streams.open.isEmpty || directory.rooms.count > directory.occupiedCount
    }

    private func scheduleSweep() {
        let interval = sweepNeededEverySecond ? 1 : registry.sweepInterval
        sweepIsFarOff = interval > 1
        timers?.scheduleSweep(afterSeconds: interval)
    }

    /// Stops taking intents; once the last group commit is out, every client
    /// gets what was recorded and then close 1001.
    func beginShutdown(signal: Int32) {
        guard !lifecycle.isShuttingDown else { return }
        lifecycle.beginShutdown()
        shutdownDeadline = clock.fresh() + 3
        logger.lifecycle("shutting down", ["signal": signal == 0 ? "request" : "\(signal)",
                                           "connections": "\(registry.connections.count)",
                                           "streams": "\(frames.streams.open.count)"])
    }

    /// Runs after every loop turn while shutting down (the sweep timer
    /// guarantees a turn at least every second).
    private func continueShutdown() {
        if !closingClients && coordinator.isIdle {
            closingClients = true
            // Time to deliver what is recorded, then for the close handshakes.
            shutdownDeadline = max(shutdownDeadline, clock.fresh() + 1 + Double(Broadcaster.closeAckSeconds))
            registry.closeAll(reason: "server shutting down")
            frames.streams.endStreams()
        }
        if (closingClients && registry.connections.isEmpty && frames.streams.open.isEmpty) || clock.fresh() > shutdownDeadline {
            stopped = true
        }
    }

    private func teardown() {
        signals.cancel()
        inbox.attach(nil)
        cluster.stop()
        timers?.cancelAll()
        host?.destroy()
        coordinator.close()
        logger.lifecycle("stopped", ["intents": "\(metrics.intents.values.reduce(0, +))", "events": "\(metrics.events)"])
    }

    /// What other threads handed back: store results, renders, cluster news, signals.
    func drainInbox() {
        ServiceThread.assertCurrent()
        for message in inbox.drain() {
            switch message {
            case .roomLoaded(let room, let result):
                directory.roomLoaded(room, result: result)
            case .roomRefreshed(let room, let result):
                cluster.roomRefreshed(room, result: result)
            case .commitFinished(let batch, let result, let seconds):
                coordinator.commitFinished(batch: batch, result: result, seconds: seconds)
            case .shutdownRequested(let signal):
                beginShutdown(signal: signal)
            case .task(let task):
                task.run()
            }
        }
    }
}
