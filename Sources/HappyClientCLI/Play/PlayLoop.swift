import Foundation
import HappyClientKit
import HappyCore
import HappyRender

/// The terminal loop of `play`: waits for keys, session changes, signals
/// and animation frames, sends throttled intents and this client's pointer
/// (hidden again a moment after the last key), and redraws. With a replay
/// it first shows the room's past, event by event, and goes live at its
/// end or at a key.
struct PlayLoop {
    let terminal: TerminalMode
    let session: HappySession
    let model: PlayModel
    let wake: WakePipe
    let signals: PendingSignals
    let art: Result<SceneArt, ResourceError>
    let encoder: CellEncoder
    let framesPerSecond: Int

    private let writer = ScreenWriter()
    private var keys = KeyDecoder()
    private var pacer: IntentPacer
    private var layout: PlayLayout?
    private var renderer: FrameRenderer?
    private var lastPicture: (state: FrameState, grid: PixelGrid, lines: [String])?
    /// When to hide this client's pointer (monotonic seconds); nil while hidden.
    private var hidePointerAt: Double?
    /// The replay under way; nil once live.
    private var replay: ReplayPlayer?

    init(terminal: TerminalMode, session: HappySession, model: PlayModel, wake: WakePipe, signals: PendingSignals,
         art: Result<SceneArt, ResourceError>, encoder: CellEncoder, framesPerSecond: Int, replay: ReplayPlayer? = nil) {
        self.terminal = terminal
        self.session = session
        self.model = model
        self.wake = wake
        self.signals = signals
        self.art = art
        self.encoder = encoder
        self.framesPerSecond = framesPerSecond
        self.replay = replay
        pacer = IntentPacer(limits: session.snapshot.limits, share: 0.5, maxPerSecond: 20, burst: 5)
    }

    /// Seconds between pings that refine the estimate of the server's clock.
    static let pingInterval = 15.0

    /// Runs until quit; returns the exit status.
    mutating func run() -> Int32 {
        let frame = 1 / Double(framesPerSecond)
        var nextFrame = SystemTime.monotonicSeconds()
        var nextPing = nextFrame
        while true {
            let now = SystemTime.monotonicSeconds()
            if now >= nextPing {
                session.ping { _ in }
                nextPing = now + Self.pingInterval
            }
            advanceReplay(now: now)
            if now >= nextFrame {
                draw()
                nextFrame = max(nextFrame + frame, now + frame / 2)
            }
            let wakeAt = min(nextFrame, hidePointerAt ?? .infinity, replay?.nextDue ?? .infinity)
            let ready = Poller.readable([0, wake.readEnd], timeout: wakeAt - SystemTime.monotonicSeconds())
            if ready.contains(wake.readEnd) { wake.drain() }
            if let hideAt = hidePointerAt, SystemTime.monotonicSeconds() >= hideAt {
                session.sendPointer(nil)
                hidePointerAt = nil
            }
            for number in signals.take() {
                if number == SIGWINCH {
                    layout = nil
                    writer.invalidate()
                } else {
                    return 128 + number
                }
            }
            if ready.contains(0) {
                var buffer = [UInt8](repeating: 0, count: 256)
                let count = read(0, &buffer, buffer.count)
                if count == 0 { return ExitStatus.success.rawValue }
                for key in keys.feed(Array(buffer.prefix(max(0, count)))) {
                    if PlayKeys.isQuit(key) { return ExitStatus.success.rawValue }
                    if key == .interrupt { return 128 + SIGINT }
                    if replay != nil {
                        // Any other key ends the replay; it changes nothing itself.
                        goLive(note: "replay stopped at seq \(replay?.progress.seq ?? 0)")
                        continue
                    }
                    press(key)
                }
            }
            if model.ended != nil { return ExitStatus.success.rawValue }
            if !ready.isEmpty { draw() }
        }
    }

    /// Shows the replay's due events; goes live when it is over.
    private mutating func advanceReplay(now: Double) {
        guard var player = replay else { return }
        let going = player.advance(now: now)
        replay = player
        if !going {
            goLive(note: player.feed.failure.map { "replay stopped: \($0)" } ?? "replay done")
        }
    }

