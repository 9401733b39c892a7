import Foundation
import HappyClientKit
import HappyCore
import HappyRender

/// `play` and `replay`: join the room, then run the full-screen view until
/// `q`, Ctrl-C, SIGTERM or the end of the session; the terminal is
/// restored in every case. `replay` first reads where the room's past
/// starts, and shows it before going live.
extension CommandContext {
    /// Recent events replayed at the start, so the status label shows the room's last dragon event.
    static let statusReplayEvents: UInt64 = 200

    func runPlay(_ options: PlayOptions) -> Int32 {
        runFullScreen(options, command: .play)
    }

    func runReplay(_ options: ReplayOptions) -> Int32 {
        guard TerminalMode.isInteractive() else { return notInteractive(.replay) }
        let api = HistoryAPI(common: common)
        switch ReplayStart.load(api, from: options.from) {
        case .failure(let failure):
            // The server names its own parameter (`since`); say it in the option's words.
            if let from = options.from, case .refused(_, 400, "invalid_value"?, _) = failure,
               case .success(let held) = api.page(since: nil, limit: 1), from > held.seq {
                let oldest = held.first > 0 ? held.first - 1 : 0
                console.err("happyclient: replay: --from \(from) is beyond the room's seq \(held.seq) "
                            + "(from \(oldest) to \(held.seq))")
                return ExitStatus.refused.rawValue
            }
            return fail(failure)
        case .success(let start):
            if start.target == 0, api.isNewRoom() {
                console.err("happyclient: \(HistoryNotes.newRoom(start.page.room))")
                return ExitStatus.success.rawValue
            }
            return runFullScreen(options.play, command: .replay, replay: (start, options.speed))
        }
    }

    private func notInteractive(_ command: CommandName) -> Int32 {
        console.err("happyclient: \(command.rawValue): needs a terminal (standard input and output must be a tty)")
        return ExitStatus.usage.rawValue
    }

    private func runFullScreen(_ options: PlayOptions, command: CommandName,
                               replay: (start: ReplayStart, speed: Double)? = nil) -> Int32 {
        guard TerminalMode.isInteractive() else { return notInteractive(command) }
        let started = SystemTime.monotonicSeconds()
        let (art, position) = fetchResources(artPath: options.artPath)
        if options.artPath != nil, case .failure(let reason) = art {
            console.err("happyclient: \(command.rawValue): --art: \(reason)")
            return ExitStatus.usage.rawValue
        }

        let wake: WakePipe
        do { wake = try WakePipe() } catch {
            console.err("happyclient: \(command.rawValue): \(error)")
            return ExitStatus.cannotConnect.rawValue
        }
        let status = (try? art.get())?.panel.status ?? DragonStatus()
        let model = PlayModel(status: status, wake: { wake.wake() })
        if let note = replay?.start.note { model.note(note) }
        let session = HappySession(configuration: common.sessionConfiguration(reconnects: true), loop: loop)
        session.delegate = model
        if let position {
            session.replay(after: position.seq - min(position.seq, Self.statusReplayEvents), epoch: position.epoch)
        }
        defer {
            session.delegate = nil
            session.stop()
        }
        do {
            try session.waitForWelcome(timeout: max(0.5, common.timeout - (SystemTime.monotonicSeconds() - started)))
        } catch {
            return fail(error)
        }

        let terminal = TerminalMode()
        let signals = PendingSignals()
        let trap = SignalTrap([SIGINT, SIGTERM, SIGHUP, SIGWINCH]) { number in
            signals.add(number)
            wake.wake()
        }
        defer { trap.cancel() }
        do { try terminal.enter() } catch {
            console.err("happyclient: \(command.rawValue): \(error)")
            return ExitStatus.usage.rawValue
        }
        let mode = options.colorMode ?? ColorMode.detect(environment: environment)
        let player = replay.map { replay in
            let start = replay.start
            let feed = ReplayFeed(api: HistoryAPI(common: common), first: start.page, start: start.past.seq,
                                  target: start.target, wake: { wake.wake() })
            return ReplayPlayer(progress: ReplayProgress(start: start.past, target: start.target, speed: replay.speed),
                                feed: feed, status: status, now: SystemTime.monotonicSeconds())
        }
        var playLoop = PlayLoop(terminal: terminal, session: session, model: model, wake: wake, signals: signals,
                                art: art, encoder: CellEncoder(mode: mode), framesPerSecond: options.framesPerSecond,
                                replay: player)
        let exitStatus = playLoop.run()
        terminal.restore()
        if let error = model.ended, exitStatus == ExitStatus.success.rawValue {
            return fail(error)
        }
        return exitStatus
    }

    /// The scene art and the room's seq and epoch, fetched side by side within `--timeout`.
    private func fetchResources(artPath: String?) -> (Result<SceneArt, ResourceError>, (seq: UInt64, epoch: String)?) {
        let resources = ServerResources(common: common)
        let art = Latch<Result<SceneArt, ResourceError>>()
        DispatchQueue.global().async { art.set(resources.art(path: artPath)) }
        let position = resources.roomPosition()
        let timeout = ResourceError("no scene art within \(Describe.number(common.timeout)) s")
        return (art.wait(timeout: common.timeout) ?? .failure(timeout), position)
    }
}

/// Where a replay starts: the room as it was then, the first page of
/// events after it, and the seq it ends at (the room's when it started).
struct ReplayStart {
    var page: HistoryAnswer
    var past: PastStateAnswer
    var target: UInt64
    /// Said on the screen at the start (`history starts at seq 40`).
    var note: String?

    /// From `from`, or from the oldest event held; a `from` older than
    /// that starts there, with a note.
    static func load(_ api: HistoryAPI, from: UInt64?) -> Result<ReplayStart, HTTPFailure> {
        api.page(since: from, limit: HistoryAPI.maxPage).flatMap { page in
            let oldest = page.first > 0 ? page.first - 1 : 0
            var start = from ?? oldest
            var note: String?
            if start < oldest {
                note = "history starts at seq \(page.first)"
                start = oldest
            }
            return api.pastState(seq: start).map { ReplayStart(page: page, past: $0, target: page.seq, note: note) }
        }
    }
}
