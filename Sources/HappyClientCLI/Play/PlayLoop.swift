import Foundation
import HappyClientKit
import HappyCore
import HappyRender

/// The terminal loop of `play`: waits for keys, session changes, signals
/// and animation frames, sends throttled intents and this client's pointer
/// (hidden again a moment after the last key), and redraws.
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

    init(terminal: TerminalMode, session: HappySession, model: PlayModel, wake: WakePipe, signals: PendingSignals,
         art: Result<SceneArt, ResourceError>, encoder: CellEncoder, framesPerSecond: Int) {
        self.terminal = terminal
        self.session = session
        self.model = model
        self.wake = wake
        self.signals = signals
        self.art = art
        self.encoder = encoder
        self.framesPerSecond = framesPerSecond
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
            if now >= nextFrame {
                draw()
                nextFrame = max(nextFrame + frame, now + frame / 2)
            }
            let wakeAt = min(nextFrame, hidePointerAt ?? .infinity)
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
                    press(key)
                }
            }
            if model.ended != nil { return ExitStatus.success.rawValue }
            if !ready.isEmpty { draw() }
        }
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
        let texts = PlayScreen.texts(
            room: ledger.room ?? "?", url: session.configuration.displayURL, you: ledger.you,
            connection: model.connection, seq: ledger.deliveredSeq, scene: ledger.state,
            statusLabel: model.statusLabel, lastAnswer: model.lastAnswer,
            presence: ledger.presence, presenceCount: ledger.presenceCount, steering: steering)
        let marks = PlayPointers.marks(pointers.entries, layout: layout, renderer: renderer)
        writer.show(PlayScreen(layout: layout).rows(picture: picture(layout, snapshot, marks: marks), texts: texts))
    }

    /// The picture's lines; the drawing is kept while the state stays the
    /// same, and the markers are put over it each time.
    private mutating func picture(_ layout: PlayLayout, _ snapshot: SessionSnapshot, marks: [CellMark]) -> [String] {
        guard !layout.tooSmall else { return [] }
        guard let renderer, let scene = snapshot.ledger.state else {
            if case .failure(let reason) = art { return PlayPicture.message("no picture: \(reason)", layout: layout) }
            return PlayPicture.message("waiting for the room…", layout: layout)
        }
        let state = FrameState(scene: scene, dragonStatus: model.drawnStatus,
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
