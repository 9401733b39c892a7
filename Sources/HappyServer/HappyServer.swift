import Foundation
import HappyCore
import HappyLWS
import HappyRender

/// Why the server could not start.
public struct ServerError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The Happy server: the composition root. `init` builds every component
/// with what it needs, in dependency order; `start()` listens and `run()`
/// serves on the calling thread (the service thread), which owns all of
/// them. Only `requestShutdown()` may be called from another thread.
/// docs/architecture.md maps the components.
public final class HappyServer: @unchecked Sendable {
    /// The configuration in force (a reload replaces what can change while running).
    public internal(set) var config: HappyConfig
    /// Reads the configuration file again for a reload (SIGHUP); nil: there is none.
    let readConfiguration: (@Sendable () -> Result<HappyConfig, ConfigError>)?
    let logger: Logger
    let metrics = Metrics()
    let refusals: RefusalLog
    let inbox = WakeInbox()
    let clock: ServiceClock
    /// How busy the service thread is, measured at each loop turn.
    let serviceLoad: ServiceLoad
    let lifecycle = ServerLifecycle()
    private let webRoot: String
    private let timers: any ServerTimerSource
    private let signals = ProcessSignals()
    /// What an upgrade starts again (nil: upgrades are not offered, as in tests).
    let image: ProcessImage?
    /// An upgrade under way: the new process and how far it got.
    var upgrade: (handover: ProcessHandover, phase: UpgradePhase, deadline: Double)?
    /// The listening socket, owned here so that an upgrade can pass it on.
    private var listenSocket: LWSListenSocket?
    /// The descriptors this process may hold, set at start for `limits.maxClients`.
    private(set) var descriptorLimit = 0
    /// Clients are closed with this when the server stops (1012 when another takes over).
    var closing = (code: WebSocketCloseCode.goingAway, reason: "server shutting down")

    // The components, in the order they are built.
    let store: any StoreAccess
    /// The store itself, for what is asked of it beside the store calls (the webhooks' outbox and list).
    let roomStore: any RoomStore
    /// Where the webhook senders read; opened at start, or by the reload that lists the first webhook.
    var webhookOutbox: (any WebhookOutbox)?
    let senders: WebhookSenders
    let webhooks: WebhookFeed
    let broadcaster: Broadcaster
    let access: AccessControl
    let admission: IntentAdmission
    let responder: HTTPResponder
    let replies: Replies
    let streams: FrameStreams
    let crowd: CrowdDelivery
    let delivery: IntentDelivery
    let catchUp: RoomCatchUp
    let coordinator: CommitCoordinator
    let votes: VoteCounter
    let router: IntentRouter
    let directory: RoomDirectory
    let cluster: ClusterLink
    let history: RoomHistory
    let pointers: PointerService
    let intake: MessageIntake
    let registry: ConnectionRegistry
    let addressLimits: AddressLimits
    let api: APIRoutes
    let operatorGate: OperatorGate
    let operators: OperatorRoutes
    let backups: BackupService
    let frames: FrameService
    let status: StatusRoutes
    let http: HTTPIntake
    let gate: HTTPGate
    let dispatch: ServerDispatch

    /// The lws context, once started.
    private var host: LWSServerHost?
    /// The sweep is set more than a second ahead.
    private var sweepIsFarOff = false
    private var shutdownDeadline = 0.0
    private var closingClients = false
    private var stopped = false

    public var boundPort: Int { host?.boundPort ?? 0 }
    /// The listening socket's descriptor, once started.
    var listenDescriptor: Int32? { listenSocket?.descriptor }
    /// 0 after a clean stop or handover; 1 when an upgrade failed after the store was released.
    public internal(set) var exitStatus: Int32 = 0

    /// Everything the server depends on comes in here: the store, the
    /// cluster bus (cluster mode), the token verifier (`auth.secret`) and the
    /// operator key (without `auth.secret`: PROTOCOL.md section 13).
    /// Throws when `webRoot` or the scene art in it cannot be read.
    /// `webhookPoster` sends the webhooks' batches (PROTOCOL.md section 13).
    /// `image`: the binary and arguments an upgrade (SIGUSR2) starts again.
    public convenience init(config: HappyConfig, store: any RoomStore, logger: Logger,
                            tokenVerifier: TokenVerifier? = nil, operatorKey: OperatorKey? = nil,
                            clusterBus: (any ClusterBus)? = nil,
                            webhookPoster: (any WebhookPoster)? = nil, image: ProcessImage? = nil,
                            readConfiguration: (@Sendable () -> Result<HappyConfig, ConfigError>)? = nil) throws(ServerError) {
        try self.init(config: config, store: store, logger: logger, tokenVerifier: tokenVerifier, operatorKey: operatorKey,
                      clusterBus: clusterBus, time: SystemTimeSource.shared, timers: LWSServerTimers(),
                      webhookPoster: webhookPoster, image: image, readConfiguration: readConfiguration)
    }

