import Foundation
import HappyClientKit
import HappyCore

/// `state`, the value commands and `ping`: connect, ask, print, leave.
extension CommandContext {
    func runState(json: Bool) -> Int32 {
        do {
            let (session, snapshot) = try join()
            defer { session.stop() }
            guard let welcome = snapshot.welcome, let welcomeJSON = snapshot.welcomeJSON else {
                return fail(.connectionLost(url: session.configuration.displayURL, reason: "no welcome"))
            }
            let observing = session.configuration.observe
            let report = StateReport(welcome: welcome, json: welcomeJSON, observing: observing)
            console.out(json ? report.jsonText : report.text)
            if welcome.isNewRoom(observing: observing) { console.err("happyclient: \(HistoryNotes.newRoom(welcome.room))") }
            return ExitStatus.success.rawValue
        } catch {
            return fail(error)
        }
    }

    /// Sends each intent after the previous one's answer, paced below the
    /// server's rate limit; prints one line per answer.
    func runIntents(_ actions: [Action]) -> Int32 {
        do {
            let (session, snapshot) = try join()
            defer { session.stop() }
            var pacer = IntentPacer(limits: snapshot.limits)
            for action in actions {
                pacer.waitForTurn()
                let outcome = try session.perform(action, timeout: common.timeout)
                console.out(IntentReport.line(for: action, outcome))
            }
            return ExitStatus.success.rawValue
        } catch {
            return fail(error)
        }
    }

    func runPing(count: Int) -> Int32 {
        do {
            let (session, _) = try join()
            defer { session.stop() }
            var samples: [PingSample] = []
            for index in 1...count {
                let sample = try session.ping(timeout: common.timeout)
                samples.append(sample)
                console.out("pong \(index)  \(PingSummary.milliseconds(sample.roundTripMilliseconds)) ms")
            }
            for line in PingSummary(samples: samples).lines { console.out(line) }
            return ExitStatus.success.rawValue
        } catch {
            return fail(error)
        }
    }
}
