import Foundation

let usage = """
    usage: happybench [--server PATH] [--web DIR] [--seconds S] [--quick] [--only NAME,...]
                      [--out DIR] [--no-pin] [--history-limit N]
                      [--hold-connections N] [--hold-seconds S] [--hold-idle-seconds S]
                      [--crowd-clients N] [--crowd-writers W] [--crowd-rate R] [--crowd-seconds S]
                      [--crowd-mode auto|each|tick] [--crowd-dragon each|vote] [--crowd-actions dragon|mix]
                      [--crowd-tick-ms MS] [--crowd-client sockets|kit] [--crowd-loops L]
                      [--crowd-persistence] [--crowd-joins N,N|none]
                      [--upgrade-clients N] [--upgrade-writers W] [--upgrade-rate R] [--upgrade-count K]
                      [--upgrade-rooms N] [--upgrade-interval S]

    Runs Happy's benchmark workloads, each against a fresh happyserver, and
    prints the results: fan-out to 100/1000/5000/10000 subscribers, latency
    at 20 intents/s to 1000 subscribers, intent throughput with persistence
    on and off, fan-out through two nodes sharing the room in Redis,
    cached/uncached frame requests, 200 live pointers moving at 30 Hz in one
    room, the 1000-subscriber fan-out with and without those pointers beside
    it, and history: one room on SQLite filled to persistence.historyLimit
    events (--history-limit, default 100000, 20000 with --quick), its past
    read back, the database's size up to 3× the limit, and intents/s against
    historyLimit 1, and a full machine of connections held (`held`: 19 000
    WebSockets, --hold-connections, on a server pinging each every 20 s,
    one event a second to all of them for 60 s, --hold-seconds, then a
    quiet 60 s, --hold-idle-seconds: memory per connection, delivery
    latency, idle CPU), and crowd rooms (`crowd`: --crowd-clients 10 000 in
    one room, --crowd-writers 2 000 of them sending --crowd-rate 2 dragon
    intents a second each, with crowd.mode auto, then each, then auto with
    dragon votes, or only the --crowd-mode/--crowd-dragon asked for:
    broadcasts and bytes per client per second, intent-to-tick delay, acks,
    resyncs, drops, the server's CPU and memory; then crowds of --crowd-joins
    5000,10000 joining 200 at a time with presence on). Results go to
    bench/results/<time>.json. --quick runs the
    small workloads only. Servers are pinned to CPU 0 (--no-pin to disable);
    run happybench itself on CPU 1 (`taskset -c 1 happybench`, as
    `make bench` does).
    Workload names for --only (or --workload): fanout, hold, paced,
    persistence, cluster, frames, pointers, pointers-fanout, history, held, crowd,
    and upgrade (only by name: --upgrade-clients 1000 in --upgrade-rooms 10,
    --upgrade-writers 100 sending --upgrade-rate 5 intents a second, while the
    server is upgraded in place with SIGUSR2 --upgrade-count 5 times,
    --upgrade-interval 6 s apart; exits 1 when a connection is refused, an
    acked intent lost or doubled, a client not resumed, or the write pause
    per upgrade, from the last ack before the handover to the first ack
    after it, past a median of 100 ms or a p99 of 300 ms).
    """

var arguments = Array(CommandLine.arguments.dropFirst())
var server = ".build/release/happyserver"
var web = "web"
var seconds = 10.0
var quick = false
var only: Set<String>?
var out = "bench/results"
var pin = true
var historyLimit: Int?
var holdShape = HoldShape()
var crowdShape = CrowdShape()
var upgradeShape = UpgradeShape()
while !arguments.isEmpty {
    let flag = arguments.removeFirst()
    func value() -> String {
        guard !arguments.isEmpty else { print("happybench: \(flag) needs a value\n\(usage)"); exit(2) }
        return arguments.removeFirst()
    }
    switch flag {
    case "--server": server = value()
    case "--web": web = value()
    case "--seconds": seconds = Double(value()) ?? seconds
    case "--quick": quick = true
    case "--only", "--workload": only = Set(value().split(separator: ",").map(String.init))
    case "--out": out = value()
    case "--no-pin": pin = false
    case "--history-limit":
        // Room for a full page of 1000 and the distinct past frames.
        guard let limit = Int(value()), limit >= 2000 else {
            print("happybench: --history-limit must be at least 2000")
            exit(2)
        }
        historyLimit = limit
    case "--hold-connections":
        guard let count = Int(value()), count >= 2 else { print("happybench: --hold-connections must be at least 2"); exit(2) }
        holdShape.connections = count
    case "--hold-seconds":
        guard let seconds = Double(value()), seconds >= 1 else { print("happybench: --hold-seconds must be at least 1"); exit(2) }
        holdShape.broadcastSeconds = seconds
    case "--hold-idle-seconds":
        guard let seconds = Double(value()), seconds >= 1 else { print("happybench: --hold-idle-seconds must be at least 1"); exit(2) }
        holdShape.idleSeconds = seconds
    case "--crowd-clients": crowdShape.clients = Int(value()) ?? -1
    case "--crowd-writers": crowdShape.writers = Int(value()) ?? -1
    case "--crowd-rate": crowdShape.rate = Double(value()) ?? -1
    case "--crowd-seconds": crowdShape.seconds = Double(value()) ?? -1
    case "--crowd-mode": crowdShape.mode = value()
    case "--crowd-dragon": crowdShape.dragon = value()
    case "--crowd-actions":
        let name = value()
        guard let actions = CrowdActions(rawValue: name) else {
            print("happybench: --crowd-actions must be dragon or mix, not \(name)"); exit(2)
        }
        crowdShape.actions = actions
    case "--crowd-client":
        let name = value()
        guard let kind = CrowdClientKind(rawValue: name) else {
            print("happybench: --crowd-client must be sockets or kit, not \(name)"); exit(2)
        }
        crowdShape.client = kind
    case "--crowd-tick-ms": crowdShape.tickMs = Int(value()) ?? -1
    case "--crowd-loops": crowdShape.loops = Int(value()) ?? -1
    case "--crowd-persistence": crowdShape.persistence = true
    case "--crowd-joins":
        let list = value()
        crowdShape.joinSizes = list == "none" ? [] : list.split(separator: ",").map { Int($0) ?? -1 }
    case "--upgrade-clients": upgradeShape.clients = Int(value()) ?? 0
    case "--upgrade-writers": upgradeShape.writers = Int(value()) ?? 0
    case "--upgrade-rate": upgradeShape.rate = Double(value()) ?? 0
    case "--upgrade-count": upgradeShape.upgrades = Int(value()) ?? 0
    case "--upgrade-rooms": upgradeShape.rooms = Int(value()) ?? 0
    case "--upgrade-interval": upgradeShape.interval = Double(value()) ?? 0
    case "--help", "-h": print(usage); exit(0)
    default: print("happybench: unknown argument \(flag)\n\(usage)"); exit(2)
    }
}
if let problem = crowdShape.problem {
    print("happybench: \(problem)")
    exit(2)
}
guard FileManager.default.isExecutableFile(atPath: server) else {
    print("happybench: no server at \(server); build it with `swift build -c release`")
    exit(1)
}
let workloads = Workloads(server: server, webRoot: URL(fileURLWithPath: web).standardizedFileURL.path,
                          seconds: seconds, cpuPinning: pin)
