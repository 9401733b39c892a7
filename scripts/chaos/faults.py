"""The fault kinds of a chaos run: how each starts, heals, and which nodes it affects
(the nodes whose recovery is timed after the heal)."""

import time

FAULT_TYPES = [
    "redis-partition",    # one node cut from Redis
    "clients-partition",  # one node cut from its clients
    "slow-link",          # 20 % loss and a 1 Mbit/s queue on one link (a node's or Redis's); no netem here
    "redis-pause",        # SIGSTOP, then SIGCONT, of Redis
    "node-pause",         # SIGSTOP, then SIGCONT, of one node
    "node-kill",          # SIGKILL of one node, then its restart
    "redis-restart",      # SIGKILL of Redis, then its restart (the append-only file keeps every write)
]


class Fault:
    def __init__(self, kind, target, duration):
        self.kind, self.target, self.duration = kind, target, duration
        self.start = self.heal = None

    def affected_nodes(self, node_count):
        if self.kind in ("redis-pause", "redis-restart") or self.target == "redis":
            return list(range(1, node_count + 1))
        return [int(self.target[1:])]

    def describe(self):
        return f"{self.kind} {self.target} for {self.duration:.1f} s"


class Schedule:
    """Every kind once per round, in a seeded random order, so short runs see all of them."""

    def __init__(self, rng, node_count):
        self.rng, self.node_count = rng, node_count
        self.round = []

    def next(self):
        if not self.round:
            self.round = list(FAULT_TYPES)
            self.rng.shuffle(self.round)
        kind = self.round.pop()
        node = f"n{self.rng.randint(1, self.node_count)}"
        if kind == "slow-link":
            target = self.rng.choice([node, "redis"])
        elif kind in ("redis-pause", "redis-restart"):
            target = "redis"
        else:
            target = node
        return Fault(kind, target, self.rng.uniform(3.0, 6.0))


def inject(fault, topology, cluster):
    fault.start = time.time()
    if fault.kind == "redis-partition":
        topology.drop_between(fault.target, "redis")
    elif fault.kind == "clients-partition":
        topology.drop_between(fault.target, "cli")
    elif fault.kind == "slow-link":
        topology.slow_and_lossy(fault.target)
    elif fault.kind == "redis-pause":
        cluster.redis.pause()
    elif fault.kind == "node-pause":
        cluster.nodes[int(fault.target[1:])].pause()
    elif fault.kind == "node-kill":
        cluster.nodes[int(fault.target[1:])].kill()
    elif fault.kind == "redis-restart":
        cluster.redis.kill()
    else:
        raise ValueError(fault.kind)


def heal(fault, topology, cluster):
    if fault.kind == "redis-partition":
        topology.clear(fault.target)
        topology.clear("redis")
    elif fault.kind == "clients-partition":
        topology.clear(fault.target)
        topology.clear("cli")
    elif fault.kind == "slow-link":
        topology.clear(fault.target)
    elif fault.kind == "redis-pause":
        cluster.redis.resume()
    elif fault.kind == "node-pause":
        cluster.nodes[int(fault.target[1:])].resume()
    elif fault.kind == "node-kill":
        cluster.nodes[int(fault.target[1:])].start()
    elif fault.kind == "redis-restart":
        cluster.redis.start()
    fault.heal = time.time()


def heal_everything(topology, cluster):
    """After the schedule (or on an error): no rule left, nothing paused, everything running."""
    topology.clear_all()
    if cluster.redis.paused:
        cluster.redis.resume()
    if not cluster.redis.running():
        cluster.redis.start()
    for node in cluster.nodes.values():
        if node.paused:
            node.resume()

