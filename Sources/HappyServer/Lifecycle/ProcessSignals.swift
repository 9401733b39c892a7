import Dispatch
import Glibc

/// What a signal asks of the server.
enum ProcessSignal: Sendable, Equatable {
    /// SIGINT, SIGTERM: stop gracefully (clients closed with 1001).
    case shutdown(Int32)
    /// SIGHUP: read the configuration again and apply what can change while running.
    case reload
    /// SIGUSR2: start the binary at the server's own path and hand everything over to it.
    case upgrade
}

/// The signals the server answers arrive on a dispatch queue and are posted
/// to the service thread's inbox.
final class ProcessSignals {
    private var sources: [DispatchSourceSignal] = []

    func install(posting inbox: WakeInbox) {
        let meanings: [(Int32, ProcessSignal)] = [(SIGINT, .shutdown(SIGINT)), (SIGTERM, .shutdown(SIGTERM)),
                                                   (SIGHUP, .reload), (SIGUSR2, .upgrade)]
        for (number, meaning) in meanings {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { inbox.post(.signal(meaning)) }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        sources.removeAll()
    }
}
