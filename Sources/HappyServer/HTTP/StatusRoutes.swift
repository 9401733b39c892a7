import HappyCore

/// `/healthz` and `/metrics`: what the server's owners report about it.
final class StatusRoutes {
    private let coordinator: CommitCoordinator
    private let cluster: ClusterLink
    private let registry: ConnectionRegistry
    private let directory: RoomDirectory
    private let streams: FrameStreams
    private let webhookStats: WebhookStats
    private let responder: HTTPResponder
    private let metrics: Metrics
    private let clock: ServiceClock
    private let serviceLoad: ServiceLoad
    private let startedAt: Double

    init(coordinator: CommitCoordinator, cluster: ClusterLink, registry: ConnectionRegistry, directory: RoomDirectory,
         streams: FrameStreams, webhookStats: WebhookStats, responder: HTTPResponder, metrics: Metrics,
         clock: ServiceClock, serviceLoad: ServiceLoad) {
        self.webhookStats = webhookStats
        self.coordinator = coordinator
        self.cluster = cluster
        self.registry = registry
        self.directory = directory
        self.streams = streams
        self.responder = responder
        self.metrics = metrics
        self.clock = clock
        self.serviceLoad = serviceLoad
        startedAt = clock.fresh()
    }

    func register(in router: inout HTTPRouter) {
        // Probes and scrapers may add parameters of their own: not checked.
        router.add(["GET", "HEAD"], .exact("/healthz"), parameters: nil) { [self] in health($0) }
        router.add(["GET"], .exact("/metrics"), parameters: nil) { [self] in
            let text = MetricsRenderer.render(metrics, gauges()) + (cluster.followedPrimary?.prometheusText ?? "")
            responder.respond($0.exchange, HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4",
                                                        body: Array(text.utf8)))
        }
    }

    /// What is wrong, one line each: the store failing, commits in doubt,
    /// the cluster subscriber disconnected (each with since when).
    func healthProblems() -> [String] {
        coordinator.healthProblems() + (cluster.linkProblem.map { [$0] } ?? [])
    }

    /// `ok`, or 503 with one line per problem; then the Redis primary followed, in cluster mode.
    private func health(_ request: HTTPRequest) {
        let problems = healthProblems()
        let notes = cluster.followedPrimary.map { [$0.healthLine()] } ?? []
        if problems.isEmpty {
            let text = (["ok"] + notes).joined(separator: "\n")
            responder.respond(request.exchange,
                              HTTPResponse(status: 200, contentType: "text/plain", body: Array(text.utf8)))
        } else {
            responder.respond(request.exchange, HTTPResponse(
                status: 503, contentType: "text/plain",
                body: Array((problems.map { "unavailable: \($0)" } + notes).joined(separator: "\n").utf8)))
        }
    }

    /// The gauges of `/metrics`, read from their owners.
    func gauges() -> MetricsGauges {
        MetricsGauges(connections: registry.connections.count, rooms: directory.rooms.count,
                      occupiedRooms: directory.occupiedCount, storeHealthy: coordinator.storeHealthy,
                      frameStreams: streams.open.count,
                      tickingRooms: directory.rooms.values.filter { $0.crowd.mode == .tick }.count,
                      webhooksDelivered: webhookStats.delivered.load(ordering: .relaxed),
                      webhookBatches: webhookStats.batches.load(ordering: .relaxed),
                      webhookFailedAttempts: webhookStats.failedAttempts.load(ordering: .relaxed),
                      webhooksDropped: webhookStats.dropped.load(ordering: .relaxed),
                      serviceBusyRatio: serviceLoad.busyShare(),
                      uptimeSeconds: clock.fresh() - startedAt,
                      process: ProcessStats.read())
    }
}
