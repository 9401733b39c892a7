#!/usr/bin/env python3
"""A WebSocket round trip against a Happy server, on the standard library alone: the upgrade
(with the happy.v1 subprotocol), the welcome, one intent and its ack and event.

Usage: scripts/ws-probe.py URL [ROOM]      e.g. ws://127.0.0.1:8080/ws lobby
Prints what it saw, one line each; exits 0 when the intent was applied, 1 otherwise.
"""
import base64
import json
import os
import socket
import struct
import sys
import urllib.parse


def read_exactly(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data += chunk
    return data


def read_message(sock):
    """One text message (fragments joined); control frames are skipped, a close raises."""
    payload = b""
    while True:
        first, second = read_exactly(sock, 2)
        opcode, length = first & 0x0F, second & 0x7F
        if length == 126:
            length = struct.unpack("!H", read_exactly(sock, 2))[0]
        elif length == 127:
            length = struct.unpack("!Q", read_exactly(sock, 8))[0]
        data = read_exactly(sock, length)
        if opcode == 0x8:
            code = struct.unpack("!H", data[:2])[0] if len(data) >= 2 else None
            raise ConnectionError(f"closed by the server: {code} {data[2:].decode(errors='replace')}")
        if opcode in (0x9, 0xA):
            continue
        payload += data
        if first & 0x80:
            return json.loads(payload)


def send_text(sock, text):
    data = text.encode()
    mask = os.urandom(4)
    header = bytes([0x81])
    if len(data) < 126:
        header += bytes([0x80 | len(data)])
    else:
        header += bytes([0x80 | 126]) + struct.pack("!H", len(data))
    sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    url = urllib.parse.urlsplit(sys.argv[1])
    room = sys.argv[2] if len(sys.argv) > 2 else "lobby"
    sock = socket.create_connection((url.hostname, url.port or 80), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    path = f"{url.path or '/ws'}?room={room}&name=probe"
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {url.hostname}:{url.port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                  "Sec-WebSocket-Protocol: happy.v1\r\n\r\n").encode())
    response = b""
    while b"\r\n\r\n" not in response:
        response += read_exactly(sock, 1)
    status = response.split(b"\r\n")[0].decode()
    print(f"upgrade: {status}")
    if " 101 " not in status + " ":
        return 1
    welcome = read_message(sock)
    print(f"welcome: room {welcome.get('room')}, epoch {welcome.get('epoch')}, seq {welcome.get('seq')}")
    send_text(sock, json.dumps({"type": "intent", "id": "probe-1", "action": "dragon.forward"}))
    applied = False
    for _ in range(20):
        message = read_message(sock)
        if message.get("type") == "event":
            print(f"event: {message.get('name')} seq {message.get('seq')}")
        elif message.get("type") == "ack" and message.get("id") == "probe-1":
            print(f"ack: {message.get('result')} seq {message.get('seq')}")
            applied = message.get("result") in ("applied", "clamped", "unchanged", "blocked")
            break
        elif message.get("type") == "error":
            print(f"error: {message.get('code')} {message.get('message')}")
            break
    sock.close()
    return 0 if applied else 1


if __name__ == "__main__":
    sys.exit(main())
