"""Redis (one, or three with three sentinels) and the happyserver nodes of a chaos run, each
started in its own namespace, and the HTTP and Redis probes the harness makes from the
clients' namespace."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import resp
from topology import NODE_PORT, REDIS_ADDRESS, REDIS_PORT, SENTINEL_PORT, call_in_netns

MASTER_NAME = "mymaster"
# Sentinel: a primary silent for a second is down; a failover may start again 2 x 3 s after
# the last one began, so back-to-back faults each get theirs.
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 3000
# An old primary cut from its replicas refuses writes after this many seconds without them.
MIN_REPLICAS_MAX_LAG = 3


class Process:
    """One program run inside a namespace with `ip netns exec`, which execs it in place, so
    signals sent to this pid reach the program itself."""

    def __init__(self, name, command, log_path):
        self.name, self.command, self.log_path = name, command, log_path
        self.popen = None
        self.paused = False

    def start(self):
        log = open(self.log_path, "ab")
        self.popen = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self.paused = False

    def running(self):
        return self.popen is not None and self.popen.poll() is None

    def signal(self, number):
        if self.running():
            os.kill(self.popen.pid, number)

    def pause(self):
        self.signal(signal.SIGSTOP)
        self.paused = True

    def resume(self):
        self.signal(signal.SIGCONT)
        self.paused = False

    def kill(self):
        self.resume()
        self.signal(signal.SIGKILL)
        if self.popen is not None:
            self.popen.wait()

    def stop(self, grace=10):
        if not self.running():
            return
        self.resume()
        self.signal(signal.SIGTERM)
        try:
            self.popen.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill()


class NodeProcess(Process):
    """A happyserver node. An upgrade (SIGUSR2) replaces its process with one the harness
    did not start (the old process starts it, with the same arguments), so the node is
    whichever live process runs its config file."""

    def __init__(self, name, command, log_path, config_path):
        super().__init__(name, command, log_path)
        self.config_path = config_path.encode()

    def pids(self):
        """The live processes running this node's config, oldest first (two during a handover)."""
        if self.popen is not None:
            self.popen.poll()   # reaps the process the harness started, once it has gone
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    arguments = cmdline.read().split(b"\0")
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if self.config_path in arguments and fields[0] != "Z":
                found.append((int(fields[19]), int(entry)))   # by start time
        return [pid for _, pid in sorted(found)]

    def running(self):
        return bool(self.pids())

    def signal(self, number):
        for pid in self.pids():
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                pass

    def wait_gone(self, timeout):
        deadline = time.monotonic() + timeout
        while self.pids():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def kill(self):
        self.resume()
        self.signal(signal.SIGKILL)
        self.wait_gone(10)

    def stop(self, grace=10):
        if not self.running():
            return
        self.resume()
        self.signal(signal.SIGTERM)
        if not self.wait_gone(grace):
            self.kill()

    def upgrade(self, timeout=30):
        """SIGUSR2: the node starts its binary again and hands over to it. The new pid once it
        alone runs the node, or None when that did not happen within `timeout`."""
        before = self.pids()
        if len(before) != 1:
            return None
        os.kill(before[0], signal.SIGUSR2)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = self.pids()
            if len(now) == 1 and now[0] != before[0]:
                return now[0]
            time.sleep(0.02)
        return None


