#!/usr/bin/env python3
"""A Happy webhook receiver: checks each batch's signature, skips deliveries
it has already seen (delivery is at least once) and prints one JSON line
per new delivery.

    python3 webhook_receiver.py --port 9000 --secret "$HAPPY_WEBHOOK_SECRET"

with, in the server's config.json:

    "webhooks": [{ "url": "http://127.0.0.1:9000/hooks/happy",
                   "events": ["event", "presence.joined"], "secret": "..." }]
"""
import argparse
import hashlib
import hmac
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def make_handler(secret: bytes, seen: set):
    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(expected, self.headers.get("X-Happy-Signature", "")):
                self.send_response(401)  # not from our server: the batch is refused
                self.end_headers()
                return
            for delivery in json.loads(body)["deliveries"]:
                if delivery["id"] in seen:
                    continue  # a batch sent again after a restart or a lost answer
                seen.add(delivery["id"])
                print(json.dumps(delivery), flush=True)
            # Any 2xx: the server forgets the batch. Anything else: it is sent again.
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    return Receiver


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--secret", required=True)
    options = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", options.port), make_handler(options.secret.encode(), set()))
    print(f"listening on 127.0.0.1:{server.server_port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
