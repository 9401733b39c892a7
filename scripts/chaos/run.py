"""A chaos run: Redis (one primary, two replicas and three sentinels, or with --topology single
one Redis) and three happyserver nodes in network namespaces, writers and readers spread over
the nodes, a seeded random schedule of faults, then the checker's verdict.

Usage (as root): run.py --server .build/release/happyserver [--seconds 120] [--seed N]
Exit status: 0 when every invariant held, 1 on a violation, 2 when the run itself failed
(with --expect-violation: 0 only when one of the named violations was found)."""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import checker
import faults
from cluster import Cluster
from topology import NODE_PORT, Topology

HERE = os.path.dirname(os.path.abspath(__file__))
ROOM = "chaos"
RECOVERY_BOUND = 60.0     # after a heal, the affected nodes must ack again within this
STEP_BOUND = 30.0         # a rolling restart's node serves again, and its clients are back, within this
SETTLE_BOUND = 90.0       # after the schedule, every node healthy and at the same seq within this
REJOIN_BOUND = 30.0       # after a failover's heal, the old primary replicates the new one within this
HISTORY_PAGE = 1000


class Run:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.prefix = f"chaos{os.getpid() % 100000}-{random.SystemRandom().randrange(16 ** 3):03x}"
        self.run_dir = args.out or tempfile.mkdtemp(prefix="happy-chaos-")
        os.makedirs(self.run_dir, exist_ok=True)
        self.history_path = os.path.join(self.run_dir, "history.jsonl")
        self.faults_path = os.path.join(self.run_dir, "faults.jsonl")
        self.topology = Topology(self.prefix, sentinel=args.topology == "sentinel")
        self.cluster = None
        self.workload = None
        self.tail = HistoryTail(self.history_path)

    def log(self, text):
        print(f"[chaos {time.strftime('%H:%M:%S')}] {text}", flush=True)

    def record_fault(self, **fields):
        with open(self.faults_path, "a") as out:
            out.write(json.dumps(fields) + "\n")

    def execute(self):
        args = self.args
        self.log(f"seed {args.seed}, {args.seconds} s of faults, server {args.server}, run folder {self.run_dir}")
        self.topology.create()
        self.cluster = Cluster(self.topology, self.run_dir, args.server, args.web_root)
        for process in self.cluster.redis_side.values():
            process.start()
        if not self.cluster.wait_until(self.cluster.redis_ready, 60):
            raise RuntimeError("Redis not ready within 60 s: no PING answer, or replicas and sentinels not "
                               "all in touch (see the redis and r*/s* logs)")
        for node in self.cluster.nodes.values():
            node.start()
        for index in self.cluster.nodes:
            if not self.cluster.wait_until(lambda: self.cluster.healthz(index)[0] == 200, 60):
                raise RuntimeError(f"node n{index} not healthy within 60 s (see n{index}/server.log)")
        self.start_workload()
        if not self.wait_for_acks(list(self.cluster.nodes), time.time() - 3600, 60):
            raise RuntimeError("the writers got no ack from every node within 60 s of starting")
        self.log("cluster up, writers acked on every node; faults start")

        kinds = args.faults.split(",") if args.faults else None
        schedule = faults.Schedule(self.rng, len(self.cluster.nodes), kinds, sentinel=self.cluster.sentinel,
                                   slow_links=args.slow_links, primary_pause_min=args.primary_pause_min)
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            self.one_fault(schedule.next())
            self.check_processes()
            time.sleep(self.rng.uniform(1.0, 3.0))

        self.log("faults over: healing everything, writers finish their last intents")
        faults.heal_everything(self.topology, self.cluster)
        self.workload.send_signal(signal.SIGUSR1)
        settled = self.settle()
        self.collect(settled)
        self.workload.send_signal(signal.SIGTERM)
        try:
            self.workload.wait(15)
        except subprocess.TimeoutExpired:
            self.workload.kill()

    def start_workload(self):
        nodes = ",".join(f"{self.topology.address(f'n{i}')}:{NODE_PORT}" for i in self.cluster.nodes)
        command = self.topology.exec_prefix("cli") + [
            self.args.python, os.path.join(HERE, "workload.py"), "--nodes", nodes, "--room", ROOM,
            "--writers", str(self.args.writers), "--readers", str(self.args.readers),
            "--rate", str(self.args.rate), "--seed", str(self.args.seed), "--history", self.history_path]
        log = open(os.path.join(self.run_dir, "workload.log"), "ab")
        self.workload = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()

    def wait_for_acks(self, nodes, after, timeout):
        """True once a writer on each of nodes got an ack for an intent sent after `after`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.tail.read()
            if all(self.tail.last_acked_send.get(n, 0) >= after for n in nodes):
                return True
            if self.workload.poll() is not None:
                raise RuntimeError("the workload exited (see workload.log)")
            time.sleep(0.2)
        return False

    def watch(self, fault, until):
        """Sleeps until `until`, meanwhile noting when the sentinels name a new primary."""
        watching = self.cluster.sentinel and fault.kind in faults.PRIMARY_LOSS_TYPES and fault.target == "primary"
        while True:
            if watching and fault.failover is None:
                new = self.cluster.failed_over_from(fault.primary)
                if new:
                    fault.failover = (new, time.time() - fault.start)
                    self.log(f"failover: the sentinels name {new} {fault.failover[1]:.2f} s after the fault began")
            left = until() - time.time()
            if left <= 0:
                return
            time.sleep(min(0.2, left))

    def one_fault(self, fault):
        affected = fault.affected_nodes(len(self.cluster.nodes))
        if fault.kind in faults.ROLLING_TYPES:
            self.log(f"fault: {fault.kind} of every node in turn")
            during = self.rolling(fault)
        else:
            faults.inject(fault, self.topology, self.cluster)
            self.log(f"fault: {fault.describe()}")
            self.watch(fault, lambda: fault.start + fault.duration * 0.75)
            # What the affected nodes say about themselves late in the fault (time to notice it).
            during = {f"n{i}": self.cluster.healthz(i, timeout=1.0) for i in affected}
            self.watch(fault, lambda: fault.start + fault.duration)
            if fault.kind in faults.FAILOVER_TYPES:
                # Held until the sentinels moved, so each of these ends in a failover.
                self.watch(fault, lambda: fault.start + faults.FAILOVER_BOUND if fault.failover is None else 0)
            faults.heal(fault, self.topology, self.cluster)
        recovered = None
        healthy = set()
        deadline = time.monotonic() + RECOVERY_BOUND
        while time.monotonic() < deadline:
            self.watch(fault, lambda: 0)
            for i in affected:
                if i not in healthy and self.cluster.healthz(i, timeout=1.0)[0] == 200:
                    healthy.add(i)
            self.tail.read()
            if len(healthy) == len(affected) and all(
                    self.tail.last_acked_send.get(i, 0) >= fault.heal for i in affected):
                recovered = time.time() - fault.heal
                break
            time.sleep(0.1)
        self.log(f"healed; recovered in {recovered:.2f} s" if recovered is not None
                 else f"healed; NOT recovered within {RECOVERY_BOUND:.0f} s")
        extra = {}
        if fault.primary:
            extra["primary"] = fault.primary
            extra["member"] = fault.member
        if fault.failover:
            extra["failover_to"], extra["failover_after"] = fault.failover
            extra["rejoined"] = self.wait_rejoined(fault)
            extra["rejoin_bound"] = REJOIN_BOUND
        elif fault.kind in faults.FAILOVER_TYPES:
            extra["failover_to"] = None
            extra["failover_bound"] = faults.FAILOVER_BOUND
        if fault.kind in faults.ROLLING_TYPES:
            extra["steps"] = fault.steps
        self.record_fault(kind="fault", type=fault.kind, target=fault.target, start=fault.start,
                          heal=fault.heal, nodes=affected, recovery=recovered, bound=RECOVERY_BOUND,
                          healthz_during={k: {"status": v[0], "body": v[1][:200]} for k, v in during.items()},
                          **extra)

    def rolling(self, fault):
        """Restarts (SIGTERM, then a start) or upgrades (SIGUSR2) each node in turn, as a deploy
        does: the next once this one serves again and a writer on it got an ack. Its clients
        close with 1012, move to another node at once and come back once it serves. Returns
        what each node's /healthz said right after its turn."""
        fault.start = time.time()
        fault.steps = []
        during = {}
        for index in sorted(self.cluster.nodes):
            node = self.cluster.nodes[index]
            began = time.time()
            if fault.kind == "rolling-upgrade":
                replaced = node.upgrade(timeout=STEP_BOUND) is not None
            else:
                node.stop(grace=STEP_BOUND)
                node.start()
                replaced = True
            serving = self.cluster.wait_until(lambda: self.cluster.healthz(index, timeout=1.0)[0] == 200, STEP_BOUND,
                                              interval=0.05)
            served_at = time.time()
            during[f"n{index}"] = self.cluster.healthz(index, timeout=1.0)
            back = self.wait_for_acks([index], served_at, STEP_BOUND)
            step = {"node": f"n{index}", "start": began, "replaced": replaced, "serving": served_at if serving else None,
                    "back": time.time() if back else None}
            fault.steps.append(step)
            self.log(f"  n{index}: " + ("replaced" if replaced else "NOT replaced") + f", serving after "
                     f"{served_at - began:.2f} s" + (", its writers back" if back else ", its writers NOT back")
                     + f" after {time.time() - began:.2f} s")
        fault.heal = time.time()
        return during

    def wait_rejoined(self, fault):
        """Seconds after the heal until the old primary replicates the primary the sentinels
        name then (a second failover may have followed the first); None if not within
        REJOIN_BOUND."""
        old = fault.primary
        current = {}

        def rejoined():
            current["primary"] = self.cluster.named_primary()
            return current["primary"] not in (None, old) and self.cluster.replica_synced(old, current["primary"])

        if self.cluster.wait_until(rejoined, REJOIN_BOUND):
            seconds = time.time() - fault.heal
            self.log(f"{old} rejoined as a replica of {current['primary']} {seconds:.2f} s after the heal")
            return seconds
        self.log(f"{old} did NOT rejoin as a replica of the primary ({current.get('primary')}) "
                 f"within {REJOIN_BOUND:.0f} s")
        return None

    def check_processes(self):
        """A node or Redis that exited by itself crashed: that is recorded (a violation) and
        it is started again so the run goes on."""
        for name, process in list(self.cluster.redis_side.items()) + [(f"n{i}", p) for i, p in self.cluster.nodes.items()]:
            if not process.running():
                self.log(f"{name} exited by itself (status {process.popen.returncode}); starting it again")
                self.record_fault(kind="crash", target=name, status=process.popen.returncode, t=time.time())
                process.start()

    def settle(self):
        """Waits until every node answers /healthz 200 and all are at one seq, the writers
        are done and every reader has reached that seq. Returns what it saw."""
        start = time.time()
        deadline = time.monotonic() + SETTLE_BOUND
        healthy_after = {}
        final_seq = None
        while time.monotonic() < deadline:
            self.check_processes()
            for i in self.cluster.nodes:
                if i not in healthy_after and self.cluster.healthz(i)[0] == 200:
                    healthy_after[i] = time.time() - start
            self.tail.read()
            if len(healthy_after) == len(self.cluster.nodes) and self.tail.writers_done:
                seqs = set()
                for i in self.cluster.nodes:
                    try:
                        seqs.add(self.cluster.get_json(i, f"/api/state?room={ROOM}")["seq"])
                    except (RuntimeError, ValueError):
                        seqs.add(None)
                if len(seqs) == 1 and None not in seqs:
                    final_seq = seqs.pop()
                    if all(seq >= final_seq for seq in self.tail.reader_seq.values()) \
                            and len(self.tail.reader_seq) == self.args.readers:
                        break
            time.sleep(0.3)
        waited = time.time() - start
        self.log(f"settled after {waited:.1f} s at seq {final_seq}" if final_seq is not None
                 else f"did NOT settle within {SETTLE_BOUND:.0f} s")
        return {"healthy_after": {f"n{i}": t for i, t in healthy_after.items()}, "bound": SETTLE_BOUND,
                "expected_nodes": [f"n{i}" for i in self.cluster.nodes],
                "final_seq": final_seq, "waited": waited, "writers_done": self.tail.writers_done}

    def collect(self, settled):
        nodes = {}
        for i in self.cluster.nodes:
            entry = {"healthz": self.cluster.healthz(i)[0]}
            try:
                entry["state"] = self.cluster.get_json(i, f"/api/state?room={ROOM}")
                entry["history"] = self.read_history(i)
            except (RuntimeError, ValueError) as error:
                entry["error"] = str(error)
            nodes[f"n{i}"] = entry
        with open(os.path.join(self.run_dir, "nodes.json"), "w") as out:
            json.dump({"settle": settled, "nodes": nodes, "seed": self.args.seed,
                       "seconds": self.args.seconds, "server": self.args.server,
                       "topology": self.args.topology, "min_failovers": self.args.min_failovers,
                       "restart_pause_bounds": self.args.restart_pause_bounds}, out)

    def read_history(self, index):
        first_page = self.cluster.get_json(index, f"/api/history?room={ROOM}&since=0&limit={HISTORY_PAGE}")
        events, page = list(first_page["events"]), first_page
        while page["events"] and events[-1]["seq"] < page["seq"]:
            page = self.cluster.get_json(index, f"/api/history?room={ROOM}&since={events[-1]['seq']}&limit={HISTORY_PAGE}")
            events.extend(page["events"])
        return {"epoch": first_page["epoch"], "first": first_page["first"], "seq": page["seq"], "events": events}

    def cleanup(self):
        # A second Ctrl-C must not leave namespaces or processes behind.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.alarm(0)
        if self.topology.created:
            self.topology.clear_all()   # a partition would slow the nodes' shutdown
        if self.workload is not None and self.workload.poll() is None:
            self.workload.kill()
            self.workload.wait()
        if self.cluster is not None:
            self.cluster.stop_all()
        self.topology.destroy()


