"""One plain line per event, the same on the page and in the terminal: the
page's event log and `happyclient history` print the room's events in the
same order (oldest first) with the same text, the delegate name last; on a
phone the delegate name wraps as a whole, never cut inside."""

import subprocess
import unittest
import uuid

import support
from support import info, wait_for

# Every kind of event: each view's changes, a blocked dragon, hiding, and a reset.
EVENTS = [{"action": "face.setHappiness", "value": 85}, {"action": "face.setScale", "value": 1.2},
          {"action": "heart.setRate", "value": 0.35},
          {"action": "heart.setStyle", "fillColor": "#2266dd", "lineWidth": 4},
          {"action": "dragon.forward"}, {"action": "dragon.back"}, {"action": "dragon.back"},
          {"action": "dragon.toggleHidden"}, {"action": "room.reset"}]

# The page's event lines, oldest first as shown, by their text.
EVENT_LINES = """
return [...document.querySelectorAll('#log li.event, #log li.past')].map((item) => item.textContent);"""

# Event lines whose delegate name is split over two lines of text.
SPLIT_DELEGATES = """
return [...document.querySelectorAll('#log li.event, #log li.past')]
  .filter((item) => { const part = item.querySelector('.log-delegate');
                      return !part || part.getClientRects().length !== 1; })
  .map((item) => item.textContent);"""


def new_room(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def history_lines(server, room):
    """`happyclient history` for the room, as a person runs it."""
    run = subprocess.run([str(support.CLIENT_BINARY), "--url", f"ws://127.0.0.1:{server.port}", "--room", room, "history"],
                         capture_output=True, text=True, timeout=30)
    if run.returncode != 0:
        raise AssertionError(f"happyclient history exited {run.returncode}: {run.stderr}")
    return run.stdout.splitlines()


class EventLinesOnThePageAndInTheTerminal(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = support.Server().start()
        cls.room = new_room("lines")
        for body in EVENTS:
            cls.server.intent(cls.room, body, name="carol")

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def open_page(self, phone=False):
        driver = support.browser(phone=phone)
        self.addCleanup(driver.quit)
        driver.get(self.server.base + "/healthz")
        driver.execute_script("localStorage.setItem('happy.name', 'painter')")
        driver.get(f"{self.server.base}/?room={self.room}")
        wait_for(driver, lambda d: (info(d) or {}).get("connection") == "connected", 15, "the page did not connect")
        wait_for(driver, lambda d: len(d.execute_script(EVENT_LINES)) == len(EVENTS),
                 message=str(driver.execute_script(EVENT_LINES)))
        return driver

    def test_the_page_and_happyclient_history_print_the_same_lines(self):
        driver = self.open_page()
        page = driver.execute_script(EVENT_LINES)
        terminal = history_lines(self.server, self.room)
        print("\n  " + "\n  ".join(terminal), end="")
        self.assertEqual(page, terminal)
        # Plain words first, the sender's name before them, the delegate name last.
        self.assertTrue(terminal[0].endswith(" #1 carol  happiness 50 → 85  faceView:didChangeHappiness:"), terminal[0])
        self.assertTrue(terminal[3].endswith(" #4 carol  heart fill #ff0000 → #2266dd, width 1 → 4  heartView:didChangeStyle:"),
                        terminal[3])
        self.assertTrue(terminal[4].endswith(" #5 carol  dragon (10, 10) → (20, 10)  forwardButtonClicked:"), terminal[4])
        self.assertTrue(terminal[6].endswith(" #7 carol  dragon (10, 10), blocked at the edge  backButtonClicked:"), terminal[6])
        self.assertTrue(terminal[8].endswith(" #9 carol  room reset: happiness 50, scale 0.9, heart rate 0.5, "
                                             "dragon (10, 10) shown  room:didReset:"), terminal[8])

        # A new event goes to the end, as it does in the terminal.
        self.server.intent(self.room, {"action": "face.setHappiness", "value": 20}, name="carol")
        wait_for(driver, lambda d: len(d.execute_script(EVENT_LINES)) == len(EVENTS) + 1)
        self.assertEqual(driver.execute_script(EVENT_LINES), history_lines(self.server, self.room))

    def test_on_a_phone_the_delegate_name_wraps_whole(self):
        driver = self.open_page(phone=True)
        self.assertEqual(driver.execute_script(SPLIT_DELEGATES), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
