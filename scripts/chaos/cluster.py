"""Redis and the happyserver nodes of a chaos run, each started in its own namespace, and
the HTTP and Redis probes the harness makes from the clients' namespace."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

from topology import NODE_PORT, REDIS_ADDRESS, REDIS_PORT, call_in_netns


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


class Cluster:
    def __init__(self, topology, run_dir, server, web_root, node_count=3):
        self.topology, self.run_dir = topology, run_dir
        redis_dir = os.path.join(run_dir, "redis")
        os.makedirs(redis_dir, exist_ok=True)
        self.redis = Process("redis", topology.exec_prefix("redis") + [
            "redis-server", "--bind", "0.0.0.0", "--port", str(REDIS_PORT), "--protected-mode", "no",
            "--appendonly", "yes", "--appendfsync", "always", "--save", "",
            "--dir", redis_dir, "--daemonize", "no"], os.path.join(run_dir, "redis.log"))
        self.nodes = {}
        for index in range(1, node_count + 1):
            member = f"n{index}"
            node_dir = os.path.join(run_dir, member)
            os.makedirs(os.path.join(node_dir, "data"), exist_ok=True)
            config_path = os.path.join(node_dir, "config.json")
            with open(config_path, "w") as config:
                json.dump(node_config(node_dir, web_root), config, indent=2)
            self.nodes[index] = Process(member, topology.exec_prefix(member) + [server, "--config", config_path],
                                        os.path.join(node_dir, "server.log"))

    def stop_all(self, grace=10):
        """Everyone resumed first (a paused Redis would hold the nodes' shutdown), the nodes
        stopped together within one grace period, then Redis."""
        for process in [self.redis] + list(self.nodes.values()):
            if process.running():
                process.resume()
        for node in self.nodes.values():
            node.signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for node in self.nodes.values():
            if node.popen is None:
                continue
            try:
                node.popen.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                node.kill()
        self.redis.stop(grace)

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
        return self.in_clients(redis_ping)

    def wait_until(self, condition, timeout, interval=0.2):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(interval)
        return condition()


def node_config(node_dir, web_root):
    return {
        "host": "0.0.0.0",
        "port": NODE_PORT,
        "webRoot": web_root,
        "dataDir": os.path.join(node_dir, "data"),
        # The checker reads the whole run's history back, and readers resume from anywhere in it.
        "persistence": {"historyLimit": 1000000},
        "limits": {"intentsPerSecond": 1000, "intentBurst": 1000, "floodLimit": 100000,
                   "historySize": 100000, "maxConnectionsPerAddress": 0},
        "cluster": {"redis": f"redis://{REDIS_ADDRESS}:{REDIS_PORT}/0"},
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
