#!/usr/bin/env python3
"""The closing table of `make bench`: every tracked figure, Happy beside the
C libwebsockets peer, their ratio, and the target the ratio is held to.

usage: scripts/bench-table.py [--peers RESULTS.jsonl] [--happybench RESULTS.json]
                              [--render OUTPUT.txt] [--joins RESULTS.jsonl]
                              [--crowd-joins RESULTS.jsonl] [--crowd-only] [--markdown]

--peers       rows written by the peers' compare.sh/run.sh (one JSON object a
              line; "peer" is "happy" or "lws", "n", "window", "msgs_per_s",
              "connect_s", "server": {"cpu_s_per_1m_msgs", "rss_bytes_per_conn"});
              the last row per (peer, N) counts
--happybench  a results file of happybench (bench/results/happybench-*.json):
              the "frames uncached" and "held N" rows
--render      what happyrender-bench printed (a row per view: median / p99 ms)
--joins       rows of compare.sh like --peers, from a server without presence
              broadcasts (presenceBroadcastMax 0), as the C peer has none
--crowd-joins rows of compare.sh like --peers, from a server with the protocol's
              presence (batched past crowd.presenceBatchAbove): crowds joining
--crowd-only  only the crowd-room rows (`make bench-crowd`); happybench's
              "crowd" rows give the load figures (PROTOCOL.md section 12)
Figures that are missing print as "-". Nothing here fails the run: that is
`make bench-check`'s job.
"""
import argparse
import json
import re
import statistics
import sys

# What today's uncached /frame manages (req/s); the target is 4x this.
FRAME_BASELINE_RPS = 125.0


def load_peers(path):
    by = {}
    if not path:
        return by
    try:
        with open(path) as f:
            for line in f:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                by[(row.get("peer"), row.get("n"))] = row
    except OSError:
        pass
    return by


def load_happybench(path):
    if not path:
        return []
    try:
        with open(path) as f:
            return json.load(f).get("results", [])
    except (OSError, ValueError):
        return []


def render_ms(path):
    """The median over views of render+encode ms per frame, and the worst view."""
    if not path:
        return None, None
    try:
        text = open(path).read()
    except OSError:
        return None, None
    # happyrender-bench's rows: view, then median / p99 of render, encode, render+encode.
    pair = r"([0-9.]+)\s*/\s*([0-9.]+)"
    rows = re.findall(r"^(?:face|heart|dragon|scene)\s+" + r"\s+".join([pair] * 3), text, re.M)
    values = [float(row[4]) for row in rows]
    if not values:
        return None, None
    return statistics.median(values), max(values)


