import Foundation

/// One room configuration the crowd load runs against (PROTOCOL.md section 12).
struct CrowdVariant: CustomStringConvertible {
    /// `crowd.mode`: auto, each or tick.
    var mode: String
    /// `crowd.dragon`: each or vote.
    var dragon: String

    static let modes = ["auto", "each", "tick"]
    static let dragons = ["each", "vote"]

    var description: String { dragon == "vote" ? "\(mode), votes" : mode }
}

/// What the writers send.
enum CrowdActions: String {
    /// dragon.forward and dragon.back, alternating per writer.
    case dragon
    /// dragon.forward, face.nudgeHappiness +5, dragon.back, face.nudgeHappiness −5, in turn.
    case mix
}

/// How the crowd workload is shaped (`--crowd-*` flags).
struct CrowdShape {
    /// Connections in the one room, writers included.
    var clients = 10_000
    var writers = 2_000
    /// Intents per second per writer.
    var rate = 2.0
    /// Seconds measured; nil: the run's `--seconds`.
    var seconds: Double?
    /// `--crowd-mode` / `--crowd-dragon`: one variant instead of the usual three.
    var mode: String?
    var dragon: String?
    var actions = CrowdActions.dragon
    var tickMs = 50
    var client = CrowdClientKind.sockets
    /// Client loops (threads) sharing the connections.
    var loops = 1
    var persistence = false
    /// Crowds timed joining (presence on), after the load runs; empty: none.
    var joinSizes = [5_000, 10_000]
    /// Connections opening at once, as the peers' compare.sh does.
    var joinConcurrency = 200

    /// Seconds of sending before the measured window: the room switches to
    /// ticks in the first of them, and the switch is no steady state.
    static let warmupSeconds = 2.0
    /// Longest wait for the last acks once the writers stop (a collapsing
    /// server may never answer them all).
    static let drainSeconds = 10.0

    /// The variants `--only crowd` runs: auto delivery, each event to everyone
    /// (expected to collapse), and dragon votes.
    var variants: [CrowdVariant] {
        if mode != nil || dragon != nil { return [CrowdVariant(mode: mode ?? "auto", dragon: dragon ?? "each")] }
        return [CrowdVariant(mode: "auto", dragon: "each"), CrowdVariant(mode: "each", dragon: "each"),
                CrowdVariant(mode: "auto", dragon: "vote")]
    }

    /// Why the shape cannot run, or nil.
    var problem: String? {
        if clients < 2 { return "--crowd-clients must be at least 2" }
        if writers < 1 || writers > clients { return "--crowd-writers must be between 1 and --crowd-clients (\(clients))" }
        if !(rate > 0) { return "--crowd-rate must be above 0" }
        if let seconds, !(seconds >= 1) { return "--crowd-seconds must be at least 1" }
        if let mode, !CrowdVariant.modes.contains(mode) {
            return "--crowd-mode must be one of \(CrowdVariant.modes.joined(separator: ", "))"
        }
        if let dragon, !CrowdVariant.dragons.contains(dragon) {
            return "--crowd-dragon must be one of \(CrowdVariant.dragons.joined(separator: ", "))"
        }
        if !(10...1000).contains(tickMs) { return "--crowd-tick-ms must be between 10 and 1000 (crowd.tickMs)" }
        if loops < 1 || loops > 16 { return "--crowd-loops must be between 1 and 16" }
        if joinSizes.contains(where: { $0 < 2 }) { return "--crowd-joins takes sizes of at least 2, or none" }
        return nil
    }
}
