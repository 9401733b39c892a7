"""The fault kinds of a chaos run: how each starts, heals, and which nodes it affects
(the nodes whose recovery is timed after the heal)."""

import time

FAULT_TYPES = [
    "redis-partition",    # one node cut from Redis (with Sentinel: from the primary)
    "clients-partition",  # one node cut from its clients
    "slow-link",          # 20 % loss and a 1 Mbit/s queue on one link (a node's or Redis's); no netem here
    "redis-pause",        # SIGSTOP, then SIGCONT, of Redis (with Sentinel: the primary; a failover may follow)
    "node-pause",         # SIGSTOP, then SIGCONT, of one node
    "node-kill",          # SIGKILL of one node, then its restart
    "redis-restart",      # SIGKILL of Redis, then its restart (the append-only file keeps every write)
    "rolling-restart",    # every node in turn stopped (SIGTERM) and started again, as a deploy does
    "rolling-upgrade",    # every node in turn upgraded in place (SIGUSR2)
]
# Node by node, each once its clients are back; run by the harness itself (Run.rolling).
ROLLING_TYPES = ["rolling-restart", "rolling-upgrade"]

# With Sentinel, redis-restart gives way to these; the first three end in a failover (the
# fault is held until the sentinels name a new primary) and the old primary's rejoining.
FAILOVER_TYPES = [
    "primary-kill",       # SIGKILL of the primary; healed by restarting it, to rejoin as a replica
    "primary-partition",  # the primary cut from everyone: replicas, sentinels, nodes
    "primary-split",      # the primary cut from its replicas and the sentinels, still reached by the nodes
]
SENTINEL_TYPES = FAILOVER_TYPES + [
    "replica-kill",       # SIGKILL of a replica, then its restart
    "sentinel-kill",      # SIGKILL of a sentinel, then its restart
] + [kind for kind in FAULT_TYPES if kind != "redis-restart"]

# Faults that take the primary away from the nodes: the write outage is measured from their start.
PRIMARY_LOSS_TYPES = FAILOVER_TYPES + ["redis-pause"]
# How long a failover fault is held at most, waiting for the sentinels to name a new primary.
FAILOVER_BOUND = 30.0


class Fault:
    def __init__(self, kind, target, duration):
        self.kind, self.target, self.duration = kind, target, duration
        self.start = self.heal = None
        self.primary = None        # the primary when the fault began (Sentinel)
        self.member = None         # the Redis-side member it acts on, once it began
        self.failover = None       # (new primary, seconds after the start) once the sentinels moved

    def affected_nodes(self, node_count):
        if self.target in ("redis", "primary", "replica", "sentinel", "nodes") \
                or self.kind in ("redis-pause", "redis-restart"):
            return list(range(1, node_count + 1))
        return [int(self.target[1:])]

    def describe(self):
        where = self.target
        if self.member and self.member != self.target:
            where = f"{self.target} ({self.member})"
        return f"{self.kind} {where} for {self.duration:.1f} s"


class Schedule:
    """Every kind once per round, in a seeded random order, so short runs see all of them;
    with Sentinel, each round opens with a failover, so even a short run has one."""

    def __init__(self, rng, node_count, kinds=None, sentinel=False, slow_links="any", primary_pause_min=3.0):
        self.rng, self.node_count, self.sentinel = rng, node_count, sentinel
        # "nodes": slow links only on the nodes' side, never Redis's (see docs/chaos.md, a slow primary).
        self.slow_links = slow_links
        # A paused primary that comes back while Sentinel promotes is a slow primary too.
        self.primary_pause_min = primary_pause_min
        self.kinds = kinds or (SENTINEL_TYPES if sentinel else FAULT_TYPES)
        self.round = []

    def next(self):
        if not self.round:
            self.round = list(self.kinds)
            self.rng.shuffle(self.round)
            opening = [kind for kind in self.round if kind in FAILOVER_TYPES]
            if opening:
                self.round.remove(opening[0])
                self.round.append(opening[0])   # popped first
        kind = self.round.pop()
        node = f"n{self.rng.randint(1, self.node_count)}"
        redis = "primary" if self.sentinel else "redis"
        if kind == "slow-link":
            target = self.rng.choice([node, redis])
            if self.slow_links == "nodes":
                target = node
        elif kind in ("redis-pause", "redis-restart") or kind in FAILOVER_TYPES:
            target = redis
        elif kind == "replica-kill":
            target = "replica"
        elif kind == "sentinel-kill":
            target = "sentinel"
        elif kind in ROLLING_TYPES:
            target = "nodes"
        else:
            target = node
        duration = self.rng.uniform(3.0, 6.0)
        if kind == "redis-pause" and self.sentinel:
            duration = self.rng.uniform(max(3.0, self.primary_pause_min), max(6.0, self.primary_pause_min + 3.0))
        fault = Fault(kind, target, duration)
        fault.pick = self.rng.random()   # which replica or sentinel, among those there are then
        return fault


