import Dispatch
import Glibc

/// SIGINT and SIGTERM ask the server to shut down gracefully: they arrive
/// on a dispatch queue and are posted to the service thread's inbox.
final class ShutdownSignals {
    private var sources: [DispatchSourceSignal] = []

    func install(posting inbox: WakeInbox) {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { inbox.post(.shutdownRequested(signal: signalNumber)) }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        sources.removeAll()
    }
}
