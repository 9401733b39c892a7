"""The chaos run's clients, run inside the clients' namespace: writers that send dragon
button intents (each makes exactly one event) and readers that resume after every cut.
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


class Writer:
    def __init__(self, name, node, url, history, stop, rate, rng):
        self.name, self.node, self.url = name, node, url
        self.history, self.stop, self.rate, self.rng = history, stop, rate, rng
        self.counter = 0
        self.lingering = set()

    def rec(self, kind, conn, **fields):
        self.history.record(kind, role="writer", client=self.name, node=self.node, conn=conn, **fields)

    async def run(self):
        while not self.stop.writers.is_set():
            ws = await open_or_record(self, self.url)
            if ws is None:
                continue
            conn = None
            try:
                welcome = json.loads(await asyncio.wait_for(ws.recv(), CONNECT_TIMEOUT))
                conn = welcome["you"]["id"]
                self.rec("connect", conn, seq=welcome["seq"], epoch=welcome["epoch"])
                keep_open = await self.send_loop(ws, conn)
            except (ConnectionClosed, OSError, asyncio.TimeoutError, KeyError, ValueError) as error:
                self.rec("disconnect", conn, reason=type(error).__name__)
                keep_open = False
            if not keep_open:
                await ws.close()
            await self.pause(0.2)
        if self.lingering:
            await asyncio.gather(*self.lingering, return_exceptions=True)

    async def pause(self, seconds):
        try:
            await asyncio.wait_for(self.stop.writers.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def send_loop(self, ws, conn):
        """One outstanding intent at a time; returns True when the connection was handed to
        a lingering reader (an intent timed out there)."""
        while not self.stop.writers.is_set():
            self.counter += 1
            intent_id = f"{self.name}-{self.counter}"
            action = self.rng.choice(["dragon.forward", "dragon.back"])
            self.rec("send", conn, id=intent_id, action=action)
            try:
                await ws.send(json.dumps({"type": "intent", "id": intent_id, "action": action}))
            except ConnectionClosed as error:
                self.rec("cut", conn, id=intent_id, reason=type(error).__name__)
                return False
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
                return True
            except ConnectionClosed as error:
                self.rec("cut", conn, id=intent_id, reason=type(error).__name__)
                return False
            self.record_answer("", conn, intent_id, finished)
            await self.pause(self.rng.uniform(0.5, 1.5) / self.rate)
        return False

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


class Reader:
    def __init__(self, name, node, url, history, stop):
        self.name, self.node, self.url, self.history, self.stop = name, node, url, history, stop
        self.last_seq = None
        self.epoch = None

    def rec(self, kind, conn, **fields):
        self.history.record(kind, role="reader", client=self.name, node=self.node, conn=conn, **fields)

    async def run(self):
        while not self.stop.everyone.is_set():
            url = self.url
            if self.last_seq is not None:
                url += f"&since={self.last_seq}&epoch={self.epoch}"
            ws = await open_or_record(self, url)
            if ws is None:
                continue
            conn = None
            try:
                welcome = json.loads(await asyncio.wait_for(ws.recv(), CONNECT_TIMEOUT))
                conn = welcome["you"]["id"]
                self.rec("connect", conn, since=self.last_seq, seq=welcome["seq"], epoch=welcome["epoch"],
                         recovered=welcome.get("recovered", False), digest=state_digest(welcome["state"]))
                self.epoch = welcome["epoch"]
                if not welcome.get("recovered", False):
                    self.last_seq = welcome["seq"]
                await self.read_loop(ws, conn)
            except (ConnectionClosed, OSError, asyncio.TimeoutError, KeyError, ValueError) as error:
                self.rec("disconnect", conn, reason=type(error).__name__)
            await ws.close()
            await self.pause(0.2)

    async def pause(self, seconds):
        try:
            await asyncio.wait_for(self.stop.everyone.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def read_loop(self, ws, conn):
        while True:
            receive = asyncio.ensure_future(ws.recv())
            if not await wait_either(receive, self.stop.everyone, None):
                receive.cancel()
                self.rec("disconnect", conn, reason="stopped")
                return
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

    def url(index, name):
        return f"ws://{nodes[index % len(nodes)]}/ws?room={args.room}&name={name}"

    writers, readers = [], []
    for i in range(args.writers):
        name = f"w{i + 1}"
        writers.append(Writer(name, i % len(nodes) + 1, url(i, name), history, stop, args.rate,
                            random.Random(rng.random())).run())
    for i in range(args.readers):
        name = f"r{i + 1}"
        readers.append(Reader(name, i % len(nodes) + 1, url(i, name), history, stop).run())
    history.record("workload_start", writers=args.writers, readers=args.readers, nodes=nodes)

    async def writers_then_mark():
        await asyncio.gather(*writers)
        history.record("writers_done")

    await asyncio.gather(writers_then_mark(), *readers)
    history.record("workload_end")


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
