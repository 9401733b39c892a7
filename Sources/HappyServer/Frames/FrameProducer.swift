import Dispatch
import Foundation
import HappyCore
import HappyRender

/// Encoded frames for the `/frame` and `/stream` routes. Lives on the
/// service thread: a bounded cache of PNGs, and one render per key however
/// many requests want it at once (later ones wait for the first). Renders
/// run on worker threads, at most one per core at a time, and hand the
/// bytes back through the wake-up inbox.
final class FrameProducer {
    typealias Completion = (Result<[UInt8], RenderError>) -> Void

    let renderer: FrameRenderer
    private let inbox: WakeInbox
    private let metrics: Metrics
    private var cache: BoundedCache<FrameKey, [UInt8]>
    /// Requests waiting for a render queued or running, by key.
    private var waiting: [FrameKey: [Completion]] = [:]
    /// Renders asked for by streams alone: they may hold half the places, so
    /// that streams (a crowd of them, or slow ones) never starve `/frame`.
    private var streamRenders: Set<FrameKey> = []
    /// Renders since memory was last handed back.
    private var rendersSinceTrim = 0
    private let releaseFreeMemory: () -> Void
    private var queued = RingQueue<(key: FrameKey, state: FrameState)>()
    private var running = 0
    private let maxRunning: Int
    /// Distinct renders that may wait for a worker; more are refused.
    let maxPending: Int

    init(renderer: FrameRenderer, inbox: WakeInbox, metrics: Metrics, releaseFreeMemory: @escaping () -> Void = {},
         maxEntries: Int = 256, maxBytes: Int = 32 * 1024 * 1024, maxPending: Int = 64) {
        self.renderer = renderer
        self.releaseFreeMemory = releaseFreeMemory
        self.inbox = inbox
        self.metrics = metrics
        cache = BoundedCache(maxEntries: maxEntries, maxCost: maxBytes)
        maxRunning = max(1, ProcessInfo.processInfo.activeProcessorCount)
        self.maxPending = maxPending
    }

    /// Calls `completion` with the PNG for `key` drawn from `state`: at once
    /// from the cache, or once rendered. Returns false (and never calls
    /// `completion`) when too many renders are already waiting (for a
    /// stream, when streams already hold half the places).
    func frame(_ key: FrameKey, state: FrameState, forStream: Bool = false, completion: @escaping Completion) -> Bool {
        if let png = cache.value(for: key) {
            metrics.renderCacheHits += 1
            completion(.success(png))
            return true
        }
        if waiting[key] != nil {
            metrics.renderCoalesced += 1
            waiting[key]!.append(completion)
            return true
        }
        guard waiting.count < maxPending + maxRunning else { return false }
        if forStream {
            guard streamRenders.count < (maxPending + maxRunning) / 2 else { return false }
            streamRenders.insert(key)
        }
        waiting[key] = [completion]
        queued.append((key, state))
        startRenders()
        return true
    }

    private func startRenders() {
        while running < maxRunning, !queued.isEmpty {
            let job = queued.removeFirst()
            running += 1
            let renderer = self.renderer, inbox = self.inbox
            let owner = ServiceThreadReference(self)
            DispatchQueue.global(qos: .userInitiated).async {
                let started = SystemTime.monotonicSeconds()
                let result: Result<[UInt8], RenderError>
                do throws(RenderError) {
                    result = .success(try renderer.png(job.key.view, job.state,
                                                       width: job.key.width, height: job.key.height))
                } catch {
                    result = .failure(error)
                }
                let seconds = SystemTime.monotonicSeconds() - started
                inbox.post(.task(ServiceThreadTask { owner.object.finished(job.key, result, seconds: seconds) }))
            }
        }
    }

    private func finished(_ key: FrameKey, _ result: Result<[UInt8], RenderError>, seconds: Double) {
        running -= 1
        streamRenders.remove(key)
        rendersSinceTrim += 1
        metrics.renders += 1
        metrics.renderLatency.observe(seconds)
        if case .success(let png) = result { cache.insert(png, for: key, cost: png.count) }
        let completions = waiting.removeValue(forKey: key) ?? []
        startRenders()
        if running == 0 && rendersSinceTrim >= 8 {
            // A burst is over: what the render threads freed goes back to the system.
            rendersSinceTrim = 0
            releaseFreeMemory()
        }
        for completion in completions { completion(result) }
    }
}

/// A reference to a service-thread object carried through another thread
/// and only used again on the service thread (inside a `ServiceThreadTask`).
struct ServiceThreadReference<Object: AnyObject>: @unchecked Sendable {
    let object: Object

    init(_ object: Object) {
        self.object = object
    }
}