    /// `storeAccess` stands in for the store worker (tests run store calls step by step).
    init(config: HappyConfig, store: any RoomStore, logger: Logger, tokenVerifier: TokenVerifier?,
         operatorKey: OperatorKey? = nil, clusterBus: (any ClusterBus)?, time: any TimeSource,
         timers: any ServerTimerSource, storeAccess: (any StoreAccess)? = nil,
         webhookPoster: (any WebhookPoster)? = nil, image: ProcessImage? = nil,
         readConfiguration: (@Sendable () -> Result<HappyConfig, ConfigError>)? = nil) throws(ServerError) {
        self.config = config
        self.image = image
        self.readConfiguration = readConfiguration
        self.logger = logger
        self.timers = timers
        clock = ServiceClock(source: time)
        serviceLoad = ServiceLoad(clock: clock)
        refusals = RefusalLog(logger: logger, clock: clock)
        webRoot = try Self.checkedWebRoot(config.webRoot)
        let art = try FrameService.loadArt(webRoot: webRoot)
        let labels = art.panel.status
        let limits = config.limits
        let rules = config.sceneRules

        self.store = storeAccess ?? (store.isSynchronous ? InlineStore(store) : StoreWorker(store: store, inbox: inbox))
        roomStore = store
        if config.webhooks.isEmpty {
            webhookOutbox = nil
        } else {
            do {
                webhookOutbox = try store.webhookOutbox()
            } catch {
                throw ServerError("webhooks: \(error.message)")
            }
        }
        senders = WebhookSenders(webhooks: config.webhooks, queueMax: config.webhookQueueMax, poster: webhookPoster,
                                 logger: logger)
        webhooks = WebhookFeed(routing: WebhookRouting(config.webhooks), store: self.store, senders: senders, clock: clock,
                               logger: logger)
        let presenceListing = PresenceListing(config: config)
        broadcaster = Broadcaster(metrics: metrics, clock: clock, logger: logger, presenceListing: presenceListing)
        access = AccessControl(auth: config.auth, verifier: tokenVerifier, operatorKey: operatorKey, clock: clock)
        admission = IntentAdmission(access: access, lifecycle: lifecycle, metrics: metrics, limits: limits)
        let roomAccess = RoomAccess(access: access, defaultRoom: config.defaultRoom,
                                    scheme: config.tls.isEnabled ? "https" : "http")
        let securityHeaders = SecurityHeaders(tls: config.tls.isEnabled)
        responder = HTTPResponder(security: securityHeaders, metrics: metrics, refusals: refusals)
        replies = Replies(broadcaster: broadcaster, responder: responder, metrics: metrics)
        let producer = FrameProducer(renderer: FrameRenderer(art: art, geometry: rules.geometry), inbox: inbox,
                                     metrics: metrics, releaseFreeMemory: LWSProcess.releaseFreeMemory)
        streams = FrameStreams(producer: producer, config: config, responder: responder, timers: timers, metrics: metrics,
                               logger: logger, clock: clock)
        crowd = CrowdDelivery(settings: config.crowd, presenceBroadcastMax: limits.presenceBroadcastMax,
                              broadcaster: broadcaster, replies: replies, timers: timers, metrics: metrics,
                              logger: logger, clock: clock, serviceLoad: serviceLoad)
        delivery = IntentDelivery(crowd: crowd, replies: replies, broadcaster: broadcaster, streams: streams,
                                  metrics: metrics)
        catchUp = RoomCatchUp(defaults: rules.defaults, delivery: delivery, metrics: metrics, logger: logger)
        coordinator = CommitCoordinator(store: self.store, reducer: SceneReducer(rules: rules), publisher: delivery,
                                        catchUp: catchUp, webhooks: webhooks, clock: clock, metrics: metrics,
                                        logger: logger)
        votes = VoteCounter(settings: config.crowd, coordinator: coordinator, replies: replies, timers: timers,
                            metrics: metrics, clock: clock)
        router = IntentRouter(votes: votes, coordinator: coordinator)
        directory = RoomDirectory(config: config, labels: labels, store: self.store, coordinator: coordinator,
                                  webhooks: webhooks, clusterBus: clusterBus, clock: clock, metrics: metrics,
                                  logger: logger)
        cluster = ClusterLink(bus: clusterBus, inbox: inbox, directory: directory, coordinator: coordinator,
                              store: self.store, crowd: crowd, logger: logger)
        history = RoomHistory(store: self.store, labels: labels, defaults: rules.defaults)
        pointers = PointerService(limits: limits, broadcaster: broadcaster, timers: timers, metrics: metrics, clock: clock)
        intake = MessageIntake(admission: admission, router: router, broadcaster: broadcaster, pointers: pointers,
                               metrics: metrics, logger: logger, clock: clock)
        registry = ConnectionRegistry(config: config, directory: directory, access: access, intake: intake,
                                      broadcaster: broadcaster, crowd: crowd, webhooks: webhooks, pointers: pointers,
                                      clusterBus: clusterBus,
                                      lifecycle: lifecycle, refusals: refusals, metrics: metrics, logger: logger, clock: clock,
                                      releaseFreeMemory: LWSProcess.releaseFreeMemory)
        addressLimits = AddressLimits(cap: limits.maxConnectionsPerAddress, trustedProxies: config.proxies,
                                      metrics: metrics, refusals: refusals)
        api = APIRoutes(config: config, directory: directory, roomAccess: roomAccess, admission: admission,
                        router: router, history: history, responder: responder, metrics: metrics, clock: clock)
        operatorGate = OperatorGate(access: access, check: OperatorRequestCheck(config: config), responder: responder)
        operators = OperatorRoutes(directory: directory, gate: operatorGate, headers: securityHeaders,
                                   broadcaster: broadcaster, coordinator: coordinator, store: self.store,
                                   responder: responder, logger: logger, webRoot: webRoot)
        backups = BackupService(settings: config.backup, dataDir: config.dataDir, store: store, gate: operatorGate,
                                responder: responder, inbox: inbox, timers: timers, metrics: metrics, logger: logger)
        frames = FrameService(producer: producer, streams: streams, config: config, directory: directory, history: history,
                              roomAccess: roomAccess, lifecycle: lifecycle, responder: responder, metrics: metrics,
                              logger: logger, clock: clock)
        status = StatusRoutes(coordinator: coordinator, cluster: cluster, registry: registry, directory: directory,
                              streams: streams, webhookStats: senders.stats, responder: responder, metrics: metrics,
                              clock: clock, serviceLoad: serviceLoad)
        var router = HTTPRouter()
        status.register(in: &router)
        api.register(in: &router)
        operators.register(in: &router)
        backups.register(in: &router)
        frames.register(in: &router)
        http = HTTPIntake(router: router, responder: responder, addressLimits: addressLimits, access: access,
                          config: config, refusals: refusals, metrics: metrics, logger: logger, clock: clock)
        gate = HTTPGate(router: router, webRoot: webRoot, limits: limits, metrics: metrics, refusals: refusals, clock: clock)
        dispatch = ServerDispatch(registry: registry, intake: intake, broadcaster: broadcaster, http: http, gate: gate,
                                  responder: responder, addressLimits: addressLimits, compression: config.compression,
                                  clock: clock, logger: logger)
        timers.schedule(.sweep, afterSeconds: 1)
    }

