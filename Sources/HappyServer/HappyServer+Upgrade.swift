import HappyCore
import HappyLWS

/// How far an upgrade (SIGUSR2) got.
enum UpgradePhase: Equatable {
    /// The new process is starting; this one serves as usual.
    case starting
    /// It is ready: this one accepts nothing more, refuses intents, and
    /// lets its last group commit finish before it releases the store.
    case releasing
    /// The store is released; the new process is opening it.
    case released
    /// The new process accepts connections: this one's clients are sent over (1012).
    case handedOver
}

extension HappyServer {
    /// Seconds the new process has to say it is ready, and then that it serves.
    static let upgradeReadySeconds = 60.0
    static let upgradeServingSeconds = 30.0

    /// SIGUSR2: starts the binary at the server's own path to take over.
    func beginUpgrade() {
        guard let image, let listenDescriptor else {
            return logger.warn("upgrade asked for, but this server cannot start its own binary again")
        }
        guard upgrade == nil, !lifecycle.isShuttingDown else {
            return logger.warn("upgrade asked for while one is under way or the server is stopping; ignored")
        }
        let handover = ProcessHandover()
        do throws(ServerError) {
            try handover.start(image, listenDescriptor: listenDescriptor, inbox: inbox)
        } catch {
            return logger.error("upgrade failed to start; this process keeps serving", ["why": error.message])
        }
        upgrade = (handover, .starting, clock.fresh() + Self.upgradeReadySeconds)
        logger.lifecycle("upgrade: started the new process", ["pid": "\(handover.child)", "binary": image.path])
    }

    /// What the new process said.
    func handover(_ message: HandoverMessage) {
        guard var current = upgrade else { return }
        switch (current.phase, message) {
        case (.starting, .ready):
            stopAccepting()
            lifecycle.beginShutdown()
            current.phase = .releasing
            current.deadline = clock.fresh() + Self.upgradeServingSeconds
            upgrade = current
            logger.lifecycle("upgrade: the new process is ready; finishing commits and releasing the store",
                             ["pid": "\(current.handover.child)", "connections": "\(registry.connections.count)"])
        case (.released, .serving):
            current.phase = .handedOver
            current.handover.finish()
            upgrade = current
            closing = (.serviceRestart, WebSocketCloseCode.serviceRestartReason)
            logger.lifecycle("upgrade: the new process serves; sending clients over",
                             ["pid": "\(current.handover.child)", "connections": "\(registry.connections.count)"])
            closeClients()
        case (.starting, .gone), (.releasing, .gone):
            abandonUpgrade(because: "the new process went away")
        case (.released, .gone):
            failAfterRelease("the new process went away after this one released the store")
        default:
            break
        }
    }

    /// After every loop turn while an upgrade is under way: the release once
    /// the commits are done, and the deadlines.
    func continueUpgrade() {
        guard var current = upgrade else { return }
        let now = clock.fresh()
        switch current.phase {
        case .starting where now > current.deadline:
            abandonUpgrade(because: "the new process said nothing within \(Int(Self.upgradeReadySeconds)) s")
        case .releasing where coordinator.isIdle:
            releaseStore()
            current.handover.release()
            current.phase = .released
            upgrade = current
            logger.lifecycle("upgrade: store released", ["pid": "\(current.handover.child)"])
        case .releasing where now > current.deadline:
            abandonUpgrade(because: "the last commits did not finish within \(Int(Self.upgradeServingSeconds)) s")
        case .released where now > current.deadline:
            failAfterRelease("the new process did not serve within \(Int(Self.upgradeServingSeconds)) s of the release")
        default:
            break
        }
    }

    /// Whether clients wait for the new process (they stay until it serves).
    var holdsClientsForUpgrade: Bool {
        guard let phase = upgrade?.phase else { return false }
        return phase == .releasing || phase == .released
    }

    /// The new process failed before the store changed hands: this one goes on.
    private func abandonUpgrade(because why: String) {
        guard let current = upgrade else { return }
        current.handover.abandon()
        let ended = current.handover.childExit().map { " (it \($0))" } ?? ""
        upgrade = nil
        if current.phase == .releasing {
            lifecycle.resume()
            startAccepting()
        }
        logger.error("upgrade failed: \(why)\(ended); this process keeps serving",
                     ["binary": image?.path ?? ""])
    }

    /// The store is released and the new process is gone: nobody can record
    /// anything. This process stops with a failure (a supervisor restarts it).
    private func failAfterRelease(_ why: String) {
        guard var current = upgrade else { return }
        current.handover.abandon()
        current.phase = .handedOver
        upgrade = current
        exitStatus = 1
        logger.error("upgrade failed: \(why); stopping (the service manager restarts the server)")
        closeClients()
    }
}
