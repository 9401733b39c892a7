"""The chaos run's checker: from the clients' history file, the fault log and what every
node's /api/history and /api/state said at the end, proves the cluster's promises held.

  python3 checker.py RUN_FOLDER      prints the verdict table; exit status 1 on a violation

Needs nothing beyond the standard library (the unit tests run it on synthetic histories)."""

import hashlib
import json
import os
import statistics
import sys
from collections import Counter, defaultdict

ACTION_EVENT = {"dragon.forward": "forwardButtonClicked:", "dragon.back": "backButtonClicked:"}
MAX_EVIDENCE = 5


def state_digest(state):
    """The same digest the readers record for the states they receive."""
    return hashlib.sha1(json.dumps(state, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


class Report:
    def __init__(self):
        self.violations = []     # (category, text)
        self.counts = Counter()
        self.faults = Counter()
        self.recovery = defaultdict(list)
        self.unrecovered = Counter()
        self.healthz_during = defaultdict(Counter)
        self.notes = []
        self.run = ""
        self.failovers = []      # (fault type, sentinels moved after s, write outage s or None)
        self.restart_pauses = defaultdict(list)   # rolling fault type: write pause per node (s)
        self.writer_waits = defaultdict(list)     # rolling fault type: each moved writer's 1012 -> next ack (s)

    def violate(self, category, text):
        self.counts[category] += 1
        if sum(1 for c, _ in self.violations if c == category) < MAX_EVIDENCE:
            self.violations.append((category, text))
        elif self.counts[category] == MAX_EVIDENCE + 1:
            self.violations.append((category, "(more of these not shown)"))

    def categories(self):
        return {c for c, _ in self.violations}

    def table(self):
        c = self.counts
        lines = ["", "== chaos verdict ==" + (f" ({self.run})" if self.run else "")]
        lines.append("faults injected:")
        width = max([len(k) for k in self.faults] + [17])
        lines.append(f"  {'type':<{width}}  count  recovery min / median / max (s)  not recovered  healthz during (status: count)")
        for kind in sorted(self.faults):
            times = sorted(self.recovery[kind])
            timing = (f"{times[0]:6.2f} / {statistics.median(times):6.2f} / {times[-1]:6.2f}" if times else "     - /      - /      -")
            during = ", ".join(f"{status}: {count}" for status, count in sorted(self.healthz_during[kind].items(), key=str))
            lines.append(f"  {kind:<{width}}  {self.faults[kind]:5d}  {timing:>31}  {self.unrecovered[kind]:13d}  {during}")
        if self.failovers:
            by_type = Counter(kind for kind, _, _ in self.failovers)
            lines.append(f"failovers: {len(self.failovers)} ("
                         + ", ".join(f"{kind} {count}" for kind, count in sorted(by_type.items())) + ")")
            lines.append("  sentinels named the new primary after (s)   " + spread([m for _, m, _ in self.failovers]))
            outages = [o for _, _, o in self.failovers if o is not None]
            lines.append("  write outage per failover (s)                " + spread(outages)
                         + "  (primary lost -> first ack of an intent sent after it)")
        for kind in sorted(self.restart_pauses):
            lines.append(f"{kind}: write pause per node  " + spread(self.restart_pauses[kind])
                         + "  (its writers' last ack before its 1012 -> their first ack after)")
            lines.append(f"  {'each moved writer':<20}  " + spread(self.writer_waits[kind])
                         + "  (its 1012 -> its next ack, on another node)")
        lines.append("intents:")
        lines.append(f"  sent {c['sent']}, acked {c['acked']}, unavailable {c['unavailable']}, other errors "
                     f"{c['other_errors']}, indeterminate {c['indeterminate']} (never answered: timed out or cut)")
        lines.append(f"  timeouts {c['timeouts']}, of which answered late {c['late_acked'] + c['late_errors']} "
                     f"({c['late_acked']} acks); connections cut with an intent outstanding {c['cut']}")
        lines.append("invariants:")
        rows = [
            ("acked intents lost", "lost"),
            ("acked intents duplicated", "duplicated"),
            ("applied despite an error answer", "applied_despite_error"),
            ("events from no writer's connection", "foreign_event"),
            ("history gaps / not from 1", "history_gap"),
            ("nodes' histories differ", "history_mismatch"),
            ("nodes' final states differ", "state_mismatch"),
            ("reader gaps or repeats", "reader_gap"),
            ("reader events unlike the history", "reader_mismatch"),
            ("readers not at the final state", "reader_final"),
            ("epoch changes seen", "epoch_change"),
            ("connections refused in a rolling restart", "refused_in_restart"),
            ("readers not resumed after a move", "not_resumed"),
            ("rolling restarts' write pause too long", "slow_restart"),
            ("faults not recovered from", "not_recovered"),
            ("processes that crashed", "crash"),
            ("failover faults without a failover", "no_failover"),
            ("old primaries not rejoined as replicas", "not_rejoined"),
            ("fewer failovers than asked for", "too_few_failovers"),
            ("nodes not healthy at the end", "unhealthy"),
            ("run did not settle", "not_settled"),
        ]
        for label, key in rows:
            lines.append(f"  {label:<40} {c[key]}")
        lines.append(f"readers: {c['reader_events']} events received, {c['resyncs']} resyncs "
                     f"(incl. non-recovered welcomes after the first), {c['resumes']} resumed connections")
        for note in self.notes:
            lines.append(f"note: {note}")
        if self.violations:
            lines.append("VIOLATIONS:")
            for category, text in self.violations:
                lines.append(f"  [{category}] {text}")
            lines.append("verdict: FAIL")
        else:
            lines.append("verdict: PASS (every invariant held)")
        return "\n".join(lines)


def spread(values):
    values = sorted(values)
    if not values:
        return "min / median / max: -"
    return f"min / median / max: {values[0]:.2f} / {statistics.median(values):.2f} / {values[-1]:.2f}"


def check(records, fault_records, nodes_data):
    """records: the history file's records in order; fault_records: the fault log's;
    nodes_data: {"nodes": {name: {"healthz", "state", "history"}}, "settle": {...}}."""
    report = Report()
    if "seed" in nodes_data:
        report.run = (f"seed {nodes_data['seed']}, {nodes_data.get('seconds', 0):.0f} s of faults, "
                      f"server {nodes_data.get('server', '?')}")
    reference = check_nodes(nodes_data, report)
    by_seq = {event["seq"]: event for event in reference["events"]} if reference else {}
    check_intents(records, by_seq, report)
    check_readers(records, by_seq, reference, report)
    check_faults(fault_records, nodes_data.get("settle", {}), report)
    check_failovers(records, fault_records, nodes_data.get("min_failovers", 0), report)
    check_rolling(records, fault_records, report)
    check_restart_pauses(nodes_data.get("restart_pause_bounds"), report)
    return report


def check_nodes(nodes_data, report):
    """Gap-free from 1, identical on every node, final states agree. Returns the reference
    (the first node's history and state)."""
    reference = None
    for name, node in sorted(nodes_data.get("nodes", {}).items()):
        if "history" not in node or "state" not in node:
            report.violate("history_mismatch", f"{name}: no history or state read ({node.get('error', 'unknown')})")
            continue
        history, state = node["history"], node["state"]
        seqs = [event["seq"] for event in history["events"]]
        if history["first"] != 1 or seqs != list(range(1, len(seqs) + 1)) or (seqs and seqs[-1] != history["seq"]):
            missing = sorted(set(range(1, history["seq"] + 1)) - set(seqs))[:10]
            report.violate("history_gap", f"{name}: first {history['first']}, {len(seqs)} events for seq "
                                          f"{history['seq']}, missing {missing}, repeated {repeats(seqs)[:10]}")
        if state["seq"] != history["seq"]:
            report.violate("state_mismatch", f"{name}: /api/state seq {state['seq']} but history ends at {history['seq']}")
        elif history["events"] and state_digest(history["events"][-1]["state"]) != state_digest(state["state"]):
            report.violate("state_mismatch", f"{name}: /api/state differs from its last event's state")
        if reference is None:
            reference = {"name": name, "events": history["events"], "epoch": history["epoch"],
                         "seq": history["seq"], "state": state["state"]}
            continue
        if history["epoch"] != reference["epoch"]:
            report.violate("history_mismatch", f"{name}: epoch {history['epoch']} but {reference['name']} has {reference['epoch']}")
        if history["events"] != reference["events"]:
            first_difference = next((i for i, (a, b) in enumerate(zip(history["events"], reference["events"])) if a != b),
                                    min(len(history["events"]), len(reference["events"])))
            report.violate("history_mismatch", f"{name}: history differs from {reference['name']}'s from index "
                                               f"{first_difference} ({len(history['events'])} vs {len(reference['events'])} events)")
        if state_digest(state["state"]) != state_digest(reference["state"]) or state["seq"] != reference["seq"]:
            report.violate("state_mismatch", f"{name}: final state (seq {state['seq']}) differs from "
                                             f"{reference['name']}'s (seq {reference['seq']})")
    return reference


def repeats(seqs):
    return sorted(seq for seq, count in Counter(seqs).items() if count > 1)


def check_intents(records, by_seq, report):
    """Every acked intent's event at its seq from its connection; no more events from a
    connection than intents on it that may have been applied."""
    intents = {}
    for record in records:
        if record.get("role") != "writer" or "id" not in record:
            continue
        kind = record["kind"]
        if kind == "send":
            intents[record["id"]] = {"conn": record["conn"], "node": record["node"], "action": record["action"],
                                     "client": record["client"], "outcome": None, "sent": record.get("t")}
            continue
        intent = intents.get(record["id"])
        if intent is None:
            continue
        if kind in ("ack", "late_ack"):
            intent["outcome"] = "acked"
            intent["seq"] = record["seq"]
            intent["answered"] = record.get("t", 0)
            report.counts["late_acked" if kind == "late_ack" else "on_time"] += 1
        elif kind in ("error", "late_error"):
            if kind == "late_error":
                report.counts["late_errors"] += 1
            intent["outcome"] = "error"
            intent["code"] = record["code"]
            intent["answered"] = record.get("t", 0)
        elif kind == "timeout":
            intent["outcome"] = intent["outcome"] or "indeterminate"
            report.counts["timeouts"] += 1
        elif kind == "cut":
            intent["outcome"] = intent["outcome"] or "indeterminate"
            report.counts["cut"] += 1

    per_conn = defaultdict(lambda: {"acked": [], "errors": [], "indeterminate": [], "misplaced": set()})
    for intent_id, intent in intents.items():
        report.counts["sent"] += 1
        bucket = per_conn[intent["conn"]]
        if intent["outcome"] == "acked":
            report.counts["acked"] += 1
            bucket["acked"].append((intent_id, intent))
        elif intent["outcome"] == "error":
            report.counts["unavailable" if intent["code"] == "unavailable" else "other_errors"] += 1
            bucket["errors"].append((intent_id, intent))
        else:
            report.counts["indeterminate"] += 1
            bucket["indeterminate"].append((intent_id, intent))

    events_by_conn = defaultdict(list)
    for seq, event in by_seq.items():
        events_by_conn[event["sender"]["id"]].append(seq)
    for conn, seqs in events_by_conn.items():
        if conn not in per_conn:
            report.violate("foreign_event", f"events {sorted(seqs)[:10]} from connection {conn}, on which no writer sent")

    acked_seqs = Counter()
    for conn, bucket in per_conn.items():
        for intent_id, intent in bucket["acked"]:
            acked_seqs[intent["seq"]] += 1
            event = by_seq.get(intent["seq"])
            if event is None:
                report.violate("lost", f"{intent_id} ({intent['action']} on n{intent['node']}, connection {conn}) "
                                       f"acked at seq {intent['seq']}, which no node's history holds")
            elif event["sender"]["id"] != conn or event["name"] != ACTION_EVENT[intent["action"]]:
                bucket["misplaced"].add(intent_id)
                report.violate("lost", f"{intent_id} ({intent['action']} on n{intent['node']}, connection {conn}) acked "
                                       f"at seq {intent['seq']}, but that event is {event['name']} from {event['sender']['id']}")
        acked_here = {intent["seq"] for _, intent in bucket["acked"]}
        extras = sorted(seq for seq in events_by_conn.get(conn, []) if seq not in acked_here)
        attribute_extras(conn, [by_seq[seq] for seq in extras], bucket, report)
    for seq, count in acked_seqs.items():
        if count > 1:
            report.violate("duplicated", f"seq {seq} acked to {count} intents")


SLACK = 0.05   # seconds: the nodes and the clients read the same machine's clock


def attribute_extras(conn, extras, bucket, report):
    """Events from a connection beyond its acked intents' own must each be an unanswered
    intent's (timed out or cut: allowed once each). The rest are violations, named after the
    intent that was outstanding when the node made the event (nodes and clients share a
    clock): one answered with an error was applied, or an acked one was applied twice."""
    unanswered = sorted((intent["sent"] or 0, intent_id) for intent_id, intent in bucket["indeterminate"])
    for event in extras:
        when = event["time"] / 1000
        text = f"seq {event['seq']} ({event['name']} at {when:.3f}) from connection {conn}"
        candidates = [entry for entry in unanswered if entry[0] <= when + SLACK]
        if candidates:
            unanswered.remove(candidates[-1])
            continue
        refused = [(intent_id, intent) for intent_id, intent in bucket["errors"]
                   if intent["sent"] - SLACK <= when <= intent["answered"] + SLACK
                   and ACTION_EVENT[intent["action"]] == event["name"]]
        if refused:
            intent_id, intent = refused[-1]
            report.violate("applied_despite_error",
                           f"{text}: {intent_id} ({intent['action']} on n{intent['node']}, sent {intent['sent']:.3f}) "
                           f"was answered {intent['code']} at {intent['answered']:.3f}, yet applied")
            continue
        acked = [(intent_id, intent) for intent_id, intent in bucket["acked"]
                 if intent["sent"] - SLACK <= when <= intent["answered"] + SLACK
                 and ACTION_EVENT[intent["action"]] == event["name"]]
        misplaced = [(intent_id, intent) for intent_id, intent in acked if intent_id in bucket["misplaced"]]
        if misplaced:
            # Acked with a seq that holds another event (already reported lost), applied here.
            bucket["misplaced"].discard(misplaced[-1][0])
            continue
        if acked:
            intent_id, intent = acked[-1]
            report.violate("duplicated",
                           f"{text}: {intent_id} ({intent['action']} on n{intent['node']}, sent {intent['sent']:.3f}, "
                           f"acked at {intent['answered']:.3f} with seq {intent['seq']}) applied twice")
        else:
            report.violate("duplicated", f"{text}: no intent of that connection with this action was outstanding then")


def check_readers(records, by_seq, reference, report):
    readers = defaultdict(lambda: {"last": None, "digest": None, "epoch": None, "connections": 0})
    for record in records:
        if record.get("role") != "reader":
            continue
        reader = readers[record["client"]]
        kind = record["kind"]
        if kind == "connect":
            if reader["epoch"] is not None and record["epoch"] != reader["epoch"]:
                report.violate("epoch_change", f"{record['client']}: epoch {reader['epoch']} became {record['epoch']}")
            reader["epoch"] = record["epoch"]
            if record.get("cause") in ("restart", "home") and not record["recovered"]:
                report.violate("not_resumed", f"{record['client']}: its welcome on n{record['node']} after a "
                                              f"{'1012' if record['cause'] == 'restart' else 'move home'} "
                                              f"was not recovered (since {record['since']})")
            if record["recovered"]:
                report.counts["resumes"] += 1
                if record["since"] != reader["last"]:
                    report.violate("reader_gap", f"{record['client']}: resumed from {record['since']} after seq {reader['last']}")
            else:
                if reader["connections"] > 0:
                    report.counts["resyncs"] += 1
                reader["last"], reader["digest"] = record["seq"], record["digest"]
            reader["connections"] += 1
        elif kind == "resync":
            report.counts["resyncs"] += 1
            reader["last"], reader["digest"] = record["seq"], record["digest"]
        elif kind == "event":
            report.counts["reader_events"] += 1
            seq = record["seq"]
            if reader["last"] is not None and seq != reader["last"] + 1:
                report.violate("reader_gap", f"{record['client']} (n{record['node']}, connection {record['conn']}): "
                                             f"seq {seq} after {reader['last']}")
            expected = by_seq.get(seq)
            if expected is None or expected["sender"]["id"] != record["sender"] or expected["name"] != record["name"] \
                    or state_digest(expected["state"]) != record["digest"]:
                report.violate("reader_mismatch", f"{record['client']}: event {seq} ({record['name']} from "
                                                  f"{record['sender']}) unlike the history's")
            reader["last"], reader["digest"] = seq, record["digest"]
    if reference is None:
        return
    for name, reader in sorted(readers.items()):
        if reader["last"] != reference["seq"] or reader["digest"] != state_digest(reference["state"]):
            report.violate("reader_final", f"{name}: ended at seq {reader['last']}, the nodes at {reference['seq']}"
                                           + ("" if reader["last"] != reference["seq"] else " (with another state)"))


def check_faults(fault_records, settle, report):
    for record in fault_records:
        if record["kind"] == "crash":
            report.violate("crash", f"{record['target']} exited by itself with status {record['status']}")
            continue
        kind = record["type"]
        report.faults[kind] += 1
        for status in (entry["status"] for entry in record.get("healthz_during", {}).values()):
            report.healthz_during[kind][status if status is not None else "no answer"] += 1
        if record["recovery"] is None:
            report.unrecovered[kind] += 1
            report.violate("not_recovered", f"{kind} {record['target']}: nodes {record['nodes']} did not ack again "
                                            f"within {record['bound']:.0f} s of the heal")
        else:
            report.recovery[kind].append(record["recovery"])
    if settle:
        if settle.get("final_seq") is None:
            report.violate("not_settled", f"nodes not all healthy at one seq with readers caught up within "
                                          f"{settle.get('bound')} s of the last heal")
        healthy = settle.get("healthy_after", {})
        missing = [n for n in settle.get("expected_nodes", []) if n not in healthy]
        for name in missing:
            report.violate("unhealthy", f"{name}: /healthz not 200 within {settle.get('bound')} s of the last heal")
        if healthy:
            report.notes.append("every node /healthz 200 within " + ", ".join(
                f"{n} {t:.1f} s" for n, t in sorted(healthy.items())) + " of the final heal (no restart)")


def check_failovers(records, fault_records, min_failovers, report):
    """Each failover fault ended in a failover whose old primary rejoined as a replica; the
    write outage of each: from the fault's start to the first ack of an intent sent after it."""
    sent = {}
    acks = []   # (time the intent was sent, time its ack came)
    for record in records:
        if record.get("role") != "writer":
            continue
        if record["kind"] == "send":
            sent[record["id"]] = record["t"]
        elif record["kind"] in ("ack", "late_ack") and record["id"] in sent:
            acks.append((sent[record["id"]], record["t"]))
    for record in fault_records:
        if record.get("kind") != "fault" or "failover_to" not in record:
            continue
        if record["failover_to"] is None:
            report.violate("no_failover", f"{record['type']} of {record.get('primary')}: the sentinels named no new "
                                          f"primary within {record.get('failover_bound')} s")
            continue
        start = record["start"]
        firsts = [acked for sent_at, acked in acks if sent_at >= start]
        outage = min(firsts) - start if firsts else None
        report.failovers.append((record["type"], record["failover_after"], outage))
        if record.get("rejoined") is None:
            report.violate("not_rejoined", f"{record['primary']} did not rejoin as a replica of the new primary "
                                           f"within {record.get('rejoin_bound')} s of the heal")
    if len(report.failovers) < min_failovers:
        report.violate("too_few_failovers", f"{len(report.failovers)} failovers, at least {min_failovers} asked for")


def check_rolling(records, fault_records, report):
    """Rolling restarts and upgrades: no connection attempt refused while they ran, and how
    long each node's writers could not write: from their last ack before its 1012 to their
    first ack after (on whichever node they moved to)."""
    rolling = [r for r in fault_records if r.get("kind") == "fault" and "steps" in r]
    if not rolling:
        return
    for record in records:
        if record["kind"] == "connect_failed" and any(f["start"] <= record["t"] <= f["heal"] for f in rolling):
            report.violate("refused_in_restart", f"{record['client']}: connecting to n{record['node']} failed "
                                                 f"({record.get('error')}) during a rolling restart")
    writer_records = [r for r in records if r.get("role") == "writer"]
    for fault in rolling:
        for step in fault["steps"]:
            node = int(step["node"][1:])
            end = step["back"] or fault["heal"]
            # Its writers: where they were when it began.
            where = {}
            for record in writer_records:
                if record["t"] > step["start"]:
                    break
                if record["kind"] == "connect":
                    where[record["client"]] = record["node"]
            moved = {}
            for record in writer_records:
                if step["start"] <= record["t"] <= end and record.get("code") == 1012 \
                        and where.get(record["client"]) == node and record["client"] not in moved:
                    moved[record["client"]] = record["t"]
            if not moved:
                continue
            restart = min(moved.values())
            acks = [(r["client"], r["t"]) for r in writer_records if r["kind"] == "ack" and r["client"] in moved]
            before = [t for _, t in acks if t <= restart]
            after = [t for _, t in acks if restart < t <= end]
            if before and after:
                report.restart_pauses[fault["type"]].append(min(after) - max(before))
            for client, closed in moved.items():
                nexts = [t for who, t in acks if who == client and t > closed]
                if nexts:
                    report.writer_waits[fault["type"]].append(min(nexts) - closed)


def check_restart_pauses(bounds, report):
    """With bounds ("MEDIAN_MS,P99_MS"): the write pause per node of the rolling restarts and
    upgrades, all together, within them."""
    pauses = sorted(p for kind in report.restart_pauses for p in report.restart_pauses[kind])
    if not bounds:
        return
    median_bound, p99_bound = (float(b) / 1000 for b in bounds.split(","))
    if not pauses:
        report.violate("slow_restart", "no write pause measured: no rolling restart moved a writer")
        return
    median = statistics.median(pauses)
    p99 = pauses[max(0, -(-len(pauses) * 99 // 100) - 1)]
    report.notes.append(f"rolling restarts: write pause per node median {median * 1000:.0f} ms (bound "
                        f"{median_bound * 1000:.0f}), p99 {p99 * 1000:.0f} ms (bound {p99_bound * 1000:.0f}), "
                        f"{len(pauses)} node restarts")
    if median > median_bound or p99 > p99_bound:
        report.violate("slow_restart", f"write pause per node: median {median * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms "
                                       f"(bounds {median_bound * 1000:.0f} and {p99_bound * 1000:.0f} ms)")


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path) as lines:
        return [json.loads(line) for line in lines if line.endswith("\n") and line.strip()]


def check_run(run_dir):
    with open(os.path.join(run_dir, "nodes.json")) as nodes:
        nodes_data = json.load(nodes)
    return check(read_jsonl(os.path.join(run_dir, "history.jsonl")),
                 read_jsonl(os.path.join(run_dir, "faults.jsonl")), nodes_data)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    result = check_run(sys.argv[1])
    print(result.table())
    sys.exit(1 if result.violations else 0)