    /// Throws what would keep a server on `config` from starting (webRoot, the
    /// art), short of the store: a process taking over checks it before the
    /// running one lets go.
    public static func checkStartable(_ config: HappyConfig) throws(ServerError) {
        _ = try FrameService.loadArt(webRoot: checkedWebRoot(config.webRoot))
    }

    /// The absolute path of `webRoot`, which must be a directory.
    private static func checkedWebRoot(_ configured: String) throws(ServerError) -> String {
        let webRoot = URL(fileURLWithPath: configured).standardizedFileURL.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: webRoot, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ServerError("webRoot \"\(configured)\" (\(webRoot)) is not a directory; set \"webRoot\" in the config")
        }
        return webRoot
    }

    // MARK: start

    /// Creates the lws context and starts listening: on `inheritedListener`
    /// (the socket of the process this one takes over from), else on `host:port`.
    public func start(inheritedListener: Int32? = nil) throws(ServerError) {
        LWSProcess.ignoreBrokenPipeSignal()
        LWSProcess.mapLargeAllocations()
        descriptorLimit = LWSProcess.setDescriptorLimit(config.limits.descriptorsNeeded)
        let listenSocket: LWSListenSocket
        do throws(LWSListenError) {
            if let inheritedListener {
                listenSocket = try LWSListenSocket.inherited(descriptor: inheritedListener)
            } else {
                listenSocket = try LWSListenSocket.open(host: config.host, port: config.port)
            }
        } catch {
            throw ServerError("could not listen on \(config.host):\(config.port): \(error.description) "
                + "(is the port in use or the address not local? change \"port\"/\"host\" or use --port)")
        }
        var description = LWSServerDescription(config: config, webRoot: webRoot, mountPoints: http.router.mountPoints,
                                               crossOrigin: http.crossOrigin, debugLogging: logger.isEnabled(.debug))
        description.listenSocket = listenSocket
        let host: LWSServerHost
        do {
            host = try LWSServerHost(description, handler: dispatch)
        } catch {
            throw ServerError("could not create the libwebsockets context")
        }
        self.host = host
        self.listenSocket = listenSocket
        startAccepting()
        inbox.attach(host.context)
        timers.attach(host.context)
        cluster.start()
        startWebhooks()
        signals.install(posting: inbox)
        let scheme = config.tls.isEnabled ? "https" : "http"
        logger.lifecycle("listening", ["url": "\(scheme)://\(config.host):\(boundPort)/", "port": "\(boundPort)",
                                       "store": store.kind, "webRoot": config.webRoot, "fdLimit": "\(descriptorLimit)"])
        for warning in ExposureWarnings.check(config) { logger.warn(warning) }
    }

    /// Takes connections from the listening socket (the per-address cap decides at accept).
    func startAccepting() {
        host?.startAccepting { [addressLimits] address, fd in addressLimits.accept(address: address, fd: fd) }
    }

    /// Leaves new connections in the socket's backlog, for the process taking over.
    func stopAccepting() {
        host?.stopAccepting()
    }

    // MARK: run

    /// Further lws services a loop turn may take while messages keep coming in.
    static let readAheadTurns = 16

    /// Serves until shut down. Call from the thread that called `start()`.
    public func run() {
        ServiceThread.claim()
        guard let host else { return }
        while !stopped {
            // What a turn queues is written at its end, coalesced per client,
            // to every client whose transport holds nothing back.
            let serving = broadcaster.writingAfter { () -> Bool in
                guard host.service(), readOn(host) else { return false }
                // The wait ended this turn; the work since the last one did not wait.
                if let waited = host.takeWaitedSeconds() { serviceLoad.waited(waited) }
                afterServiceTurn()
                return true
            }
            if !serving { break }
        }
        teardown()
    }

    /// While messages come in, reads on without waiting before the turn ends
    /// (lws reads rx_buffer_size bytes of a socket a turn): a fast sender's
    /// intents then share one write per client (and one group commit), as a
    /// larger buffer per connection would give. A timer that fired ends the
    /// turn, so its work (pointer batches, ticks) is not held back. False
    /// when lws failed.
    private func readOn(_ host: LWSServerHost) -> Bool {
        var extraTurns = 0
        while extraTurns < Self.readAheadTurns && !timers.hasDue && intake.takeReceived() {
            guard host.serviceWithoutWaiting() else { return false }
            extraTurns += 1
        }
        return true
    }

    /// Asks the server to stop; safe from any thread.
    public func requestShutdown() {
        inbox.post(.signal(.shutdown(0)))
    }

    /// Work due at the end of every loop turn: what other threads handed
    /// back, the timers that fired, the group commit.
    func afterServiceTurn() {
        ServiceThread.assertCurrent()
        clock.nextTurn()
        drainInbox()
        runDueTimers()
        webhooks.flush()
        coordinator.flush()
        if upgrade != nil { continueUpgrade() }
        // A stream opened or a room emptied while the sweep was set far off.
        if sweepIsFarOff && sweepNeededEverySecond { scheduleSweep() }
        if lifecycle.isShuttingDown { continueShutdown() }
    }

    /// What other threads handed back: store results, renders, cluster news, signals.
    func drainInbox() {
        for message in inbox.drain() {
            switch message {
            case .task(let task): task.run()
            case .signal(.shutdown(let signal)): beginShutdown(signal: signal)
            case .signal(.reload): reload()
            case .signal(.upgrade): beginUpgrade()
            case .handover(let message): handover(message)
            }
        }
    }

    func runDueTimers() {
        for timer in timers.takeDue() { fire(timer) }
    }

    /// One timer's work.
    func fire(_ timer: ServerTimer) {
        switch timer {
        case .sweep: sweep()
        case .streams: streams.tick()
        case .pointers: pointers.tick()
        case .ticks: crowd.tick()
        case .votes: votes.tick()
        case .backups: backups.tick()
        case .restartWave: registry.closeAll(code: closing.code, reason: closing.reason)
        }
    }

    /// Keepalive, streams, idle rooms, rate-limit state: every second while
    /// frame streams are open or rooms without clients wait to leave memory,
    /// else every `registry.sweepInterval`.
    private func sweep() {
        let now = clock.fresh()
        registry.sweep(now: now)
        streams.sweep(now: now)
        directory.evictIdleRooms(now: now)
        api.sweep(now: now)
        gate.sweep(now: now)
        refusals.flush(now: now)
        scheduleSweep()
    }

    /// Frame streams retry, and rooms without clients leave memory, within
    /// a second of their time; WebSocket keepalive alone needs less.
    private var sweepNeededEverySecond: Bool {
        !streams.open.isEmpty || directory.holdsIdleRooms
    }

    private func scheduleSweep() {
        let interval = sweepNeededEverySecond ? 1 : registry.sweepInterval
        sweepIsFarOff = interval > 1
        timers.schedule(.sweep, afterSeconds: interval)
    }

    // MARK: shutdown

    /// Stops taking intents; once the last group commit is out, every client
    /// gets what was recorded and then close 1001.
    func beginShutdown(signal: Int32) {
        if upgrade?.phase == .starting {
            upgrade?.handover.abandon()
            upgrade = nil
        }
        guard !lifecycle.isShuttingDown else { return }
        lifecycle.beginShutdown()
        // A node of a cluster going away is a restart to its clients: the other nodes serve their rooms.
        if cluster.sharesRooms { closing = (.serviceRestart, WebSocketCloseCode.serviceRestartReason) }
        SystemdNotify.send("STOPPING=1")
        shutdownDeadline = clock.fresh() + 3
        logger.lifecycle("shutting down", ["signal": signal == 0 ? "request" : "\(signal)",
                                           "connections": "\(registry.connections.count)",
                                           "streams": "\(streams.open.count)"])
    }

    /// Runs after every loop turn while shutting down (the sweep timer
    /// guarantees a turn at least every second).
    private func continueShutdown() {
        // In an upgrade the clients stay until the new process serves.
        if holdsClientsForUpgrade { return }
        if !closingClients && coordinator.isIdle { closeClients() }
        if (closingClients && registry.connections.isEmpty && streams.open.isEmpty) || clock.fresh() > shutdownDeadline {
            stopped = true
        }
    }

    /// Every client gets what was recorded, then `closing`'s close frame.
    func closeClients() {
        guard !closingClients else { return }
        closingClients = true
        // Time to deliver what is recorded, then for the close handshakes.
        shutdownDeadline = max(shutdownDeadline, clock.fresh() + 1 + Double(Broadcaster.closeAckSeconds))
        if closing.code == .serviceRestart && registry.closeRecentWriters(code: closing.code, reason: closing.reason) {
            timers.schedule(.restartWave, afterSeconds: ConnectionRegistry.restartWaveDelay)
        } else {
            registry.closeAll(code: closing.code, reason: closing.reason)
        }
        streams.endStreams()
    }

    /// Lets go of the store for the process taking over: nothing of this one
    /// holds the database (or its lock) any more.
    func releaseStore() {
        senders.stop()
        backups.stop()
        webhookOutbox?.close()
        coordinator.release()
    }

    private func teardown() {
        signals.cancel()
        inbox.attach(nil)
        cluster.stop()
        timers.cancelAll()
        host?.destroy()
        senders.stop()
        backups.stop()
        coordinator.close()
        logger.lifecycle("stopped", ["intents": "\(metrics.intents.values.reduce(0, +))", "events": "\(metrics.events)"])
    }
}
