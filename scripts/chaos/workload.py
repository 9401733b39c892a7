"""The chaos run's clients, run inside the clients' namespace: writers that send dragon
button intents (each makes exactly one event) and readers that resume after every cut; a
close with 1012 sends a client to another node at once and it comes back later (`Nodes`).
Every operation is one JSON line in the history file (see docs/chaos.md for the records).

SIGUSR1: writers stop sending and wait for their last answers; SIGTERM: everyone stops."""

import argparse
import asyncio
import hashlib
import json
import random
import signal
import sys
import time

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

ANSWER_TIMEOUT = 5.0
LATE_ANSWER_WINDOW = 30.0
CONNECT_TIMEOUT = 5.0
RESTART_CODE = 1012       # the node restarts or is upgraded (PROTOCOL.md, section 2)
RESTART_JITTER = 0.25     # at most this long before coming back after a 1012
HOME_AFTER = 1.0          # seconds on another node before going back home
HEALTH_INTERVAL = 0.25    # how often the nodes' /healthz is asked


def state_digest(state):
    return hashlib.sha1(json.dumps(state, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


class History:
    def __init__(self, path):
        self.file = open(path, "a", buffering=1)

    def record(self, kind, **fields):
        fields["t"] = round(time.time(), 4)
        fields["kind"] = kind
        self.file.write(json.dumps(fields, separators=(",", ":")) + "\n")


class Stop:
    def __init__(self):
        self.writers = asyncio.Event()
        self.everyone = asyncio.Event()


async def open_connection(url):
    return await connect(url, open_timeout=CONNECT_TIMEOUT, ping_interval=2, ping_timeout=4,
                         close_timeout=1, max_size=2 ** 22, max_queue=4096,
                         subprotocols=["happy.v1"])


async def open_or_record(client, url):
    """A connection to `url`, or None once `client` has recorded why not and paused."""
    try:
        return await open_connection(url)
    except (OSError, asyncio.TimeoutError, InvalidHandshake, InvalidURI) as error:
        client.rec("connect_failed", None, error=type(error).__name__)
        await client.pause(0.5)
        return None


async def wait_either(future, event, timeout):
    """Waits for future, or event set, or timeout; returns True when future finished."""
    stopper = asyncio.ensure_future(event.wait())
    try:
        done, _ = await asyncio.wait({future, stopper}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        return future in done
    finally:
        stopper.cancel()


class Nodes:
    """Where the clients connect, as a load balancer in front of the nodes would send them:
    each client has a home node; a close with 1012 (the node restarts or is upgraded) sends it
    to the next node at once, and it goes back home once its home answers /healthz 200 again."""

    def __init__(self, addresses, room):
        self.addresses, self.room = addresses, room
        self.healthy = {index: True for index in range(1, len(addresses) + 1)}

    def url(self, node, name):
        return f"ws://{self.addresses[node - 1]}/ws?room={self.room}&name={name}"

    def next(self, node):
        return node % len(self.addresses) + 1

    async def watch(self, stop):
        while not stop.everyone.is_set():
            for index, address in enumerate(self.addresses, 1):
                self.healthy[index] = await healthz(address)
            try:
                await asyncio.wait_for(stop.everyone.wait(), HEALTH_INTERVAL)
            except asyncio.TimeoutError:
                pass


async def healthz(address):
    host, port = address.rsplit(":", 1)
    writer = None
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), 1.0)
        writer.write(f"GET /healthz HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n".encode())
        status = await asyncio.wait_for(reader.readline(), 1.0)
        return status.split()[1:2] == [b"200"]
    except (OSError, asyncio.TimeoutError):
        return False
    finally:
        if writer is not None:
            writer.close()


class Client:
    """What writers and readers share: where they are, and where they go next."""

    def __init__(self, name, home, nodes, history, stop, rng):
        self.name, self.home, self.node = name, home, home
        self.nodes, self.history, self.stop, self.rng = nodes, history, stop, rng
        self.moved_at = None
        self.cause = "first"    # why the next connection is made

    def should_go_home(self):
        return self.node != self.home and self.nodes.healthy[self.home] \
            and time.monotonic() - self.moved_at >= HOME_AFTER

    async def after(self, ws, outcome):
        """Where the next connection goes once `ws` ended, and when."""
        if outcome == "home":
            self.node, self.cause = self.home, "home"
            return
        if ws is not None and ws.close_code == RESTART_CODE:
            # The node restarts: another serves the room already. Go there at once, with jitter.
            self.node, self.cause, self.moved_at = self.nodes.next(self.node), "restart", time.monotonic()
            await self.pause(self.rng.uniform(0, RESTART_JITTER))
            return
        self.cause = "drop"
        if ws is None:
            # Refused (open_or_record paused already); where it moved to does not answer: try home.
            self.node = self.home
            return
        await self.pause(0.2)


class Writer(Client):
    def __init__(self, name, home, nodes, history, stop, rate, rng):
        super().__init__(name, home, nodes, history, stop, rng)
        self.rate = rate
        self.counter = 0
        self.lingering = set()

    def rec(self, kind, conn, **fields):
        self.history.record(kind, role="writer", client=self.name, node=self.node, conn=conn, **fields)

    async def run(self):
        while not self.stop.writers.is_set():
            ws = await open_or_record(self, self.nodes.url(self.node, self.name))
            if ws is None:
                await self.after(None, None)
                continue
            conn = None
            outcome = None
            try:
                welcome = json.loads(await asyncio.wait_for(ws.recv(), CONNECT_TIMEOUT))
                conn = welcome["you"]["id"]
                self.rec("connect", conn, seq=welcome["seq"], epoch=welcome["epoch"], cause=self.cause)
                outcome = await self.send_loop(ws, conn)
            except (ConnectionClosed, OSError, asyncio.TimeoutError, KeyError, ValueError) as error:
                self.rec("disconnect", conn, reason=type(error).__name__, code=ws.close_code)
            if outcome != "linger":
                await ws.close()
            await self.after(ws, outcome)
        if self.lingering:
            await asyncio.gather(*self.lingering, return_exceptions=True)

    async def pause(self, seconds):
        try:
            await asyncio.wait_for(self.stop.writers.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def send_loop(self, ws, conn):
        """One outstanding intent at a time. Returns "linger" when the connection was handed to
        a lingering reader (an intent timed out there), "home" when it leaves to go home."""
        while not self.stop.writers.is_set():
            if self.should_go_home():
                self.rec("disconnect", conn, reason="home")
                return "home"
            self.counter += 1
            intent_id = f"{self.name}-{self.counter}"
            action = self.rng.choice(["dragon.forward", "dragon.back"])
            self.rec("send", conn, id=intent_id, action=action)
            try:
                await ws.send(json.dumps({"type": "intent", "id": intent_id, "action": action}))
            except ConnectionClosed as error:
                self.rec("cut", conn, id=intent_id, reason=type(error).__name__, code=ws.close_code)
                return None
            answer = asyncio.ensure_future(self.answer(ws, intent_id))
            try:
                finished = await asyncio.wait_for(asyncio.shield(answer), ANSWER_TIMEOUT)
            except asyncio.TimeoutError:
                self.rec("timeout", conn, id=intent_id)
                # The old connection stays open a while for a late answer; no other intent
                # is ever sent on it, so whatever comes back belongs to this intent.
                task = asyncio.ensure_future(self.linger(ws, conn, intent_id, answer))
                self.lingering.add(task)
                task.add_done_callback(self.lingering.discard)
                return "linger"
            except ConnectionClosed as error:
                self.rec("cut", conn, id=intent_id, reason=type(error).__name__, code=ws.close_code)
                return None
            self.record_answer("", conn, intent_id, finished)
            try:
                # Between intents, a close (a restart) is noticed at once.
                await asyncio.wait_for(ws.wait_closed(), self.rng.uniform(0.5, 1.5) / self.rate)
                self.rec("disconnect", conn, reason="closed", code=ws.close_code)
                return None
            except asyncio.TimeoutError:
                pass
        return None

    def record_answer(self, prefix, conn, intent_id, message):
        if message["type"] == "ack":
            self.rec(prefix + "ack", conn, id=intent_id, seq=message.get("seq"), result=message.get("result"))
        else:
            self.rec(prefix + "error", conn, id=intent_id, code=message.get("code"))

    async def answer(self, ws, intent_id):
        while True:
            message = json.loads(await ws.recv())
            if message.get("type") in ("ack", "error") and message.get("id") == intent_id:
                return message

    async def linger(self, ws, conn, intent_id, answer):
        try:
            if await wait_either(answer, self.stop.everyone, LATE_ANSWER_WINDOW):
                self.record_answer("late_", conn, intent_id, answer.result())
            else:
                self.rec("no_answer", conn, id=intent_id)
        except (ConnectionClosed, OSError, ValueError) as error:
            self.rec("cut", conn, id=intent_id, reason="late:" + type(error).__name__)
        finally:
            answer.cancel()
            await ws.close()


class Reader(Client):
    def __init__(self, name, home, nodes, history, stop, rng):
        super().__init__(name, home, nodes, history, stop, rng)
        self.last_seq = None
        self.epoch = None

    def rec(self, kind, conn, **fields):
        self.history.record(kind, role="reader", client=self.name, node=self.node, conn=conn, **fields)

    async def run(self):
        while not self.stop.everyone.is_set():
            url = self.nodes.url(self.node, self.name)
            if self.last_seq is not None:
                url += f"&since={self.last_seq}&epoch={self.epoch}"
            ws = await open_or_record(self, url)
            if ws is None:
                await self.after(None, None)
                continue
            conn = None
            outcome = None
            try:
                welcome = json.loads(await asyncio.wait_for(ws.recv(), CONNECT_TIMEOUT))
                conn = welcome["you"]["id"]
                self.rec("connect", conn, since=self.last_seq, seq=welcome["seq"], epoch=welcome["epoch"],
                         recovered=welcome.get("recovered", False), digest=state_digest(welcome["state"]),
                         cause=self.cause)
                self.epoch = welcome["epoch"]
                if not welcome.get("recovered", False):
                    self.last_seq = welcome["seq"]
                outcome = await self.read_loop(ws, conn)
            except (ConnectionClosed, OSError, asyncio.TimeoutError, KeyError, ValueError) as error:
                self.rec("disconnect", conn, reason=type(error).__name__, code=ws.close_code)
            await ws.close()
            await self.after(ws, outcome)

    async def pause(self, seconds):
        try:
            await asyncio.wait_for(self.stop.everyone.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def read_loop(self, ws, conn):
        while True:
            receive = asyncio.ensure_future(ws.recv())
            while not await wait_either(receive, self.stop.everyone, HEALTH_INTERVAL):
                if self.stop.everyone.is_set() or self.should_go_home():
                    receive.cancel()
                    home = not self.stop.everyone.is_set()
                    self.rec("disconnect", conn, reason="home" if home else "stopped")
                    return "home" if home else None
            message = json.loads(receive.result())
            kind = message.get("type")
            if kind == "event":
                self.rec("event", conn, seq=message["seq"], sender=message["sender"]["id"],
                         name=message["name"], digest=state_digest(message["state"]))
                self.last_seq = message["seq"]
            elif kind == "resync":
                self.rec("resync", conn, seq=message["seq"], digest=state_digest(message["state"]))
                self.last_seq = message["seq"]


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", required=True, help="comma-separated host:port of every node")
    parser.add_argument("--room", default="chaos")
    parser.add_argument("--writers", type=int, default=6)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--rate", type=float, default=4.0, help="intents per second per writer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--history", required=True)
    args = parser.parse_args()

    nodes = args.nodes.split(",")
    history = History(args.history)
    stop = Stop()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, stop.writers.set)

    def stop_everyone():
        stop.writers.set()
        stop.everyone.set()

    loop.add_signal_handler(signal.SIGTERM, stop_everyone)
    loop.add_signal_handler(signal.SIGINT, stop_everyone)
    rng = random.Random(args.seed)

    where = Nodes(nodes, args.room)
    writers, readers = [], []
    for i in range(args.writers):
        writers.append(Writer(f"w{i + 1}", i % len(nodes) + 1, where, history, stop, args.rate,
                              random.Random(rng.random())).run())
    for i in range(args.readers):
        readers.append(Reader(f"r{i + 1}", i % len(nodes) + 1, where, history, stop,
                              random.Random(rng.random())).run())
    history.record("workload_start", writers=args.writers, readers=args.readers, nodes=nodes)

    async def writers_then_mark():
        await asyncio.gather(*writers)
        history.record("writers_done")

    watcher = asyncio.ensure_future(where.watch(stop))
    await asyncio.gather(writers_then_mark(), *readers)
    watcher.cancel()
    history.record("workload_end")


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
