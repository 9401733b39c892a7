#!/usr/bin/env python3
"""The closing table of `make bench`: every tracked figure, Happy beside the
C libwebsockets peer, their ratio, and the target the ratio is held to.

usage: scripts/bench-table.py [--peers RESULTS.jsonl] [--happybench RESULTS.json]
                              [--render OUTPUT.txt] [--markdown]

--peers       rows written by the peers' compare.sh/run.sh (one JSON object a
              line; "peer" is "happy" or "lws", "n", "window", "msgs_per_s",
              "connect_s", "server": {"cpu_s_per_1m_msgs", "rss_bytes_per_conn"});
              the last row per (peer, N) counts
--happybench  a results file of happybench (bench/results/happybench-*.json):
              the "frames uncached" and "held N" rows
--render      what happyrender-bench printed (a row per view: median / p99 ms)
--joins       rows of compare.sh like --peers, from a server without presence
              broadcasts (presenceBroadcastMax 0), as the C peer has none
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
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()

    peers = load_peers(a.peers)
    bench = load_happybench(a.happybench)
    rows = []  # figure, happy, C, ratio, target, verdict

    def add(figure, happy, c, fmt, target=None, higher_is_better=False, against_c=False):
        """target: a bound on the ratio to C when against_c, else on Happy's value itself."""
        ratio = happy / c if positive(happy) and positive(c) else None
        checked = ratio if against_c else happy
        verdict = ""
        if target is not None and positive(checked):
            good = checked >= target if higher_is_better else checked <= target
            verdict = "ok" if good else "MISSED"
        bound = ""
        if target is not None:
            bound = ("≥ " if higher_is_better else "≤ ") + ("%gx" % target if against_c else fmt % target)
        rows.append([figure, fmt % happy if positive(happy) else "-",
                     (fmt % c if positive(c) else "-") if against_c else "",
                     ("%.2f" % ratio if ratio is not None else "-") if against_c else "",
                     bound, verdict])

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

    header = ["figure", "Happy", "C peer", "x C", "target", ""]
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
