"""The chaos run's network: one namespace each for Redis (one, or three with three
sentinels), three nodes and the clients, joined by veth pairs to a bridge that lives in a
namespace of its own, so the root namespace gains no links or routes. Faults are tc rules
on these links only."""

import ctypes
import os
import subprocess
import threading

SUBNET = "10.77.0"
REDIS_ADDRESS = f"{SUBNET}.2"
CLIENTS_ADDRESS = f"{SUBNET}.100"
NODE_PORT = 8080
REDIS_PORT = 6379
SENTINEL_PORT = 26379
# The slow link: 1 Mbit/s with a queue of 30 packets, up to ~0.35 s of queueing delay.
SLOW_RATE = "1mbit"
SLOW_QUEUE_PACKETS = 30


def node_address(index):
    """index 1..3"""
    return f"{SUBNET}.{10 + index}"


def run(command, check=True):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


class Topology:
    """Namespaces are named <prefix>-<member>; members: br, the Redis side (`redis`, or
    r1..r3 and s1..s3 with sentinels), n1..n3, cli."""

    def __init__(self, prefix, node_count=3, sentinel=False):
        self.prefix = prefix
        self.node_count = node_count
        self.redis_members = ["r1", "r2", "r3"] if sentinel else ["redis"]
        self.sentinel_members = ["s1", "s2", "s3"] if sentinel else []
        self.members = (self.redis_members + self.sentinel_members
                        + [f"n{i}" for i in range(1, node_count + 1)] + ["cli"])
        self.created = []
        self.has_netem = False

    def ns(self, member):
        return f"{self.prefix}-{member}"

    def address(self, member):
        """redis and r1 .2, r2 .3, r3 .4; s1..s3 .5-.7; nodes .11-.13; clients .100."""
        if member == "redis":
            return REDIS_ADDRESS
        if member == "cli":
            return CLIENTS_ADDRESS
        index = int(member[1:])
        if member[0] == "r":
            return f"{SUBNET}.{1 + index}"
        if member[0] == "s":
            return f"{SUBNET}.{4 + index}"
        return node_address(index)

    def member_at(self, address):
        return next((m for m in self.members if self.address(m) == address), None)

    def bridge_port(self, member):
        """The bridge-side end of a member's veth (the member's own end is eth0)."""
        return f"v{member}"

    def exec_prefix(self, member):
        return ["ip", "netns", "exec", self.ns(member)]

    def create(self):
        bridge = self.ns("br")
        for name in [bridge] + [self.ns(m) for m in self.members]:
            run(["ip", "netns", "add", name])
            self.created.append(name)
            run(["ip", "-n", name, "link", "set", "lo", "up"])
        run(["ip", "-n", bridge, "link", "add", "br0", "type", "bridge"])
        run(["ip", "-n", bridge, "link", "set", "br0", "up"])
        for member in self.members:
            port = self.bridge_port(member)
            # Created inside the bridge's namespace with the peer placed straight into the
            # member's: neither end ever exists in the root namespace.
            run(["ip", "-n", bridge, "link", "add", port, "type", "veth",
                 "peer", "name", "eth0", "netns", self.ns(member)])
            run(["ip", "-n", bridge, "link", "set", port, "master", "br0"])
            run(["ip", "-n", bridge, "link", "set", port, "up"])
            run(["ip", "-n", self.ns(member), "addr", "add", f"{self.address(member)}/24", "dev", "eth0"])
            run(["ip", "-n", self.ns(member), "link", "set", "eth0", "up"])
        probe = self.tc("cli", "qdisc", "add", "dev", "eth0", "root", "netem", "delay", "1ms", check=False)
        self.has_netem = probe.returncode == 0
        self.tc("cli", "qdisc", "del", "dev", "eth0", "root", check=False)

    def destroy(self):
        for name in reversed(self.created):
            run(["ip", "netns", "del", name], check=False)
        self.created = []

    # Faults -----------------------------------------------------------------------------

    def tc(self, member, *args, check=True):
        return run(["ip", "netns", "exec", self.ns(member), "tc", *args], check=check)

    def tc_bridge(self, *args, check=True):
        return run(["ip", "netns", "exec", self.ns("br"), "tc", *args], check=check)

    # This machine's kernel has neither netem nor the gact (drop) action, so faults use what
    # it has: an HTB root whose class 1:2 ends in a pfifo of length 0 (every packet sent
    # there is dropped), u32 filters to choose packets by address, a classic BPF filter that
    # picks packets at random for loss, and a slow HTB class whose queueing stands in for delay.

    def shape(self, tc, device):
        """Installs the classes on one end of a link: 1:1 passes, 1:2 drops, 1:3 is slow."""
        tc("qdisc", "add", "dev", device, "root", "handle", "1:", "htb", "default", "1")
        tc("class", "add", "dev", device, "parent", "1:", "classid", "1:1", "htb", "rate", "10gbit")
        tc("class", "add", "dev", device, "parent", "1:", "classid", "1:2", "htb", "rate", "10gbit")
        tc("qdisc", "add", "dev", device, "parent", "1:2", "handle", "2:", "pfifo", "limit", "0")
        tc("class", "add", "dev", device, "parent", "1:", "classid", "1:3", "htb",
           "rate", SLOW_RATE, "ceil", SLOW_RATE)
        tc("qdisc", "add", "dev", device, "parent", "1:3", "handle", "3:", "pfifo", "limit", str(SLOW_QUEUE_PACKETS))

    def drop_between(self, a, b):
        """Drops every IPv4 packet between members a and b, both ways (egress of each end)."""
        for here, there in ((a, b), (b, a)):
            tc = lambda *args: self.tc(here, *args)
            self.shape(tc, "eth0")
            tc("filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1",
               "u32", "match", "ip", "dst", f"{self.address(there)}/32", "flowid", "1:2")

    def cut_off(self, member, others=None):
        """Drops every IPv4 packet between member and each of others, both ways; others
        None: everyone (all of member's traffic, at both ends of its link)."""
        if others is None:
            for tc, device in ((lambda *args: self.tc(member, *args), "eth0"),
                               (lambda *args: self.tc_bridge(*args), self.bridge_port(member))):
                self.shape(tc, device)
                tc("filter", "add", "dev", device, "parent", "1:", "protocol", "ip", "prio", "1",
                   "u32", "match", "u32", "0", "0", "flowid", "1:2")
            return
        own = lambda *args: self.tc(member, *args)
        self.shape(own, "eth0")
        for other in others:
            own("filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1",
                "u32", "match", "ip", "dst", f"{self.address(other)}/32", "flowid", "1:2")
            theirs = lambda *args, other=other: self.tc(other, *args)
            self.shape(theirs, "eth0")
            theirs("filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1",
                   "u32", "match", "ip", "dst", f"{self.address(member)}/32", "flowid", "1:2")

    def slow_and_lossy(self, member, loss_percent=20):
        """Both directions of member's link (its eth0 and the bridge's port): 200 ms ± 100 ms
        delay and loss_percent loss with netem where the kernel has it; otherwise
        loss_percent of packets dropped at random and the rest through a slow class."""
        if self.has_netem:
            spec = ["netem", "delay", "200ms", "100ms", "loss", f"{loss_percent}%"]
            self.tc(member, "qdisc", "add", "dev", "eth0", "root", *spec)
            self.tc_bridge("qdisc", "add", "dev", self.bridge_port(member), "root", *spec)
            return
        threshold = int(loss_percent / 100 * 2 ** 32)
        # ld rand; if A >= threshold: return 0 (no match) else return -1 (the filter's class).
        random_pick = f"4,32 0 0 {2 ** 32 - 0x1000 + 56},53 0 1 {threshold},6 0 0 0,6 0 0 {2 ** 32 - 1}"
        ends = [(lambda *args: self.tc(member, *args), "eth0"),
                (lambda *args: self.tc_bridge(*args), self.bridge_port(member))]
        for tc, device in ends:
            self.shape(tc, device)
            tc("filter", "add", "dev", device, "parent", "1:", "protocol", "ip", "prio", "1",
               "bpf", "bytecode", random_pick, "classid", "1:2")
            tc("filter", "add", "dev", device, "parent", "1:", "protocol", "ip", "prio", "2",
               "u32", "match", "u32", "0", "0", "flowid", "1:3")

    def clear(self, member):
        """Removes every rule a fault put on member's link (both ends)."""
        self.tc(member, "qdisc", "del", "dev", "eth0", "root", check=False)
        self.tc_bridge("qdisc", "del", "dev", self.bridge_port(member), "root", check=False)

    def clear_all(self):
        for member in self.members:
            self.clear(member)


_libc = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWNET = 0x40000000


def call_in_netns(namespace, function, *args):
    """Runs function in a thread that has entered the named network namespace (a namespace
    is per thread in Linux, so the caller's own sockets stay where they were)."""
    outcome = {}

    def body():
        try:
            fd = os.open(f"/run/netns/{namespace}", os.O_RDONLY)
            try:
                if _libc.setns(fd, _CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns {namespace}")
            finally:
                os.close(fd)
            outcome["value"] = function(*args)
        except BaseException as error:  # handed back to the caller
            outcome["error"] = error

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
