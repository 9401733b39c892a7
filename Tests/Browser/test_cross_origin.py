"""A page on another origin (a second HTTP server on another port) that imports
/js/happy-client.js from the Happy server, reads its /api/state and joins over
the WebSocket, in headless Chromium: allowed for any origin while
auth.allowedOrigins is empty, and then only for the origins listed."""

import threading
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

import support
from support import wait_for

# The page elsewhere: imports the module from the Happy server named in its address, reads
# the room's state there, then joins the room; window.outcome holds what came of each step.
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>elsewhere</title></head><body>
<p id="happiness">?</p>
<script type="module">
const happy = {happy};
const room = {room};
const outcome = {{}};
try {{
  const {{ connect }} = await import(`${{happy}}/js/happy-client.js`);
  outcome.imported = true;
  try {{
    const response = await fetch(`${{happy}}/api/state?room=${{room}}`);
    outcome.state = await response.json();
  }} catch (error) {{
    outcome.stateError = String(error);
  }}
  const client = connect({{ url: happy, room, name: 'elsewhere' }});
  const welcome = await client.ready();
  outcome.welcomeSeq = welcome.seq;
  document.querySelector('#happiness').textContent = client.state.face.happiness;
  client.close();
}} catch (error) {{
  outcome.importError = String(error);
}}
window.outcome = outcome;
</script></body></html>
"""


class PageServer:
    """A plain HTTP server on 127.0.0.1 and a free port, answering /page?happy=URL&room=R with PAGE."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                address = urlparse(self.path)
                if address.path != "/page":
                    self.send_error(404)
                    return
                query = parse_qs(address.query)
                body = PAGE.format(happy=repr(query["happy"][0]), room=repr(query["room"][0])).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, host, happy, room):
        return f"http://{host}:{self.port}/page?" + urlencode({"happy": happy, "room": room})

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class PageOnAnotherOrigin(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pages = PageServer()
        cls.driver = support.browser()

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.pages.close()

    def outcome(self, server, host, room):
        self.driver.get(self.pages.url(host, server.base, room))
        return wait_for(self.driver, lambda d: d.execute_script("return window.outcome"), 20,
                        "the page elsewhere did not finish")

    def test_any_origin_may_import_the_module_and_read_the_state(self):
        server = support.Server().start()
        try:
            room = f"elsewhere-{uuid.uuid4().hex[:8]}"
            server.intent(room, {"action": "face.setHappiness", "value": 73})
            outcome = self.outcome(server, "127.0.0.1", room)
            self.assertNotIn("importError", outcome)
            self.assertNotIn("stateError", outcome)
            self.assertEqual(outcome["state"]["state"]["face"]["happiness"], 73)
            self.assertEqual(outcome["welcomeSeq"], 1)
            self.assertEqual(self.driver.find_element("id", "happiness").text, "73")
        finally:
            server.close()

    def test_only_listed_origins_may_when_the_server_lists_them(self):
        listed = f"http://127.0.0.1:{self.pages.port}"
        server = support.Server({"auth": {"allowedOrigins": [listed]}}).start()
        try:
            room = f"listed-{uuid.uuid4().hex[:8]}"
            server.intent(room, {"action": "dragon.forward"})
            outcome = self.outcome(server, "127.0.0.1", room)
            self.assertNotIn("importError", outcome)
            self.assertEqual(outcome["state"]["seq"], 1)
            self.assertEqual(outcome["welcomeSeq"], 1)

            # The same page from http://localhost:PORT is another origin, not listed.
            refused = self.outcome(server, "localhost", room)
            self.assertIn("importError", refused)
            self.assertNotIn("imported", refused)
        finally:
            server.close()


if __name__ == "__main__":
    unittest.main()
