"""The checker on synthetic histories: a clean one passes, and each kind of broken promise
is caught. Run: python3 -m unittest discover -s scripts/chaos"""

import unittest

import checker

NAMES = {"dragon.forward": "forwardButtonClicked:", "dragon.back": "backButtonClicked:"}


class Scenario:
    """Builds a run: writers' intents and answers, the events the nodes hold, readers."""

    def __init__(self):
        self.records = []
        self.events = []
        self.clock = 1000.0
        self.x = 10

    def tick(self):
        self.clock += 0.1
        return self.clock

    def record(self, kind, **fields):
        self.records.append(dict(fields, kind=kind, t=self.tick()))

    def event(self, conn, action):
        self.x += 10 if action == "dragon.forward" else -10
        seq = len(self.events) + 1
        self.events.append({"type": "event", "seq": seq, "room": "chaos", "time": int(self.clock * 1000),
                            "name": NAMES[action], "sender": {"id": conn, "name": "w"}, "changes": [],
                            "state": {"dragon": {"x": self.x}}})
        return seq

    def send(self, intent_id, conn, action="dragon.forward", node=1):
        self.record("send", role="writer", client="w1", node=node, conn=conn, id=intent_id, action=action)

    def acked(self, intent_id, conn, action="dragon.forward"):
        """An intent applied and acked at its event's seq."""
        self.send(intent_id, conn, action)
        seq = self.event(conn, action)
        self.record("ack", role="writer", client="w1", node=1, conn=conn, id=intent_id, seq=seq, result="applied")
        return seq

    def answered(self, intent_id, conn, code, applied=False, action="dragon.forward"):
        self.send(intent_id, conn, action)
        if applied:
            self.event(conn, action)
        self.record("error", role="writer", client="w1", node=1, conn=conn, id=intent_id, code=code)

    def timed_out(self, intent_id, conn, applied, action="dragon.forward"):
        self.send(intent_id, conn, action)
        if applied:
            self.event(conn, action)
        self.record("timeout", role="writer", client="w1", node=1, conn=conn, id=intent_id)

    def reader_saw(self, seqs, name="r1", conn="c9"):
        self.record("connect", role="reader", client=name, node=1, conn=conn, since=None, seq=0,
                    epoch="e1", recovered=False, digest=checker.state_digest({}))
        for seq in seqs:
            event = self.events[seq - 1]
            self.record("event", role="reader", client=name, node=1, conn=conn, seq=seq,
                        sender=event["sender"]["id"], name=event["name"],
                        digest=checker.state_digest(event["state"]))

    def nodes(self, events=None):
        events = self.events if events is None else events
        last = events[-1]["state"] if events else {}
        node = {"healthz": 200,
                "state": {"room": "chaos", "epoch": "e1", "seq": len(events), "state": last},
                "history": {"epoch": "e1", "first": 1, "seq": len(events), "events": events}}
        return {"nodes": {"n1": node, "n2": node, "n3": node},
                "settle": {"final_seq": len(events), "bound": 90, "expected_nodes": ["n1", "n2", "n3"],
                           "healthy_after": {"n1": 0.1, "n2": 0.1, "n3": 0.1}}}

    def check(self, events=None, faults=()):
        return checker.check(self.records, list(faults), self.nodes(events))


def clean_scenario():
    run = Scenario()
    run.acked("w1-1", "c1")
    run.answered("w1-2", "c1", "unavailable")
    run.acked("w1-3", "c1", "dragon.back")
    run.timed_out("w1-4", "c1", applied=True)      # indeterminate: allowed either way
    run.acked("w1-5", "c2")
    run.timed_out("w1-6", "c2", applied=False)
    return run


class CleanHistoryPasses(unittest.TestCase):
    def test_clean(self):
        run = clean_scenario()
        run.reader_saw(range(1, len(run.events) + 1))
        report = run.check()
        self.assertEqual(report.violations, [], report.table())
        self.assertEqual(report.counts["acked"], 3)
        self.assertEqual(report.counts["unavailable"], 1)
        self.assertEqual(report.counts["indeterminate"], 2)
        self.assertIn("verdict: PASS", report.table())


