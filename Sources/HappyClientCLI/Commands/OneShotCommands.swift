import Foundation
import HappyClientKit
import Synchronization

/// `state`, the value commands and `ping`: join the room (`HappyRoom`), ask, print, leave.
extension CommandContext {
    func runState(json: Bool) -> Int32 {
        blocking { () async -> Int32 in
            do throws(SessionError) {
                let room = try await joinRoom()
                defer { room.leave() }
                let snapshot = room.snapshot
                guard let welcome = snapshot.welcome, let welcomeJSON = snapshot.welcomeJSON else {
                    return fail(.connectionLost(url: room.configuration.displayURL, reason: "no welcome"))
                }
                let observing = room.configuration.observe
                let report = StateReport(welcome: welcome, json: welcomeJSON, observing: observing)
                console.out(json ? report.jsonText : report.text)
                if welcome.isNewRoom(observing: observing) { console.err("happyclient: \(HistoryNotes.newRoom(welcome.room))") }
                return ExitStatus.success.rawValue
            } catch {
                return fail(error)
            }
        }
    }

    /// Sends each intent after the previous one's answer, paced below the
    /// server's rate limit; prints one line per answer.
    func runIntents(_ actions: [Action]) -> Int32 {
        blocking { () async -> Int32 in
            do throws(SessionError) {
                let room = try await joinRoom()
                defer { room.leave() }
                var pacer = IntentPacer(limits: room.snapshot.limits)
                for action in actions {
                    pacer.waitForTurn()
                    let outcome = try await room.perform(action, timeout: common.timeout)
                    console.out(IntentReport.line(for: action, outcome))
                }
                return ExitStatus.success.rawValue
            } catch {
                return fail(error)
            }
        }
    }

    func runPing(count: Int) -> Int32 {
        blocking { () async -> Int32 in
            do throws(SessionError) {
                let room = try await joinRoom()
                defer { room.leave() }
                var samples: [PingSample] = []
                for index in 1...count {
                    let sample = try await room.ping(timeout: common.timeout)
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
}

/// Runs `body` to its end from a command's synchronous code (never the
/// client loop's thread, which the body waits on).
func blocking<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) -> Value {
    let result = Mutex<Value?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}