def positive(value):
    return isinstance(value, (int, float)) and value > 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers")
    ap.add_argument("--happybench")
    ap.add_argument("--render")
    ap.add_argument("--joins")
    ap.add_argument("--crowd-joins")
    ap.add_argument("--crowd-only", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()

    peers = load_peers(a.peers)
    bench = load_happybench(a.happybench)
    rows = []  # figure, happy, C, ratio, target, verdict

    def add(figure, happy, c, fmt, target=None, higher_is_better=False, against_c=False, counts=False):
        """target: a bound on the ratio to C when against_c, else on Happy's value itself.
        counts: zero is a measured value (resyncs, drops), not a missing one."""
        measured = (lambda v: isinstance(v, (int, float)) and v >= 0) if counts else positive
        ratio = happy / c if positive(happy) and positive(c) else None
        checked = ratio if against_c else happy
        verdict = ""
        if target is not None and measured(checked):
            good = checked >= target if higher_is_better else checked <= target
            verdict = "ok" if good else "MISSED"
        bound = ""
        if target is not None:
            bound = ("≥ " if higher_is_better else "≤ ") + ("%gx" % target if against_c else fmt % target)
        rows.append([figure, fmt % happy if measured(happy) else "-",
                     (fmt % c if positive(c) else "-") if against_c else "",
                     ("%.2f" % ratio if ratio is not None else "-") if against_c else "",
                     bound, verdict])

    if not a.crowd_only:
        add_tracked_rows(a, peers, bench, add, rows)
    add_crowd_rows(a, bench, add, rows)

    header = ["figure", "Happy", "C peer", "x C", "target", ""]
    print_rows(a, header, rows)
    return 0


def add_tracked_rows(a, peers, bench, add, rows):
    """Fan-out and joins beside the C peer, frames, held connections."""
    fanout_targets = {
        1000: {"msgs": 1.2, "cpu": 0.5},
        5000: {"cpu": 1.0, "join": 1.0},
        10000: {"cpu": 1.0, "join": 1.0},
    }
    for n in (1000, 5000, 10000):
        happy, lws = peers.get(("happy", n), {}), peers.get(("lws", n), {})
        window = happy.get("window", lws.get("window", "?"))
        label = "fan-out N=%d w=%s" % (n, window)
        targets = fanout_targets[n]

        def server(row, key):
            return row.get("server", {}).get(key)

        add(label + " msg/s", happy.get("msgs_per_s"), lws.get("msgs_per_s"), "%.0f", targets.get("msgs"), True, True)
        add(label + " CPU s/1M", server(happy, "cpu_s_per_1m_msgs"), server(lws, "cpu_s_per_1m_msgs"), "%.2f",
            targets.get("cpu"), against_c=True)
        kb_h, kb_c = server(happy, "rss_bytes_per_conn"), server(lws, "rss_bytes_per_conn")
        add(label + " KB/conn", kb_h / 1024 if positive(kb_h) else None, kb_c / 1024 if positive(kb_c) else None,
            "%.1f", against_c=True)
        # PROTOCOL.md's presence is on here; the C peer sends none (rows below without it).
        add(label + " join s (conc 200), presence on", happy.get("connect_s"), lws.get("connect_s"), "%.2f",
            targets.get("join"), against_c=True)
        add(label + " join: server CPU s, presence on", server(happy, "cpu_s_connect"), server(lws, "cpu_s_connect"), "%.2f",
            against_c=True)

    # The same crowds on a server without presence broadcasts: the C peer has none, and
    # with them the load generator, not the server, sets the pace (it must read ~N^2/2
    # presence messages and a 1000-entry list per welcome).
    joins = load_peers(a.joins)
    for n in (5000, 10000):
        happy, lws = joins.get(("happy", n), {}), joins.get(("lws", n), {})
        if happy or lws:
            add("join N=%d s (conc 200), no presence broadcasts" % n, happy.get("connect_s"), lws.get("connect_s"),
                "%.2f", fanout_targets[n].get("join"), against_c=True)
            add("join N=%d: server CPU s, no presence broadcasts" % n, happy.get("server", {}).get("cpu_s_connect"),
                lws.get("server", {}).get("cpu_s_connect"), "%.2f", against_c=True)

    median, worst = render_ms(a.render)
    add("frames render+encode ms/view, median of views", median, None, "%.2f", 2.0)
    add("frames render+encode ms/view, slowest view", worst, None, "%.2f")
    uncached = next((r for r in bench if r.get("workload") == "frames uncached"), {})
    add("frames uncached /frame req/s", uncached.get("requestsPerSecond"), None, "%.0f",
        4 * FRAME_BASELINE_RPS, True)

    held = next((r for r in bench if str(r.get("workload", "")).startswith("held ")), {})
    label = "held %s" % held.get("connections", "19000")
    per_conn = held.get("bytesPerConnection")
    add(label + " KB/conn", per_conn / 1024 if positive(per_conn) else None, None, "%.2f", 3.5)
    after = held.get("bytesPerConnectionAfterBroadcasts")
    add(label + " KB/conn after 60 s of events", after / 1024 if positive(after) else None, None, "%.2f")
    latency = held.get("latencyMs", {})
    add(label + " delivery p50 ms", latency.get("p50"), None, "%.1f")
    add(label + " delivery p99 ms", latency.get("p99"), None, "%.1f")
    if positive(latency.get("p99")) and latency["p99"] >= 2000:
        rows[-1][1] = ">= 2000"  # happybench's histogram ends at 2 s
    idle = held.get("idleCPUPercent")
    add(label + " idle CPU % of a core (pinging)", idle if isinstance(idle, (int, float)) and idle >= 0 else None,
        None, "%.2f", 2.0)
    if held and held.get("delivered") != held.get("expected"):
        rows[-1][5] += " (delivered %s of %s)" % (held.get("delivered"), held.get("expected"))



def add_crowd_rows(a, bench, add, rows):
    """Crowd rooms (PROTOCOL.md section 12): happybench's crowd under load in
    each mode it ran, and crowds joining with presence on beside the C peer."""
    for crowd in (r for r in bench if r.get("kind") == "crowd"):
        label = "crowd N=%s W=%s×%g/s %s%s" % (crowd.get("clients"), crowd.get("writers"),
                                              crowd.get("intentsPerSecondPerWriter", 0), crowd.get("mode"),
                                              ", votes" if crowd.get("dragon") == "vote" else "")
        # Each event to everyone is expected to collapse: its figures have no targets.
        held = crowd.get("mode") != "each"
        # The targets follow the ticks the room announced (longer than crowd.tickMs in a big room or
        # on a busy server): the latency the longest, the broadcast rate the shortest.
        tick_ms = crowd.get("announcedTickMs") or crowd.get("tickMs", 50)
        shortest_ms = crowd.get("shortestAnnouncedTickMs") or tick_ms
        ticks = "%d ms" % tick_ms if shortest_ms == tick_ms else "%d-%d ms" % (shortest_ms, tick_ms)
        label += " (tick %s)" % ticks if held else ""
        rate = crowd.get("broadcastsPerClientPerSecond", {})
        add(label + " broadcasts/s per client, busiest", rate.get("max"), None, "%.1f",
            1000.0 / shortest_ms if held else None)
        add(label + " broadcasts/s per client, mean", rate.get("mean"), None, "%.1f")
        most = crowd.get("mostBroadcastsInOneSecond")
        add(label + " broadcasts in any 1 s, most at a client", most, None, "%d")
        if isinstance(most, int) and most >= crowd.get("mostBroadcastsInOneSecondCap", most + 1):
            rows[-1][1] = "≥ %d" % most  # the load generator counts no further
        kb = crowd.get("bytesPerClientPerSecond", {})
        add(label + " KB/s per client, mean", (kb.get("mean") or 0) / 1000, None, "%.1f")
        latency = crowd.get("intentToTickMs", {})
        add(label + " intent-to-tick p50 ms", latency.get("p50"), None, "%.1f")
        add(label + " intent-to-tick p99 ms", latency.get("p99"), None, "%.1f", tick_ms + 50 if held else None)
        if positive(latency.get("p99")) and latency["p99"] >= latency.get("histogramLimitMs", float("inf")):
            rows[-1][1] = "≥ %d" % latency["histogramLimitMs"]  # happybench's histogram ends there
        to_ack = crowd.get("intentToAckMs", {})
        add(label + " intent-to-ack p99 ms (every ack; a resynced client misses its tick)", to_ack.get("p99"),
            None, "%.1f")
        sent, acked = crowd.get("intentsSent"), crowd.get("intentsAcked")
        if isinstance(sent, int) and isinstance(acked, int):
            add(label + " intents not acked (of %d)" % sent, sent - acked, None, "%d", 0 if held else None, counts=True)
        add(label + " resyncs", crowd.get("resyncs"), None, "%d", 0 if held else None, counts=True)
        add(label + " clients dropped", crowd.get("dropped"), None, "%d", 0 if held else None, counts=True)
        add(label + " server CPU cores", crowd.get("serverCores"), None, "%.2f", 1.0 if held else None)
        # Pinned to one CPU, the server never passes a core: this says whether it kept up.
        busy = crowd.get("serverBusyShare")
        add(label + " server running or waiting for its CPU, %", busy * 100 if positive(busy) else None, None, "%.0f")
        rss = crowd.get("rssKilobytes", {}).get("end")
        add(label + " server RSS MB", rss / 1024 if positive(rss) else None, None, "%.0f")
        if crowd.get("dragon") == "vote":
            observer = crowd.get("observer", {})
            add(label + " dragon events in one tick, most", observer.get("mostDragonEventsInOneTick"), None, "%d",
                1 if held else None, counts=True)
            votes = (observer.get("votesForward") or 0) + (observer.get("votesBack") or 0)
            counted = crowd.get("acks", {}).get("counted", 0) - crowd.get("acks", {}).get("countedTies", 0)
            add(label + " votes in ticks minus counted acks", abs(votes - counted), None, "%d", 0, counts=True)
            if votes != counted:
                rows[-1][1] = "%+d" % (votes - counted)

    for joined in (r for r in bench if r.get("kind") == "crowd join"):
        add("crowd join N=%s s (conc %s), presence on, happybench's clients" % (joined.get("clients"),
                                                                              joined.get("concurrency")),
            joined.get("joinSeconds"), None, "%.2f")

    # The same crowds joining under the peers' load generator, Happy beside the C peer in one run.
    crowd_joins = load_peers(a.crowd_joins)
    for n in (5000, 10000):
        happy, lws = crowd_joins.get(("happy", n), {}), crowd_joins.get(("lws", n), {})
        if happy or lws:
            add("crowd join N=%d s (conc 200), presence on" % n, happy.get("connect_s"), lws.get("connect_s"),
                "%.2f", 1.0, against_c=True)
            add("crowd join N=%d: server CPU s, presence on" % n, happy.get("server", {}).get("cpu_s_connect"),
                lws.get("server", {}).get("cpu_s_connect"), "%.2f", against_c=True)
        # Server CPU per joining client beside uWebSockets.js, the figure the load generator's own
        # saturation does not distort (its wall time does).
        uws = crowd_joins.get(("uws", n), {})
        happy_cpu, uws_cpu = happy.get("server", {}).get("cpu_s_connect"), uws.get("server", {}).get("cpu_s_connect")
        if positive(happy_cpu) and positive(uws_cpu):
            add("crowd join N=%d: server CPU µs per joining client, presence on (uWS %.0f, x uWS %.2f)"
                % (n, uws_cpu * 1e6 / n, happy_cpu / uws_cpu), happy_cpu * 1e6 / n, None, "%.0f")


def print_rows(a, header, rows):
    if not rows:
        print("(no figures: nothing in the results given)")
        return
    if a.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
        for r in [header] + rows:
            print("  ".join(c.ljust(widths[i]) if i in (0, 5) else c.rjust(widths[i]) for i, c in enumerate(r)).rstrip())
    print("\nx C: Happy / the C libwebsockets peer, same workload, same run (msg/s: higher is better; "
          "CPU, memory, time: lower). Targets without a C figure bound the value itself.")
    if any(r[1] == "-" for r in rows):
        print("-: not measured in this run.")


if __name__ == "__main__":
    sys.exit(main())