    /// Ends the replay: the live room from now on, with a word on what
    /// happened during the replay.
    private mutating func goLive(note: String) {
        guard let player = replay else { return }
        replay = nil
        let live = session.snapshot.ledger.deliveredSeq
        let target = player.progress.target
        let meanwhile = live > target ? live - target : 0
        model.note("\(note); live at seq \(live)"
                   + (meanwhile == 0 ? "" : ", \(meanwhile) event\(meanwhile == 1 ? "" : "s") meanwhile"))
        wake.wake()
    }

    private mutating func press(_ key: Key) {
        let snapshot = session.snapshot
        guard let scene = snapshot.ledger.state, let action = PlayKeys.action(for: key, scene: scene) else { return }
        // The others see where this key steers, also when the intent is dropped below.
        session.sendPointer(PlayPointers.own(for: action, scene: scene, art: try? art.get(), geometry: snapshot.geometry))
        hidePointerAt = SystemTime.monotonicSeconds() + PlayPointers.ownPointerSeconds
        guard pacer.tryTurn() else {
            model.note("slow down: keys beyond \(Describe.number(pacer.ratePerSecond)) a second are dropped")
            return
        }
        let model = self.model
        session.send(action) { model.answered(action, $0) }
    }

    private mutating func draw() {
        let snapshot = session.snapshot
        let (columns, rows) = terminal.size()
        if layout?.columns != columns || layout?.rows != rows || renderer?.geometry != snapshot.geometry {
            if case .success(let art) = art { renderer = FrameRenderer(art: art, geometry: snapshot.geometry) }
            let sizes = renderer.map(PlayLayout.Sizes.init(renderer:))
                ?? PlayLayout.Sizes(scene: (1015, 330), views: [])
            layout = PlayLayout(columns: columns, rows: rows, sizes: sizes)
            lastPicture = nil
            writer.invalidate()
        }
        guard let layout else { return }
        let ledger = snapshot.ledger
        let pointers = model.pointers
        let steering = PlayPointers.steeringLine(pointers.entries, movedAt: pointers.movedAt,
                                                 now: SystemTime.monotonicSeconds())
        // A replay shows the past's scene and label; the others' live pointers would not fit it.
        let past = replay?.progress
        let scene = past?.scene ?? ledger.state
        let texts = PlayScreen.texts(
            room: ledger.room ?? "?", url: session.configuration.displayURL, you: ledger.you,
            connection: model.connection, seq: ledger.deliveredSeq, scene: scene,
            statusLabel: past?.statusLabel ?? model.statusLabel, lastAnswer: past == nil ? model.lastAnswer : nil,
            presence: ledger.presence, presenceCount: ledger.presenceCount, steering: steering, replay: past?.line,
            crowd: past == nil ? model.crowdLine(delivery: ledger.delivery, here: ledger.presenceCount) : nil)
        let marks = past == nil ? PlayPointers.marks(pointers.entries, layout: layout, renderer: renderer) : []
        let lines = picture(layout, snapshot, scene: scene, dragonStatus: past?.drawnStatus ?? model.drawnStatus, marks: marks)
        writer.show(PlayScreen(layout: layout).rows(picture: lines, texts: texts))
    }

    /// The picture's lines; the drawing is kept while the state stays the
    /// same, and the markers are put over it each time.
    private mutating func picture(_ layout: PlayLayout, _ snapshot: SessionSnapshot, scene: Scene?, dragonStatus: String,
                                  marks: [CellMark]) -> [String] {
        guard !layout.tooSmall else { return [] }
        guard let renderer, let scene else {
            if case .failure(let reason) = art { return PlayPicture.message("no picture: \(reason)", layout: layout) }
            return PlayPicture.message("waiting for the room…", layout: layout)
        }
        let state = FrameState(scene: scene, dragonStatus: dragonStatus,
                               step: WaveClock.step(atMilliseconds: snapshot.estimatedServerTime))
        if let lastPicture, lastPicture.state == state {
            return marks.isEmpty ? lastPicture.lines : encoder.lines(lastPicture.grid, marks: marks)
        }
        do {
            let grid = try PlayPicture(renderer: renderer, encoder: encoder).grid(layout, state: state)
            let lines = encoder.lines(grid)
            lastPicture = (state, grid, lines)
            return marks.isEmpty ? lines : encoder.lines(grid, marks: marks)
        } catch {
            return PlayPicture.message("cannot draw: \(error)", layout: layout)
        }
    }
}