class HistoryTail:
    """Follows the history file while the run goes: when each node last acked, and how far
    each reader has read."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.sent = {}
        self.last_acked_send = {}
        self.reader_seq = {}
        self.writers_done = False

    def read(self):
        if not os.path.exists(self.path):
            return
        with open(self.path) as history:
            history.seek(self.offset)
            while True:
                line = history.readline()
                if not line.endswith("\n"):
                    break
                self.offset += len(line.encode())
                record = json.loads(line)
                kind = record["kind"]
                if kind == "send":
                    self.sent[record["id"]] = record["t"]
                elif kind == "ack":
                    node = record["node"]
                    self.last_acked_send[node] = max(self.last_acked_send.get(node, 0), self.sent[record["id"]])
                elif kind in ("event", "resync"):
                    self.reader_seq[record["client"]] = record["seq"]
                elif kind == "connect" and record["role"] == "reader":
                    if not record["recovered"]:
                        self.reader_seq[record["client"]] = record["seq"]
                elif kind == "writers_done":
                    self.writers_done = True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="the happyserver binary")
    parser.add_argument("--seconds", type=float, default=120, help="how long faults are injected (default 120)")
    parser.add_argument("--seed", type=int, default=None, help="replays a run's schedule (default: random)")
    parser.add_argument("--topology", choices=["sentinel", "single"], default="sentinel",
                        help="sentinel (default): a primary, two replicas and three sentinels; single: one Redis")
    parser.add_argument("--faults", help="comma-separated fault kinds to draw from (default: every kind of the topology)")
    parser.add_argument("--slow-links", choices=["any", "nodes"], default="any",
                        help="where slow-link faults go: any link (default), or the nodes' links only, never "
                             "Redis's (a slow primary can lose acked intents to Sentinel: docs/chaos.md)")
    parser.add_argument("--primary-pause-min", type=float, default=3.0,
                        help="shortest pause of the primary, in seconds (default 3, like every fault); 8 lets "
                             "Sentinel finish its failover first (a primary back mid-failover is a slow one: "
                             "docs/chaos.md)")
    parser.add_argument("--min-failovers", type=int, default=0,
                        help="a violation unless at least this many failovers happened (Sentinel)")
    parser.add_argument("--restart-pause-bounds", metavar="MEDIAN_MS,P99_MS",
                        help="a violation when the write pause per node of the rolling restarts is past these "
                             "(meaningful with several writers per node, e.g. --writers 30)")
    parser.add_argument("--writers", type=int, default=6)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--rate", type=float, default=4.0, help="intents per second per writer (default 4)")
    parser.add_argument("--python", default=sys.executable, help="Python with websockets, for the clients")
    parser.add_argument("--web-root", default=os.path.join(HERE, "..", "..", "web"))
    parser.add_argument("--out", help="run folder (default: a new one under the temporary folder, removed when the run passes)")
    parser.add_argument("--keep", action="store_true", help="keep the run folder also when the run passes")
    parser.add_argument("--expect-violation", metavar="CATEGORIES",
                        help="comma-separated checker categories (e.g. lost): succeed only if one is found "
                             "(proves the checker catches a planted defect)")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 2 ** 31)
    args.server = os.path.abspath(args.server)
    args.web_root = os.path.abspath(args.web_root)
    if os.geteuid() != 0:
        sys.exit("chaos: must run as root (it creates network namespaces)")
    known = faults.SENTINEL_TYPES if args.topology == "sentinel" else faults.FAULT_TYPES
    unknown = [kind for kind in (args.faults or "").split(",") if kind and kind not in known]
    if unknown:
        sys.exit(f"chaos: unknown fault kinds for the {args.topology} topology: {', '.join(unknown)} "
                 f"(known: {', '.join(known)})")
    if not os.access(args.server, os.X_OK):
        sys.exit(f"chaos: no happyserver at {args.server}")

    run = Run(args)
    print(f"chaos: seed {args.seed} (replay with --seed {args.seed})", flush=True)

    def interrupted(number, frame):
        raise KeyboardInterrupt()

    signal.signal(signal.SIGTERM, interrupted)
    # The whole run is bounded: the schedule, one recovery bound per fault, settling, collecting.
    signal.signal(signal.SIGALRM, interrupted)
    signal.alarm(int(args.seconds + RECOVERY_BOUND + SETTLE_BOUND + 300))
    try:
        run.execute()
    except KeyboardInterrupt:
        run.log("interrupted or out of time: cleaning up")
        run.cleanup()
        sys.exit(2)
    except Exception as error:
        run.log(f"run failed: {error}")
        run.cleanup()
        raise SystemExit(2)
    finally:
        signal.alarm(0)
    run.cleanup()
    report = checker.check_run(run.run_dir)
    print(report.table())
    if args.expect_violation:
        wanted = set(args.expect_violation.split(","))
        found = wanted & report.categories()
        print(f"chaos: expected a violation among {sorted(wanted)}: "
              + (f"found {sorted(found)}, as it should" if found else "found NONE: the checker missed the defect"))
        print(f"chaos: seed {args.seed}, run folder {run.run_dir}")
        sys.exit(0 if found else 1)
    if report.violations or args.keep or args.out:
        print(f"chaos: seed {args.seed}, run folder {run.run_dir} (history.jsonl, faults.jsonl, nodes.json, logs)")
    else:
        shutil.rmtree(run.run_dir, ignore_errors=True)
        print(f"chaos: seed {args.seed}, passed (run folder removed; --keep keeps it)")
    sys.exit(1 if report.violations else 0)


if __name__ == "__main__":
    main()