class Cluster:
    def __init__(self, topology, run_dir, server, web_root, node_count=3):
        self.topology, self.run_dir = topology, run_dir
        self.sentinel = bool(topology.sentinel_members)
        # Every Redis-side process by member name: redis, or r1..r3 and s1..s3.
        self.redis_side = {}
        if self.sentinel:
            first = topology.address(topology.redis_members[0])
            for member in topology.redis_members:
                config = redis_config(os.path.join(run_dir, member), None if member == "r1" else first)
                self.redis_side[member] = Process(member, topology.exec_prefix(member) + ["redis-server", config],
                                                  os.path.join(run_dir, f"{member}.log"))
            for member in topology.sentinel_members:
                config = sentinel_config(os.path.join(run_dir, member), first)
                self.redis_side[member] = Process(member, topology.exec_prefix(member) + ["redis-sentinel", config],
                                                  os.path.join(run_dir, f"{member}.log"))
            cluster_redis = "redis+sentinel://" + ",".join(
                f"{topology.address(m)}:{SENTINEL_PORT}" for m in topology.sentinel_members) + f"/{MASTER_NAME}"
        else:
            redis_dir = os.path.join(run_dir, "redis")
            os.makedirs(redis_dir, exist_ok=True)
            self.redis_side["redis"] = Process("redis", topology.exec_prefix("redis") + [
                "redis-server", "--bind", "0.0.0.0", "--port", str(REDIS_PORT), "--protected-mode", "no",
                "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                "--dir", redis_dir, "--daemonize", "no"], os.path.join(run_dir, "redis.log"))
            cluster_redis = f"redis://{REDIS_ADDRESS}:{REDIS_PORT}/0"
        self.redis = self.redis_side.get("redis")
        self.nodes = {}
        for index in range(1, node_count + 1):
            member = f"n{index}"
            node_dir = os.path.join(run_dir, member)
            os.makedirs(os.path.join(node_dir, "data"), exist_ok=True)
            config_path = os.path.join(node_dir, "config.json")
            with open(config_path, "w") as config:
                json.dump(node_config(node_dir, web_root, cluster_redis), config, indent=2)
            self.nodes[index] = NodeProcess(member, topology.exec_prefix(member) + [server, "--config", config_path],
                                            os.path.join(node_dir, "server.log"), config_path)

    def stop_all(self, grace=10):
        """Everyone resumed first (a paused Redis would hold the nodes' shutdown), the nodes
        stopped together within one grace period, then Redis."""
        for process in list(self.redis_side.values()) + list(self.nodes.values()):
            if process.running():
                process.resume()
        for node in self.nodes.values():
            node.signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for node in self.nodes.values():
            if not node.wait_gone(max(0.1, deadline - time.monotonic())):
                node.kill()
        for process in self.redis_side.values():
            process.stop(grace)

    # Probes from the clients' namespace -------------------------------------------------

    def in_clients(self, function, *args):
        return call_in_netns(self.topology.ns("cli"), function, *args)

    def node_url(self, index, path):
        return f"http://{self.topology.address(f'n{index}')}:{NODE_PORT}{path}"

    def healthz(self, index, timeout=2.0):
        """(status, body), status None when the node did not answer."""
        return self.in_clients(http_get, self.node_url(index, "/healthz"), timeout)

    def get_json(self, index, path, timeout=10.0):
        status, body = self.in_clients(http_get, self.node_url(index, path), timeout)
        if status != 200:
            raise RuntimeError(f"node {index} {path}: {status} {body[:200]!r}")
        return json.loads(body)

    def redis_ready(self):
        if not self.sentinel:
            return self.in_clients(redis_ping)
        first = self.topology.redis_members[0]
        return self.named_primary() == first and all(
            self.replica_synced(m, first) for m in self.topology.redis_members[1:]) and self.sentinels_in_touch()

    def sentinels_in_touch(self):
        """Every sentinel knows both replicas and the two other sentinels (a failover needs that)."""
        for member in self.topology.sentinel_members:
            reply = self.ask(member, "SENTINEL", "MASTER", MASTER_NAME)
            fields = dict(zip(reply[::2], reply[1::2])) if isinstance(reply, list) else {}
            if int(fields.get("num-slaves", 0)) < len(self.topology.redis_members) - 1 \
                    or int(fields.get("num-other-sentinels", 0)) < len(self.topology.sentinel_members) - 1:
                return False
        return True

    # Sentinel ---------------------------------------------------------------------------

    def ask(self, member, *args, timeout=1.0, port=None):
        """One command to a Redis-side member from the clients' namespace; None when it
        does not answer (or answers with an error)."""
        port = port or (SENTINEL_PORT if member.startswith("s") else REDIS_PORT)
        try:
            reply = self.in_clients(lambda: resp.command(self.topology.address(member), port, *args, timeout=timeout))
        except OSError:
            return None
        return None if isinstance(reply, resp.RedisError) else reply

    def sentinel_answers(self):
        """{sentinel: the Redis member it names as primary, or None}."""
        answers = {}
        for member in self.topology.sentinel_members:
            reply = self.ask(member, "SENTINEL", "get-master-addr-by-name", MASTER_NAME, timeout=0.5)
            answers[member] = self.topology.member_at(reply[0]) if isinstance(reply, list) and len(reply) == 2 else None
        return answers

    def named_primary(self):
        """The member most sentinels name, when that is a majority of all sentinels."""
        votes = {}
        for named in self.sentinel_answers().values():
            if named:
                votes[named] = votes.get(named, 0) + 1
        best = max(votes.items(), key=lambda item: item[1], default=(None, 0))
        return best[0] if best[1] * 2 > len(self.topology.sentinel_members) else None

    def role(self, member):
        reply = self.ask(member, "ROLE", timeout=0.5)
        return reply if isinstance(reply, list) and reply else None

    def replica_synced(self, member, primary):
        """member replicates primary and its link is up."""
        role = self.role(member)
        return bool(role) and role[0] == "slave" and role[1] == self.topology.address(primary) \
            and role[3] == "connected"

    def failed_over_from(self, old):
        """The new primary once every sentinel that answers names one other than old and
        it answers as a primary; else None."""
        answers = [named for named in self.sentinel_answers().values() if named]
        if len(answers) * 2 <= len(self.topology.sentinel_members) or len(set(answers)) != 1 or answers[0] == old:
            return None
        role = self.role(answers[0])
        return answers[0] if role and role[0] == "master" else None

    def wait_until(self, condition, timeout, interval=0.2):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(interval)
        return condition()


def redis_config(directory, primary_address):
    """A Redis instance's config file (Sentinel rewrites it when it reconfigures the
    instance, so a restart keeps its role): append-only synced on every write, writes
    refused without a replica in sync, and full syncs without the default 5 s delay."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "redis.conf")
    lines = [f"bind 0.0.0.0", f"port {REDIS_PORT}", "protected-mode no", "daemonize no", f'dir "{directory}"',
             "appendonly yes", "appendfsync always", 'save ""',
             "min-replicas-to-write 1", f"min-replicas-max-lag {MIN_REPLICAS_MAX_LAG}",
             "repl-diskless-sync-delay 0"]
    if primary_address:
        lines.append(f"replicaof {primary_address} {REDIS_PORT}")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")
    return path


def sentinel_config(directory, primary_address):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "sentinel.conf")
    lines = [f"port {SENTINEL_PORT}", "bind 0.0.0.0", "protected-mode no", "daemonize no", f'dir "{directory}"',
             f"sentinel monitor {MASTER_NAME} {primary_address} {REDIS_PORT} 2",
             f"sentinel down-after-milliseconds {MASTER_NAME} {DOWN_AFTER_MS}",
             f"sentinel failover-timeout {MASTER_NAME} {FAILOVER_TIMEOUT_MS}",
             f"sentinel parallel-syncs {MASTER_NAME} 1"]
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")
    return path


def node_config(node_dir, web_root, cluster_redis):
    return {
        "host": "0.0.0.0",
        "port": NODE_PORT,
        "webRoot": web_root,
        "dataDir": os.path.join(node_dir, "data"),
        # The checker reads the whole run's history back, and readers resume from anywhere in it.
        "persistence": {"historyLimit": 1000000},
        "limits": {"intentsPerSecond": 1000, "intentBurst": 1000, "floodLimit": 100000,
                   "historySize": 100000, "maxConnectionsPerAddress": 0},
        "cluster": {"redis": cluster_redis},
        # The readers follow the room event by event (a crowd room's ticks are not what they check).
        "crowd": {"mode": "each"},
        "log": {"level": "info"},
    }


def http_get(url, timeout):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return None, ""


def redis_ping():
    try:
        with socket.create_connection((REDIS_ADDRESS, REDIS_PORT), timeout=1) as connection:
            connection.settimeout(1)
            connection.sendall(b"PING\r\n")
            return connection.recv(64).startswith(b"+PONG")
    except OSError:
        return False
