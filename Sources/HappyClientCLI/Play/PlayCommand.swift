import Foundation
import HappyClientKit
import HappyCore
import HappyRender

/// `play`: joins the room, then runs the full-screen view until `q`,
/// Ctrl-C, SIGTERM or the end of the session; the terminal is restored
/// in every case.
extension CommandContext {
    /// Recent events replayed at the start, so the status label shows the room's last dragon event.
    static let statusReplayEvents: UInt64 = 200

    func runPlay(_ options: PlayOptions) -> Int32 {
        guard TerminalMode.isInteractive() else {
            console.err("happyclient: play: needs a terminal (standard input and output must be a tty)")
            return ExitStatus.usage.rawValue
        }
        let started = SystemTime.monotonicSeconds()
        let (art, position) = fetchResources(artPath: options.artPath)
        if options.artPath != nil, case .failure(let reason) = art {
            console.err("happyclient: play: --art: \(reason)")
            return ExitStatus.usage.rawValue
        }

        let wake: WakePipe
        do { wake = try WakePipe() } catch {
            console.err("happyclient: play: \(error)")
            return ExitStatus.cannotConnect.rawValue
        }
        let status = (try? art.get())?.panel.status ?? DragonStatus()
        let model = PlayModel(status: status, wake: { wake.wake() })
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
            console.err("happyclient: play: \(error)")
            return ExitStatus.usage.rawValue
        }
        let mode = options.colorMode ?? ColorMode.detect(environment: environment)
        var playLoop = PlayLoop(terminal: terminal, session: session, model: model, wake: wake, signals: signals,
                                art: art, encoder: CellEncoder(mode: mode), framesPerSecond: options.framesPerSecond)
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
