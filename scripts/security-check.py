#!/usr/bin/env python3
"""The security review's ten reproductions, re-run against a release happyserver.

Each attack is tried as the review did; then a normal client's intent must be
acked within 50 ms and the server's resident memory must come back within
20 % of where it started. Prints one line per attack and a table; exits 1
when an attack is not refused or bounded, or a check after it fails.

Usage: scripts/security-check.py [--server .build/release/happyserver] [--quick]
Only loopback is ever a target; every server runs in a temporary folder.
"""
import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Server:
    """A happyserver on a free loopback port with its own config and data folder."""

    def __init__(self, binary, settings):
        self.folder = tempfile.mkdtemp(prefix="happy-security-")
        config = {"port": 0, "webRoot": os.path.join(ROOT, "web"), "dataDir": os.path.join(self.folder, "data"),
                  "log": {"level": "info"}}
        config.update(settings)
        auth = settings.get("auth", {})
        self.secret, self.audience = auth.get("secret", ""), auth.get("audience", "")
        self.config_path = os.path.join(self.folder, "config.json")
        with open(self.config_path, "w") as file:
            json.dump(config, file)
        self.log_path = os.path.join(self.folder, "server.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([binary, "--config", self.config_path], stdout=self.log, stderr=self.log)
        self.port = None
        deadline = time.time() + 20
        while time.time() < deadline and self.port is None:
            for line in open(self.log_path):
                if " listening " in line and "port=" in line:
                    self.port = int(line.split("port=")[1].split()[0])
            time.sleep(0.05)
        if self.port is None:
            raise SystemExit("security-check: the server did not start:\n" + open(self.log_path).read())

    @property
    def key(self):
        path = os.path.join(self.folder, "data", "operator.key")
        return open(path).read().strip() if os.path.exists(path) else ""

    def rss(self):
        for line in open(f"/proc/{self.process.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def cpu_seconds(self):
        fields = open(f"/proc/{self.process.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def text_log(self):
        return open(self.log_path).read()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def request(server, method, path, body=None, headers=None, timeout=10):
    """(status, headers, body) of one request on a connection of its own."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict((k.lower(), v) for k, v in response.getheaders()), response.read()
    finally:
        connection.close()


def raw(server, data, timeout=5):
    """Sends bytes as they are; what came back before the server closed (or the timeout)."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=timeout)
    sock.sendall(data)
    chunks = []
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    except socket.timeout:
        pass
    sock.close()
    return b"".join(chunks)


class WebSocket:
    """A minimal client: masked frames (or not), enough for these attacks."""

    def __init__(self, server, target="/ws", headers=(), timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", server.port), timeout=timeout)
        lines = [f"GET {target} HTTP/1.1", f"Host: 127.0.0.1:{server.port}", "Upgrade: websocket",
                 "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
        self.sock.sendall(("\r\n".join(lines + list(headers)) + "\r\n\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("no handshake answer")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        self.upgraded = head.startswith(b"HTTP/1.1 101")

    @staticmethod
    def frame(opcode, payload, masked=True, fin=True):
        header = bytes([(0x80 if fin else 0) | opcode])
        bit = 0x80 if masked else 0
        if len(payload) < 126:
            header += bytes([bit | len(payload)])
        else:
            header += bytes([bit | 126]) + struct.pack(">H", len(payload))
        if not masked:
            return header + payload
        key = os.urandom(4)
        return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))

    def send_text(self, text, masked=True):
        self.sock.sendall(self.frame(1, text.encode(), masked))

    def next(self):
        """(opcode, payload) of the next frame, or None once the connection ended."""
        def need(count):
            while len(self.buffer) < count:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return False
                self.buffer += chunk
            return True
        try:
            if not need(2):
                return None
            length = self.buffer[1] & 0x7F
            start = 2
            if length == 126:
                if not need(4):
                    return None
                length, start = struct.unpack(">H", self.buffer[2:4])[0], 4
            elif length == 127:
                if not need(10):
                    return None
                length, start = struct.unpack(">Q", self.buffer[2:10])[0], 10
            if not need(start + length):
                return None
            opcode, payload = self.buffer[0] & 0x0F, self.buffer[start:start + length]
            self.buffer = self.buffer[start + length:]
            return opcode, payload
        except (socket.timeout, ConnectionError):
            return None

    def message(self, kind):
        while True:
            got = self.next()
            if got is None:
                return None
            if got[0] == 1:
                body = json.loads(got[1])
                if body.get("type") == kind:
                    return body

    def close_code(self):
        while True:
            got = self.next()
            if got is None:
                return None
            if got[0] == 8:
                return struct.unpack(">H", got[1][:2])[0] if len(got[1]) >= 2 else 1005

    def close(self):
        self.sock.close()


def ack_milliseconds(server):
    """A normal client joins, sends an intent: milliseconds to its ack (median of three)."""
    target = "/ws?room=normal&name=normal"
    if server.secret:
        claims = {"sub": "normal", "role": "player", "exp": int(time.time()) + 600}
        if server.audience:
            claims["aud"] = server.audience
        target += "&token=" + token(server.secret, claims)
    client = WebSocket(server, target)
    client.message("welcome")
    times = []
    for attempt in range(3):
        started = time.perf_counter()
        client.send_text(json.dumps({"type": "intent", "id": f"n{attempt}", "action": "dragon.forward"}))
        client.message("ack")
        times.append((time.perf_counter() - started) * 1000)
    client.close()
    return sorted(times)[1]


def settle(server, start, seconds=10):
    """The resident memory once it is within 20 % of `start` (or after `seconds`)."""
    deadline = time.time() + seconds
    rss = server.rss()
    while rss > start * 1.2 and time.time() < deadline:
        time.sleep(0.25)
        rss = server.rss()
    return rss


def token(secret, payload):
    def encode(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    head = encode(b'{"alg":"HS256","typ":"JWT"}')
    body = encode(json.dumps(payload, separators=(",", ":")).encode() if isinstance(payload, dict) else payload)
    signature = encode(hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{signature}"


# MARK: the ten attacks; each returns (held, what happened)

def operator_from_a_page(server):
    form = request(server, "POST", "/api/rooms/normal/kick", b'{"name":"normal"}',
                   {"Content-Type": "text/plain", "Origin": "null"})
    keyed = {"Authorization": f"Bearer {server.key}"}
    rebound = request(server, "DELETE", "/api/rooms/normal", None, {**keyed, "Host": f"rebind.attacker.example:{server.port}"})
    reads = request(server, "GET", "/api/rooms/normal", None, {**keyed, "Host": "rebind.attacker.example"})
    held = form[0] in (401, 403) and rebound[0] == 403 and reads[0] == 403
    return held, f"form {form[0]}, rebinding DELETE {rebound[0]}, rebinding GET {reads[0]}"


def proxy_without_header(server):
    answers = []
    for header in ({"X-Forwarded-For": "203.0.113.9, garbage"}, {"X-Forwarded-For": "unknown"}, {"X-Forwarded-For": ","}, {}):
        answers.append(request(server, "GET", "/api/rooms", None, header)[0])
    held = all(status == 401 for status in answers)
    return held, f"operator API from the same-host proxy: {answers}"


def reads_store_rooms(server, count):
    database = os.path.join(server.folder, "data", "happy.sqlite3")
    before = os.path.getsize(database)
    statuses = {}
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    started = time.time()
    for index in range(count):
        try:
            connection.request("GET", f"/api/state?room=made-up-{index}")
            response = connection.getresponse()
            response.read()
            statuses[response.status] = statuses.get(response.status, 0) + 1
            if response.getheader("Connection", "").lower() == "close":
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        except (ConnectionError, http.client.HTTPException):
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.close()
    grown = os.path.getsize(database) - before
    held = grown < 64 * 1024
    return held, f"{count} reads in {time.time() - started:.1f} s: {statuses}; database grew {grown} bytes"


def borrowed_name(server):
    secret = "security-check-secret"
    player = token(secret, {"sub": "alice", "role": "player", "exp": int(time.time()) + 600})
    watcher = WebSocket(server, f"/ws?room=names&token={token(secret, {'sub': 'ops', 'role': 'admin', 'exp': int(time.time()) + 600})}")
    watcher.message("welcome")
    status = request(server, "POST", "/api/intent?room=names", b'{"action":"dragon.forward"}',
                     {"Authorization": f"Bearer {player}", "X-Happy-Name": "root"})[0]
    event = watcher.message("event")
    watcher.close()
    sender = (event or {}).get("sender", {}).get("name")
    return status == 200 and sender == "alice", f"intent {status}, recorded sender {sender!r}"


def frames_flood(server, seconds):
    statuses = {}
    lock = threading.Lock()
    cpu_before = server.cpu_seconds()
    stop = time.time() + seconds

    def client(index):
        n = 0
        while time.time() < stop:
            n += 1
            try:
                status = request(server, "GET", f"/frame/scene.png?w=2048&h={2048 - (index * 997 + n) % 1000}&phase={n % 100}",
                                 timeout=30)[0]
            except (ConnectionError, OSError, http.client.HTTPException):
                status = "dropped"
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cpu = server.cpu_seconds() - cpu_before
    streams = []
    for _ in range(400):
        try:
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            sock.sendall(f"GET /stream/heart.png?w=64&h=64 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            streams.append(sock)
        except OSError:
            break
    time.sleep(1)
    frame_status = [request(server, "GET", "/frame/face.png?w=64&h=64")[0] for _ in range(5)]
    for sock in streams:
        sock.close()
    held = cpu < seconds * 1.2 and 503 not in frame_status
    return held, (f"8 clients, unique 2048² frames for {seconds} s: {statuses}, server CPU {cpu:.1f} s; "
                  f"400 unread streams, then /frame: {frame_status}")


def foreign_origin(server):
    intent = b'{"action":"dragon.forward"}'
    foreign = request(server, "POST", "/api/intent?room=origin", intent, {"Content-Type": "text/plain", "Origin": "https://evil.example"})[0]
    allowed = request(server, "POST", "/api/intent?room=origin", intent, {"Origin": "https://good.example"})[0]
    return foreign == 403 and allowed == 200, f"foreign origin {foreign}, allowed origin {allowed}"


def request_smuggling(server):
    inner = b"GET /api/state?room=inner HTTP/1.1\r\nHost: x\r\n\r\n"
    cases = {
        "two lengths": b"POST /api/intent HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: "
                       + str(5 + len(inner)).encode() + b"\r\n\r\n{...}" + inner,
        "length and chunked": b"POST /api/intent HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}",
    }
    outcomes = {}
    for name, data in cases.items():
        answer = raw(server, data)
        outcomes[name] = (answer.split(b"\r\n", 1)[0].decode(errors="replace"), answer.count(b"HTTP/1.1 "))
    held = all(line.startswith("HTTP/1.1 400") and count == 1 for line, count in outcomes.values())
    return held, "; ".join(f"{name}: {line}, {count} answer(s)" for name, (line, count) in outcomes.items())


def websocket_frames(server, seconds):
    bare = WebSocket(server, "/ws?room=frames&name=bare")
    bare.message("welcome")
    bare.send_text('{"type":"ping","id":"u"}', masked=False)
    unmasked = bare.close_code()
    bare.close()
    flooder = WebSocket(server, "/ws?room=frames&name=flooder")
    flooder.message("welcome")
    ping = WebSocket.frame(9, b"a" * 125)
    burst = ping * 512
    started = time.time()
    sent = 0
    cpu_before = server.cpu_seconds()
    try:
        while time.time() - started < seconds:
            flooder.sock.sendall(burst)
            sent += len(burst)
    except OSError:
        pass
    ended = time.time() - started
    cpu = server.cpu_seconds() - cpu_before
    flooder.close()
    held = unmasked == 1002 and ended < seconds
    return held, (f"unmasked frame: close {unmasked}; ping flood: {sent / 1e6:.0f} MB sent, connection dropped after "
                  f"{ended:.1f} s (server CPU {cpu:.1f} s)")


def tokens(server):
    secret = "security-check-secret"
    now = int(time.time())
    cases = {
        "nbf ahead": token(secret, {"sub": "a", "role": "player", "aud": "happy-check", "nbf": now + 3600}),
        "role twice": token(secret, b'{"sub":"a","role":"player","aud":"happy-check","role":"admin"}'),
        "no aud": token(secret, {"sub": "a", "role": "player"}),
    }
    statuses = {name: request(server, "GET", "/api/state", None, {"Authorization": f"Bearer {value}"})[0]
                for name, value in cases.items()}
    ttl = subprocess.run([args.server, "token", "--sub", "x", "--ttl", "0", "--secret", secret], capture_output=True, text=True)
    held = all(status == 401 for status in statuses.values()) and ttl.returncode == 2
    return held, f"{statuses}; token --ttl 0: exit {ttl.returncode}"


def headers_and_files(server):
    page = request(server, "GET", "/")[1]
    admin = request(server, "GET", "/admin")[1]
    data = os.path.join(server.folder, "data")
    modes = {name: oct(os.stat(os.path.join(data, name)).st_mode & 0o777) for name in sorted(os.listdir(data))}
    log = server.text_log()
    held = ("unsafe-inline" not in page.get("content-security-policy", "unsafe-inline")
            and "frame-ancestors 'none'" in admin.get("content-security-policy", "")
            and page.get("x-content-type-options") == "nosniff" and page.get("referrer-policy") == "no-referrer"
            and oct(os.stat(data).st_mode & 0o777) == "0o700" and all(mode == "0o600" for mode in modes.values())
            and "hook-pass" not in log)
    return held, f"CSP and nosniff on the page, frame-ancestors 'none' on /admin; dataDir {oct(os.stat(data).st_mode & 0o777)}, files {modes}"


def run(name, server, attack, *arguments):
    start = server.rss()
    held, what = attack(server, *arguments)
    ack = ack_milliseconds(server)
    rss = settle(server, start)
    ok = held and ack <= 50 and rss <= start * 1.2
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {what}; then ack {ack:.1f} ms, RSS {start / 1e6:.1f} -> {rss / 1e6:.1f} MB",
          flush=True)
    return (name, held, ack, start, rss, ok)


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=os.path.join(ROOT, ".build/release/happyserver"))
    parser.add_argument("--quick", action="store_true", help="shorter floods (a smoke run)")
    args = parser.parse_args()
    seconds = 5 if args.quick else 15
    rows = []
    plain = Server(args.server, {"webhooks": [{"url": "http://hook-user:hook-pass@127.0.0.1:9/hook?apikey=KEY",
                                               "events": ["room.created"], "secret": "s"}]})
    proxied = Server(args.server, {"trustedProxies": ["127.0.0.1"]})
    guarded = Server(args.server, {"auth": {"secret": "security-check-secret", "allowedOrigins": ["https://good.example"],
                                            "audience": "happy-check"}})
    guarded_open = Server(args.server, {"auth": {"allowedOrigins": ["https://good.example"]}})
    authed = Server(args.server, {"auth": {"secret": "security-check-secret"}})
    try:
        ack_milliseconds(plain)
        rows.append(run("1 operator API from a page", plain, operator_from_a_page))
        rows.append(run("2 a proxy's missing or malformed X-Forwarded-For", proxied, proxy_without_header))
        rows.append(run("3 reads creating rooms", plain, reads_store_rooms, 5000 if args.quick else 20000))
        rows.append(run("4 X-Happy-Name over a token", authed, borrowed_name))
        rows.append(run("5 frames and streams", plain, frames_flood, seconds))
        rows.append(run("6 a foreign Origin on HTTP", guarded_open, foreign_origin))
        rows.append(run("7 request framing", plain, request_smuggling))
        rows.append(run("8 unmasked frames and a ping flood", plain, websocket_frames, seconds))
        rows.append(run("9 tokens", guarded, tokens))
        rows.append(run("10 headers, files, logs", plain, headers_and_files))
    finally:
        for server in (plain, proxied, guarded, guarded_open, authed):
            server.stop()
    print("\n| attack | refused or bounded | ack after (ms) | RSS before → after (MB) |")
    print("|---|---|---|---|")
    for name, held, ack, start, rss, _ in rows:
        print(f"| {name} | {'yes' if held else 'NO'} | {ack:.1f} | {start / 1e6:.1f} → {rss / 1e6:.1f} |")
    failed = [row[0] for row in rows if not row[5]]
    if failed:
        print(f"security-check: {len(failed)} failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print("security-check: all ten refused or bounded; a normal intent acked within 50 ms after each; memory back within 20 %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