class LostAckedIntentIsCaught(unittest.TestCase):
    def test_lost(self):
        run = clean_scenario()
        lost_seq = run.acked("w1-7", "c3")
        report = run.check(events=run.events[:lost_seq - 1])
        self.assertIn("lost", report.categories(), report.table())
        self.assertIn("w1-7", report.table())
        self.assertIn("verdict: FAIL", report.table())

    def test_acked_at_someone_elses_event(self):
        run = clean_scenario()
        seq = run.acked("w1-7", "c3")
        run.events[seq - 1]["sender"]["id"] = "c2"
        self.assertIn("lost", run.check().categories())


class DuplicatedIntentIsCaught(unittest.TestCase):
    def test_duplicated(self):
        run = clean_scenario()
        run.acked("w1-7", "c3")
        run.event("c3", "dragon.forward")     # the same intent applied a second time
        report = run.check()
        self.assertEqual(report.categories(), {"duplicated"}, report.table())


class AppliedDespiteUnavailableIsCaught(unittest.TestCase):
    def test_applied_after_unavailable(self):
        run = clean_scenario()
        run.acked("w1-7", "c3")
        run.answered("w1-8", "c3", "unavailable", applied=True, action="dragon.back")
        run.acked("w1-9", "c3")
        report = run.check()
        self.assertEqual(report.categories(), {"applied_despite_error"}, report.table())
        self.assertIn("w1-8", report.table())


class HistoryGapIsCaught(unittest.TestCase):
    def test_gap(self):
        run = clean_scenario()
        events = [dict(event) for event in run.events]
        for event in events[2:]:
            event["seq"] += 1
        nodes = run.nodes(events)
        for node in nodes["nodes"].values():
            node["history"]["seq"] = node["state"]["seq"] = events[-1]["seq"]
        self.assertIn("history_gap", checker.check(run.records, [], nodes).categories())


class ReaderGapIsCaught(unittest.TestCase):
    def test_reader_gap(self):
        run = clean_scenario()
        run.reader_saw([1, 2, 4])
        report = run.check()
        self.assertIn("reader_gap", report.categories(), report.table())

    def test_reader_behind(self):
        run = clean_scenario()
        run.reader_saw([1, 2, 3])
        self.assertEqual(run.check().categories(), {"reader_final"})


class UnrecoveredFaultIsCaught(unittest.TestCase):
    def test_not_recovered(self):
        run = clean_scenario()
        run.reader_saw(range(1, len(run.events) + 1))
        faults = [{"kind": "fault", "type": "redis-partition", "target": "n2", "start": 1, "heal": 5,
                   "nodes": [2], "recovery": None, "bound": 60, "healthz_during": {}},
                  {"kind": "fault", "type": "node-kill", "target": "n1", "start": 7, "heal": 9,
                   "nodes": [1], "recovery": 1.5, "bound": 60, "healthz_during": {}}]
        report = run.check(faults=faults)
        self.assertEqual(report.categories(), {"not_recovered"}, report.table())
        self.assertEqual(report.recovery["node-kill"], [1.5])


