import Dispatch
import Foundation
import HappyCore

/// Online backups of the store (docs/operations.md, Backups): every
/// `backup.everySeconds` into `backup.dir`, and at once on
/// `POST /api/backup` (what `happyserver backup` asks), keeping the newest
/// `backup.keep`. The store copies itself on a connection of its own, on
/// the backup thread: neither the service thread nor the store worker's
/// commit queue waits for it, so writes go on. The outcome comes back
/// through the inbox.
final class BackupService {
    /// What a backup came to.
    struct Outcome: Sendable {
        var path: String
        var bytes: Int64
        var seconds: Double
        /// Older backups deleted after it, beyond `keep`.
        var removed: [String]
    }

    private enum Trigger: String {
        case periodic, request
    }

    private let store: any RoomStore
    private let folder: BackupFolder
    private let everySeconds: Int
    private let gate: OperatorGate
    private let responder: HTTPResponder
    private let inbox: WakeInbox
    private let timers: any TimerScheduling
    private let metrics: Metrics
    private let logger: Logger
    private let queue = DispatchQueue(label: "happy.backup")
    /// A backup is being written.
    private(set) var isRunning = false
    /// Requests the backup being written answers.
    private var answering: [HTTPExchange] = []
    /// Requests that came while a backup was being written: the next one,
    /// taken after they asked, answers them.
    private var waiting: [HTTPExchange] = []
    /// The store cannot make backups: periodic ones stop after the first try.
    private var periodicOff = false

    init(settings: HappyConfig.BackupSection, dataDir: String, store: any RoomStore, gate: OperatorGate,
         responder: HTTPResponder, inbox: WakeInbox, timers: any TimerScheduling, metrics: Metrics, logger: Logger) {
        folder = BackupFolder(settings: settings, dataDir: dataDir)
        everySeconds = settings.everySeconds
        self.store = store
        self.gate = gate
        self.responder = responder
        self.inbox = inbox
        self.timers = timers
        self.metrics = metrics
        self.logger = logger
        if everySeconds > 0 { timers.schedule(.backups, afterSeconds: firstDelay(now: Date())) }
    }

    /// The first periodic backup is due `everySeconds` after the newest in
    /// the folder (within a second when that is overdue): restarts do not put it off.
    private func firstDelay(now: Date) -> Double {
        guard let newest = BackupFolder.newest(of: folder.names()) else { return Double(everySeconds) }
        return min(Double(everySeconds), max(1, newest.timeIntervalSince(now) + Double(everySeconds)))
    }

    func register(in router: inout HTTPRouter) {
        router.add(["POST"], .exact("/api/backup"), parameters: []) { [self] in requestBackup($0) }
    }

    /// `POST /api/backup`: answered once a backup taken after the request is
    /// written, `{"path", "bytes", "seconds"}`; 409 when the store cannot make one.
    private func requestBackup(_ request: HTTPRequest) {
        guard gate.admits(request, room: nil) else { return }
        // A large database takes a while: lws must not end the request meanwhile.
        request.exchange.transport.keepOpenWithoutTimeout()
        waiting.append(request.exchange)
        if !isRunning { begin(.request) }
    }

    /// The periodic timer fired.
    func tick() {
        guard !periodicOff else { return }
        timers.schedule(.backups, afterSeconds: Double(everySeconds))
        if isRunning {
            logger.info("periodic backup skipped: the previous one is still being written", ["folder": folder.path])
            return
        }
        begin(.periodic)
    }

    private func begin(_ trigger: Trigger) {
        isRunning = true
        answering = waiting
        waiting = []
        let store = self.store, folder = self.folder, inbox = self.inbox
        let delivery = ServiceThreadCallback { [self] (result: Result<Outcome, StoreError>) in
            finished(result, trigger)
        }
        queue.async {
            let result = Self.write(store, into: folder)
            inbox.post(.task(ServiceThreadTask { delivery.call(result) }))
        }
    }

    /// On the backup thread: the copy, its size, then the old ones pruned.
    private static func write(_ store: any RoomStore, into folder: BackupFolder) -> Result<Outcome, StoreError> {
        let started = SystemTime.monotonicSeconds()
        do throws(StoreError) {
            let path = try folder.nextPath(at: Date())
            try store.backup(to: path)
            let seconds = SystemTime.monotonicSeconds() - started
            let bytes = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
            return .success(Outcome(path: path, bytes: bytes, seconds: seconds, removed: folder.prune(sparing: path)))
        } catch {
            return .failure(error)
        }
    }

    private func finished(_ result: Result<Outcome, StoreError>, _ trigger: Trigger) {
        isRunning = false
        let requests = answering
        answering = []
        switch result {
        case .success(let outcome):
            metrics.backups += 1
            metrics.lastBackupTime = Int(Date().timeIntervalSince1970)
            logger.info("backup written", ["path": outcome.path, "bytes": "\(outcome.bytes)",
                                           "seconds": String(format: "%.3f", outcome.seconds), "trigger": trigger.rawValue])
            for path in outcome.removed { logger.info("old backup removed", ["path": path, "keep": "\(folder.keep)"]) }
            var w = JSONWriter(capacity: 160)
            w.beginObject()
            w.key("path"); w.string(outcome.path)
            w.key("bytes"); w.int(Int(outcome.bytes))
            w.key("seconds"); w.number((outcome.seconds * 1000).rounded() / 1000)
            w.endObject()
            for exchange in requests { responder.respond(exchange, status: 200, json: w.bytes) }
        case .failure(let error) where error.kind == .unsupported:
            if trigger == .periodic {
                periodicOff = true
                logger.warn("periodic backups are off", ["reason": error.message])
            }
            let refusal = HTTPError(.unsupported, "this server makes no backups: \(error.message)")
            for exchange in requests { responder.respond(exchange, refusal) }
        case .failure(let error):
            metrics.backupFailures += 1
            logger.warn("backup failed", ["folder": folder.path, "error": error.message, "trigger": trigger.rawValue])
            for exchange in requests { responder.respond(exchange, .unavailable("the backup failed: \(error.message)")) }
        }
        if !waiting.isEmpty { begin(.request) }
    }

    /// Waits for a backup being written (at shutdown, before the store closes).
    func stop() {
        queue.sync {}
    }
}