@MainActor func wanted(_ name: String) -> Bool { only?.contains(name) ?? true }

var rows: [BenchRow] = []
@MainActor func attempt(_ body: () throws -> [BenchRow]) {
    do { rows += try body() } catch { FileHandle.standardError.write(Data("happybench: \(error)\n".utf8)) }
}
if wanted("fanout") {
    for n in quick ? [100, 1000] : [100, 1000, 5000] { attempt { [try workloads.fanout(subscribers: n)] } }
}
if wanted("hold") && !quick {
    attempt { [try workloads.fanout(subscribers: 10_000, label: "hold N=10000")] }
}
if wanted("paced") {
    attempt { [try workloads.fanout(subscribers: 1000, pace: .rate(20), label: "paced 20/s N=1000")] }
}
if wanted("persistence") {
    // Alternating runs, median of each: a shared machine drifts between runs.
    var off: [BenchRow] = [], on: [BenchRow] = []
    for _ in 0..<3 {
        attempt { off.append(try workloads.fanout(subscribers: 10, persistence: false, label: "persistence off N=10")); return [] }
        attempt { on.append(try workloads.fanout(subscribers: 10, persistence: true, label: "persistence on N=10")); return [] }
    }
    if let off = BenchRow.median(off, by: "intentsPerSecond"), let on = BenchRow.median(on, by: "intentsPerSecond") {
        rows += [off, on]
        let offRate = off.json["intentsPerSecond"] as? Double ?? 0, onRate = on.json["intentsPerSecond"] as? Double ?? 0
        if offRate > 0 {
            print(String(format: "persistence on costs %.1f%% of intent throughput (medians of 3 alternating runs)",
                         (1 - onRate / offRate) * 100))
        }
    }
}
if wanted("cluster") {
    attempt { [try workloads.fanout(subscribers: 1000, label: "two nodes N=1000", clusterNodes: 2)] }
}
if wanted("frames") { attempt { try workloads.frames() } }
if wanted("pointers") { attempt { [try workloads.pointers()] } }
if wanted("pointers-fanout") { attempt { try workloads.fanoutBesidePointers() } }
if wanted("held") && !quick { attempt { [try workloads.hold(holdShape)] } }
if wanted("crowd") && !quick {
    for variant in crowdShape.variants { attempt { [try workloads.crowd(crowdShape, variant)] } }
    for size in crowdShape.joinSizes { attempt { [try workloads.crowdJoin(clients: size, shape: crowdShape)] } }
}
if wanted("history") { attempt { try workloads.history(limit: historyLimit ?? (quick ? 20_000 : 100_000)) } }
// Only when asked for by name: it upgrades the server under load and fails the run when a promise breaks.
var upgradeFailed = false
if only?.contains("upgrade") == true {
    attempt {
        let result = try UpgradeWorkload.run(server: server, web: workloads.webRoot, shape: upgradeShape,
                                             cpu: pin ? 0 : nil)
        for line in result.lines { print(line) }
        upgradeFailed = !result.passed
        return [BenchRow(workload: "upgrade", figures: [
            ("pause median ms", String(format: "%.0f", result.json["pauseMedianMs"] as? Double ?? 0)),
            ("pause p99 ms", String(format: "%.0f", result.json["pauseP99Ms"] as? Double ?? 0)),
            ("refused", "\(result.json["refused"] ?? 0)"), ("lost", "\(result.json["lost"] ?? 0)"),
        ], json: result.json)]
    }
    if rows.last?.workload != "upgrade" { upgradeFailed = true }
}

BenchReport(rows: rows).print()
do {
    let path = try BenchReport(rows: rows).write(to: out)
    print("results: \(path)")
} catch {
    print("happybench: could not write results: \(error)")
}
if upgradeFailed {
    print("happybench: the upgrade workload did not keep its promises (see above)")
    exit(1)
}