def redis_member(fault, topology):
    """The Redis-side member a fault acts on (resolved when it starts)."""
    if fault.target == "redis":
        return "redis"
    if fault.target == "primary":
        return fault.primary
    if fault.target == "replica":
        replicas = [m for m in topology.redis_members if m != fault.primary]
        return replicas[int(fault.pick * len(replicas))]
    if fault.target == "sentinel":
        return topology.sentinel_members[int(fault.pick * len(topology.sentinel_members))]
    return None


def inject(fault, topology, cluster):
    if cluster.sentinel:
        fault.primary = cluster.named_primary()
        if fault.primary is None:
            raise RuntimeError("no primary named by a majority of the sentinels before a fault (see s*.log)")
    member = redis_member(fault, topology)
    fault.member = member
    if fault.kind == "redis-partition":
        topology.drop_between(fault.target, fault.primary or "redis")
    elif fault.kind == "clients-partition":
        topology.drop_between(fault.target, "cli")
    elif fault.kind == "slow-link":
        topology.slow_and_lossy(member or fault.target)
    elif fault.kind == "redis-pause":
        cluster.redis_side[member].pause()
    elif fault.kind == "node-pause":
        cluster.nodes[int(fault.target[1:])].pause()
    elif fault.kind == "node-kill":
        cluster.nodes[int(fault.target[1:])].kill()
    elif fault.kind in ("redis-restart", "primary-kill", "replica-kill", "sentinel-kill"):
        cluster.redis_side[member].kill()
    elif fault.kind == "primary-partition":
        topology.cut_off(member)
    elif fault.kind == "primary-split":
        topology.cut_off(member, [m for m in topology.redis_members + topology.sentinel_members if m != member])
    else:
        raise ValueError(fault.kind)
    # In place from now on (a cut takes several tc commands).
    fault.start = time.time()


def heal(fault, topology, cluster):
    member = fault.member
    if fault.kind == "redis-partition":
        topology.clear(fault.target)
        topology.clear(fault.primary or "redis")
    elif fault.kind == "clients-partition":
        topology.clear(fault.target)
        topology.clear("cli")
    elif fault.kind == "slow-link":
        topology.clear(member or fault.target)
    elif fault.kind == "redis-pause":
        cluster.redis_side[member].resume()
    elif fault.kind == "node-pause":
        cluster.nodes[int(fault.target[1:])].resume()
    elif fault.kind == "node-kill":
        cluster.nodes[int(fault.target[1:])].start()
    elif fault.kind in ("redis-restart", "primary-kill", "replica-kill", "sentinel-kill"):
        cluster.redis_side[member].start()
    elif fault.kind == "primary-partition":
        topology.clear(member)
    elif fault.kind == "primary-split":
        for other in [member] + topology.redis_members + topology.sentinel_members:
            topology.clear(other)
    fault.heal = time.time()


def heal_everything(topology, cluster):
    """After the schedule (or on an error): no rule left, nothing paused, everything running."""
    topology.clear_all()
    for process in cluster.redis_side.values():
        if process.paused:
            process.resume()
        if not process.running():
            process.start()
    for node in cluster.nodes.values():
        if node.paused:
            node.resume()