class Failovers(unittest.TestCase):
    def failover(self, start, kind="primary-kill", to="r2", rejoined=9.5):
        return {"kind": "fault", "type": kind, "target": "primary", "start": start, "heal": start + 5,
                "nodes": [1, 2, 3], "recovery": 0.2, "bound": 60, "healthz_during": {}, "primary": "r1",
                "failover_to": to, "failover_after": 2.5, "rejoined": rejoined, "rejoin_bound": 30}

    def test_outage_is_measured_to_the_first_ack_of_an_intent_sent_after_the_death(self):
        run = clean_scenario()
        run.reader_saw(range(1, len(run.events) + 1))
        death = run.clock
        run.answered("w1-7", "c3", "unavailable")   # sent 0.1 s after the death, refused
        run.acked("w1-8", "c3")                     # sent 0.3 s after it, acked at 0.4 s
        report = checker.check(run.records, [self.failover(death)], run.nodes())
        self.assertEqual(len(report.failovers), 1)
        self.assertAlmostEqual(report.failovers[0][2], 0.4, places=3)
        self.assertIn("failovers: 1 (primary-kill 1)", report.table())

    def test_a_missing_failover_or_rejoin_and_too_few_failovers_are_caught(self):
        run = clean_scenario()
        run.reader_saw(range(1, len(run.events) + 1))
        nodes = run.nodes()
        nodes["min_failovers"] = 3
        faults = [self.failover(1, rejoined=None), self.failover(2, kind="primary-split", to=None)]
        report = checker.check(run.records, faults, nodes)
        self.assertEqual(report.categories(), {"not_rejoined", "no_failover", "too_few_failovers"}, report.table())


class RollingRestarts(unittest.TestCase):
    """A rolling restart moves n1's writer to n2 with a 1012; the reader on n1 follows and resumes."""

    def rolling(self, run, start, end):
        return {"kind": "fault", "type": "rolling-restart", "target": "nodes", "start": start, "heal": end,
                "nodes": [1, 2, 3], "recovery": 0.1, "bound": 60, "healthz_during": {},
                "steps": [{"node": "n1", "start": start, "replaced": True, "serving": start + 0.2, "back": end}]}

    def moved(self, recovered=True):
        run = clean_scenario()
        run.record("connect", role="writer", client="w1", node=1, conn="c3", seq=0, epoch="e1", cause="first")
        before = run.acked("w1-10", "c3")
        start = run.clock
        run.record("disconnect", role="writer", client="w1", node=1, conn="c3", reason="closed", code=1012)
        run.record("connect", role="writer", client="w1", node=2, conn="c4", seq=before, epoch="e1", cause="restart")
        run.acked("w1-11", "c4")
        run.reader_saw(range(1, before + 1))
        run.record("disconnect", role="reader", client="r1", node=1, conn="c9", reason="closed", code=1012)
        run.record("connect", role="reader", client="r1", node=2, conn="c10", since=before, seq=before + 1,
                   epoch="e1", recovered=recovered, digest=checker.state_digest(run.events[-1]["state"]),
                   cause="restart")
        if recovered:
            # The event missed meanwhile follows; without recovery the welcome's state is the truth.
            event = run.events[-1]
            run.record("event", role="reader", client="r1", node=2, conn="c10", seq=before + 1, sender=event["sender"]["id"],
                       name=event["name"], digest=checker.state_digest(event["state"]))
        return run, start

    def test_a_restart_that_moves_everyone_keeps_every_promise_and_measures_the_pause(self):
        run, start = self.moved()
        nodes = run.nodes()
        nodes["restart_pause_bounds"] = "1000,1000"
        report = checker.check(run.records, [self.rolling(run, start, run.clock)], nodes)
        self.assertEqual(report.categories(), set(), report.table())
        # From the last ack before the 1012: the 1012, the connect, the send, the ack, 0.1 s apart.
        self.assertAlmostEqual(report.restart_pauses["rolling-restart"][0], 0.4, places=3)
        self.assertAlmostEqual(report.writer_waits["rolling-restart"][0], 0.3, places=3)

    def test_a_refused_connection_a_reader_not_resumed_and_a_long_pause_are_caught(self):
        run, start = self.moved(recovered=False)
        run.record("connect_failed", role="writer", client="w2", node=3, conn=None, error="ConnectionRefusedError")
        nodes = run.nodes()
        nodes["restart_pause_bounds"] = "100,300"
        report = checker.check(run.records, [self.rolling(run, start, run.clock)], nodes)
        self.assertEqual(report.categories(), {"refused_in_restart", "not_resumed", "slow_restart"}, report.table())


if __name__ == "__main__":
    unittest.main()
