import Foundation
import HappyClientKit
import HappyCore

/// How long `replay` waits before each event: the real pause since the
/// previous one divided by the speed, at most a second, so that a quiet
/// hour does not stall the replay.
struct ReplayPace: Equatable {
    static let longestPause = 1.0
    /// How long the starting state is shown before the first event (it has
    /// no time to measure a pause from).
    static let startHold = 1.0

    let speed: Double

    /// Seconds between showing the event at `previous` (ms; nil for the
    /// starting state) and the one at `next`.
    func pause(from previous: Int64?, to next: Int64) -> Double {
        guard let previous else { return Self.startHold }
        let real = Double(max(0, next - previous)) / 1000
        return min(Self.longestPause, real / speed)
    }
}

/// The room as the replay shows it: the scene and status label after the
/// events replayed so far.
struct ReplayProgress: Equatable {
    /// The last seq to replay: the room's seq when the replay started.
    let target: UInt64
    let speed: Double
    private(set) var seq: UInt64
    private(set) var scene: Scene
    /// The label with its sender, as shown under the picture.
    private(set) var statusLabel: String
    /// The label as the dragon panel draws it.
    private(set) var drawnStatus: String

    init(start past: PastStateAnswer, target: UInt64, speed: Double) {
        self.target = target
        self.speed = speed
        seq = past.seq
        scene = past.state
        statusLabel = past.dragonStatus
        drawnStatus = past.dragonStatus
    }

    mutating func apply(_ event: EventMessage, status: DragonStatus) {
        seq = event.seq
        scene = event.state
        if let label = PlayModel.label(after: event, status: status) {
            statusLabel = label.shown
            drawnStatus = label.drawn
        }
    }

    /// `replay seq 12 of 40 at 4×`
    var line: String {
        "replay seq \(seq) of \(target) at \(Describe.number(speed))×"
    }
}

/// The events to replay, read a page at a time from `/api/history` ahead
/// of the replay on another thread, up to the target seq.
final class ReplayFeed: @unchecked Sendable {
    /// A new page is asked for when fewer events than this are waiting.
    static let lowWater = HistoryAPI.maxPage / 4

    private let api: HistoryAPI
    private let epoch: String
    private let target: UInt64
    private let wake: @Sendable () -> Void
    private let lock = NSLock()
    private var waiting: [EventMessage] = []
    private var nextIndex = 0
    /// The newest seq read so far.
    private var cursor: UInt64
    private var fetching = false
    private var complete: Bool
    private var failureText: String?

    /// `first`: the first page, read after `start`; `wake` is called when more arrive.
    init(api: HistoryAPI, first: HistoryAnswer, start: UInt64, target: UInt64, wake: @escaping @Sendable () -> Void) {
        self.api = api
        epoch = first.epoch
        self.target = target
        self.wake = wake
        cursor = start
        complete = start >= target
        accept(first)
    }

    /// The next event when it has arrived.
    func next() -> EventMessage? {
        lock.lock()
        defer { lock.unlock() }
        let event: EventMessage?
        if nextIndex < waiting.count {
            event = waiting[nextIndex]
            nextIndex += 1
        } else {
            event = nil
        }
        refillIfLow()
        return event
    }

    /// Every event up to the target was handed out (or the history could not be read further).
    var isDrained: Bool {
        lock.lock()
        defer { lock.unlock() }
        return (complete || failureText != nil) && nextIndex >= waiting.count
    }

    /// Why the history could not be read further, if it could not.
    var failure: String? {
        lock.lock()
        defer { lock.unlock() }
        return failureText
    }

    // MARK: under the lock

    /// Keeps the events up to the target of a page.
    private func accept(_ page: HistoryAnswer) {
        if page.epoch != epoch {
            failureText = "the room's history was reset (epoch \(page.epoch))"
            return
        }
        if nextIndex > 0 {
            waiting.removeFirst(nextIndex)
            nextIndex = 0
        }
        for entry in page.events where entry.event.seq > cursor && entry.event.seq <= target {
            waiting.append(entry.event)
            cursor = entry.event.seq
        }
        // The end: the target reached, or nothing newer held.
        if cursor >= target || page.events.last.map({ $0.event.seq >= page.seq }) ?? true {
            complete = true
        }
    }

    private func refillIfLow() {
        guard !complete, !fetching, failureText == nil, waiting.count - nextIndex < Self.lowWater else { return }
        fetching = true
        let since = cursor, limit = HistoryAPI.maxPage, api = self.api
        DispatchQueue.global().async { [self] in
            let result = api.page(since: since, limit: limit)
            lock.lock()
            fetching = false
            switch result {
            case .success(let page): accept(page)
            case .failure(let failure): failureText = "\(failure)"
            }
            lock.unlock()
            wake()
        }
    }
}

/// The replay under way in `play`'s loop: which event comes next and when.
struct ReplayPlayer {
    private(set) var progress: ReplayProgress
    let feed: ReplayFeed
    let pace: ReplayPace
    let status: DragonStatus
    /// The next event, once read, and when it is due (monotonic seconds).
    private var upcoming: (event: EventMessage, due: Double)?
    /// When the last event (or the start) was shown, and that event's time.
    private var shownAt: Double
    private var shownTime: Int64?

    init(progress: ReplayProgress, feed: ReplayFeed, status: DragonStatus, now: Double) {
        self.progress = progress
        self.feed = feed
        pace = ReplayPace(speed: progress.speed)
        self.status = status
        shownAt = now
    }

    /// When the next event is due; nil while it is still being read.
    var nextDue: Double? { upcoming?.due }

    /// Shows every event due by `now`; false once the replay is over.
    mutating func advance(now: Double) -> Bool {
        while true {
            if upcoming == nil {
                guard let event = feed.next() else { return !feed.isDrained }
                upcoming = (event, shownAt + pace.pause(from: shownTime, to: event.time))
            }
            guard let (event, due) = upcoming, due <= now else { return true }
            progress.apply(event, status: status)
            shownAt = due
            shownTime = event.time
            upcoming = nil
        }
    }
}
