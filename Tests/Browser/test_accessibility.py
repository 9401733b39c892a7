"""Every state of the page, checked as a person with Debian's stock fonts and
as axe-core sees it: live, history open, replaying, the name dialog, an
error, disconnected (the server stopped), a refused room name, a new room,
a crowd room in tick delivery, and removed by an operator, on a desktop and a
phone; and every state of the inspector (/admin). In each, every character
the page shows must have a glyph in the installed fonts (none drawn as the
missing-glyph box), and axe-core must find no serious or critical violation
(WCAG 2.x A and AA, colour contrast among them)."""

import time
import unittest
import uuid
from pathlib import Path

import selenium_axe_python
from selenium.webdriver.common.by import By

import support
from support import info, wait_for

AXE_SCRIPT = (Path(selenium_axe_python.__file__).parent / "axe-core" / "axe.min.js").read_text()

# axe-core over the whole document: the serious and critical violations, with the elements at fault.
RUN_AXE = """
const done = arguments[arguments.length - 1];
axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
                    resultTypes: ['violations'] })
  .then((results) => done(results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                   nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary.replace(/\\s+/g, ' ')}`) }))),
        (error) => done([{ id: 'axe-error', impact: 'critical', help: String(error), nodes: [] }]));"""

# Each character of the page's text (text nodes, ::before and ::after content, shown or not), in
# the font of its element, drawn on a canvas and compared with a code point no font has (U+0378):
# the same pixels mean the fonts have no glyph for it and the page shows the missing-glyph box.
MISSING_GLYPHS = """
const canvas = document.createElement('canvas');
canvas.width = 96;
canvas.height = 96;
const ctx = canvas.getContext('2d', { willReadFrequently: true });
const ink = (font, text) => {
  ctx.clearRect(0, 0, 96, 96);
  ctx.font = font;
  ctx.textBaseline = 'middle';
  ctx.fillText(text, 16, 48);
  return ctx.getImageData(0, 0, 96, 96).data.filter((_, i) => i % 4 === 3).join(',');
};
const fontOf = (element) => {
  const style = getComputedStyle(element);
  return `${style.fontStyle} ${style.fontWeight} 48px ${style.fontFamily}`;
};
const uses = new Map();
const note = (font, text, where) => {
  for (const char of text) {
    if (/\\s/.test(char)) continue;
    const key = `${font}|${char}`;
    if (!uses.has(key)) uses.set(key, { font, char, where });
  }
};
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const parent = node.parentElement;
  if (!parent || parent.closest('script, style')) continue;
  note(fontOf(parent), node.textContent, parent.id || parent.className || parent.tagName);
}
for (const element of document.querySelectorAll('*')) {
  for (const pseudo of ['::before', '::after']) {
    const content = getComputedStyle(element, pseudo).content;
    if (content && content.startsWith('"')) note(fontOf(element), JSON.parse(content), `${element.id || element.tagName}${pseudo}`);
  }
}
const missing = [];
const boxes = new Map();
for (const { font, char, where } of uses.values()) {
  if (!boxes.has(font)) boxes.set(font, ink(font, '\\u0378'));
  if (ink(font, char) === boxes.get(font)) {
    missing.push(`${char} (U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}) in ${where}`);
  }
}
return { missing, checked: uses.size };"""


def new_room(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def assert_state_is_sound(test, driver, state, holds=None):
    """No missing glyph and no serious axe-core violation in the page as it is now; `holds(driver)`,
    when given, must still be true once the characters were checked (a state that passes by itself)."""
    glyphs = driver.execute_script(MISSING_GLYPHS)
    if holds is not None:
        test.assertTrue(holds(driver), f"{state}: the state ended before its characters were checked")
    if not driver.execute_script("return typeof window.axe !== 'undefined'"):
        driver.execute_script(AXE_SCRIPT)
    violations = driver.execute_async_script(RUN_AXE)
    print(f"\n  {state}: {glyphs['checked']} characters checked, {len(violations)} serious violations", end="")
    test.assertEqual(glyphs["missing"], [], f"{state}: characters the fonts cannot draw")
    test.assertEqual(violations, [], f"{state}: axe-core violations")


class EveryStateOfThePage(unittest.TestCase):
    """One server with a room that has a past; a desktop and a phone page, named 'painter' and 'pat'."""

    @classmethod
    def setUpClass(cls):
        cls.server = support.Server().start()
        cls.room = new_room("states")
        # Events a second apart, so that a replay at 1× takes a few seconds.
        for value in (60, 70, 80, 90, 95):
            cls.server.intent(cls.room, {"action": "face.setHappiness", "value": value}, name="carol")
            time.sleep(1.0)
        cls.server.intent(cls.room, {"action": "dragon.forward"}, name="carol")
        cls.desktop = support.browser()
        cls.phone = support.browser(phone=True)
        for driver, name in ((cls.desktop, "painter"), (cls.phone, "pat")):
            driver.set_script_timeout(60)
            driver.get(cls.server.base + "/healthz")
            driver.execute_script("localStorage.setItem('happy.name', arguments[0])", name)

    @classmethod
    def tearDownClass(cls):
        cls.desktop.quit()
        cls.phone.quit()
        cls.server.close()

    def open(self, driver, room=None, query="", connected=True):
        driver.get(f"{self.server.base}/?room={room or self.room}{query}")
        if connected:
            wait_for(driver, lambda d: (info(d) or {}).get("connection") == "connected", 15, "the page did not connect")

    def assert_state_is_sound(self, driver, state, holds=None):
        assert_state_is_sound(self, driver, state, holds)

    # The states

    def test_live(self):
        for driver in (self.desktop, self.phone):
            self.open(driver)
            self.assert_state_is_sound(driver, "live" + (" (phone)" if driver is self.phone else ""))

    def test_history_open(self):
        for driver in (self.desktop, self.phone):
            self.open(driver, query="&seq=2")
            wait_for(driver, lambda d: info(d)["history"]["shown"] == 2, message=str(info(driver)["history"]))
            self.assert_state_is_sound(driver, "history at seq 2" + (" (phone)" if driver is self.phone else ""))

    def test_replaying(self):
        self.open(self.desktop, query="&seq=0")
        wait_for(self.desktop, lambda d: info(d)["history"]["shown"] == 0)
        self.desktop.find_element(By.ID, "history-play").click()
        wait_for(self.desktop, lambda d: info(d)["history"]["playing"] and info(d)["history"]["shown"] == 1,
                 message=str(info(self.desktop)["history"]))
        self.assert_state_is_sound(self.desktop, "replaying", holds=lambda d: info(d)["history"]["playing"])

    def test_name_dialog(self):
        self.open(self.desktop)
        self.desktop.find_element(By.ID, "change-name").click()
        wait_for(self.desktop, lambda d: d.find_element(By.ID, "name-dialog").is_displayed())
        self.assert_state_is_sound(self.desktop, "name dialog")

    def test_refused_room_name(self):
        for driver in (self.desktop, self.phone):
            self.open(driver, room="no%20spaces!", connected=False)
            wait_for(driver, lambda d: (info(d) or {}).get("connection") == "refused")
            self.assert_state_is_sound(driver, "refused room name" + (" (phone)" if driver is self.phone else ""))

    def test_new_room(self):
        self.open(self.desktop, room=new_room("empty"))
        self.assert_state_is_sound(self.desktop, "new room")

    def test_removed_by_an_operator(self):
        for driver in (self.desktop, self.phone):
            room = new_room("removed")
            self.open(driver, room=room)
            support.operator(self.server, "POST", f"/api/rooms/{room}/kick", {"id": info(driver)["you"]["id"], "reason": "a test"})
            wait_for(driver, lambda d: info(d)["connection"] == "removed")
            phone = driver is self.phone
            support.save_shot(driver, "page-removed" + ("-phone" if phone else ""))
            self.assert_state_is_sound(driver, "removed by an operator" + (" (phone)" if phone else ""))


class InACrowdRoom(unittest.TestCase):
    """A room in tick delivery with writers pressing the dragon's buttons: the tally, the recent
    senders, the delivery note and the ticks' log lines, while they change."""

    def test_a_crowd_room(self):
        server = support.Server({"crowd": {"mode": "tick", "presenceBatchAbove": 4}}).start()
        self.addCleanup(server.close)
        room = new_room("crowd")
        writers = support.Writers(server, room, 8).start()
        self.addCleanup(writers.close)
        for phone, name in ((False, "painter"), (True, "pat")):
            driver = support.browser(phone=phone)
            self.addCleanup(driver.quit)
            driver.set_script_timeout(60)
            driver.get(server.base + "/healthz")
            driver.execute_script("localStorage.setItem('happy.name', arguments[0])", name)
            driver.get(f"{server.base}/?room={room}")
            wait_for(driver, lambda d: (info(d) or {}).get("connection") == "connected", 15)
            wait_for(driver, lambda d: info(d)["crowd"]["shown"] and sum(info(d)["crowd"]["tally"].values()) > 0
                     and any("–" in line for line in support.log_lines(d)), 15, str(info(driver)["crowd"]))
            self.assertTrue(driver.find_element(By.ID, "crowd-tally").is_displayed())
            self.assertTrue(driver.find_element(By.ID, "crowd-note").is_displayed())
            assert_state_is_sound(self, driver, "a crowd room" + (" (phone)" if phone else ""),
                                  holds=lambda d: d.find_element(By.ID, "crowd-tally").is_displayed())


class WhileTheServerIsDown(unittest.TestCase):
    """A page whose server stopped: disconnected, and an error for a click that could not be sent."""

    def test_disconnected_and_an_error(self):
        server = support.Server().start()
        driver = support.browser()
        try:
            driver.set_script_timeout(60)
            driver.get(server.base + "/healthz")
            driver.execute_script("localStorage.setItem('happy.name', 'painter')")
            room = new_room("down")
            server.intent(room, {"action": "dragon.forward"}, name="carol")
            driver.get(f"{server.base}/?room={room}")
            wait_for(driver, lambda d: (info(d) or {}).get("connection") == "connected", 15)
            server.stop()
            wait_for(driver, lambda d: info(d)["connection"] == "reconnecting", 15, message=str(info(driver)))
            assert_state_is_sound(self, driver, "disconnected")
            driver.find_element(By.ID, "dragon-forward").click()
            wait_for(driver, lambda d: d.find_element(By.ID, "error").is_displayed())
            assert_state_is_sound(self, driver, "disconnected, with an error")
        finally:
            driver.quit()
            server.close()



def inspector_info(driver):
    return driver.execute_script("return window.inspector ? window.inspector.info() : null")


class EveryStateOfTheInspector(unittest.TestCase):
    """The inspector (/admin) in each of its states, on a desktop and a phone: a room open with people, an
    observer and rate-limit hits, the remove and delete dialogs, an action's outcome, paused, a room not in
    memory, no rooms, the server down, and refused (no key, a wrong key, no admin token, a player's token).
    Screenshots go to SHOTS as admin-*.png."""

    @classmethod
    def setUpClass(cls):
        cls.server = support.Server().start()
        cls.helper = support.browser()
        support.open_module_clients(cls.helper, cls.server, [
            ("alice", {"room": "kitchen", "name": "alice"}),
            ("bob", {"room": "kitchen", "name": "bob"}),
            ("dash", {"room": "kitchen", "name": "dash", "observe": True}),
            ("carol", {"room": "lobby", "name": "carol"}),
        ])
        # Over the rate limit, so the room shows rate-limit hits.
        cls.helper.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const alice = window.clients.alice;
            const sends = [];
            for (let i = 0; i < alice.limits.intentBurst + 10; i++) sends.push(alice.intent('dragon.toggleHidden'));
            Promise.allSettled(sends).then(() => done(true));""")
        cls.desktop = support.browser()
        cls.phone = support.browser(phone=True)
        for driver in (cls.desktop, cls.phone):
            driver.set_script_timeout(60)

    @classmethod
    def tearDownClass(cls):
        for driver in (cls.helper, cls.desktop, cls.phone):
            driver.quit()
        cls.server.close()

    def open(self, driver, server=None, query="", ready=lambda i: i.get("live") == "live"):
        """The inspector with the server's operator key and `query` (`#room=R`) in its address."""
        driver.get("about:blank")  # a load of its own, not a move within the page
        driver.get((server or self.server).admin_url(query))
        support.until(driver, lambda d: ready(inspector_info(d) or {}), 15, lambda: str(inspector_info(driver)))

    def open_refused(self, driver, server, status):
        """The inspector in a tab that holds no key, until it is refused with `status`."""
        driver.get(server.base + "/healthz")
        driver.execute_script("sessionStorage.clear()")
        driver.get(server.base + "/admin")
        self.wait_refused(driver, status)

    @staticmethod
    def wait_refused(driver, status, message=""):
        support.until(driver, lambda d: ((inspector_info(d) or {}).get("access") or {}).get("status") == status
                      and message in inspector_info(d)["access"]["message"], 15, lambda: str(inspector_info(driver)))

    @staticmethod
    def type_credential(driver, value):
        field = driver.find_element(By.ID, "credential-input")
        field.send_keys(value)
        field.submit()

    def check(self, driver, state, holds=None):
        phone = driver is self.phone
        support.save_shot(driver, "admin-" + state.replace(" ", "-").replace(",", "") + ("-phone" if phone else ""),
                          full=True)
        assert_state_is_sound(self, driver, "inspector: " + state + (" (phone)" if phone else ""), holds)

    def test_a_room_open_with_people_an_observer_and_rate_limit_hits(self):
        for driver in (self.desktop, self.phone):
            self.open(driver, query="#room=kitchen",
                      ready=lambda i: len(i.get("connections", [])) == 3 and any(c["rateLimited"] for c in i["connections"]))
            self.check(driver, "room open")

    def test_the_remove_and_delete_dialogs(self):
        for driver in (self.desktop, self.phone):
            self.open(driver, query="#room=kitchen", ready=lambda i: len(i.get("connections", [])) == 3)
            driver.find_element(By.CSS_SELECTOR, "#connections-body button.kick").click()
            wait_for(driver, lambda d: d.find_element(By.ID, "kick-dialog").is_displayed())
            driver.find_element(By.ID, "kick-reason").send_keys("too loud")
            self.check(driver, "remove dialog")
            driver.find_element(By.ID, "kick-cancel").click()
            driver.find_element(By.ID, "delete-room").click()
            wait_for(driver, lambda d: d.find_element(By.ID, "delete-dialog").is_displayed())
            self.check(driver, "delete dialog")
            driver.find_element(By.ID, "delete-cancel").click()

    def test_an_outcome_paused_and_a_room_not_in_memory(self):
        self.open(self.desktop, query="#room=lobby", ready=lambda i: len(i.get("connections", [])) == 1)
        self.desktop.find_element(By.CSS_SELECTOR, "#connections-body button.kick").click()
        self.desktop.find_element(By.ID, "kick-confirm").click()
        support.until(self.desktop, lambda d: inspector_info(d)["outcome"].startswith("Removed 1 connection"), 10,
                      lambda: str(inspector_info(self.desktop)))
        self.desktop.find_element(By.ID, "pause").click()
        support.until(self.desktop, lambda d: inspector_info(d)["live"] == "paused", 5, lambda: str(inspector_info(self.desktop)))
        self.check(self.desktop, "outcome, paused")
        self.open(self.desktop, query="#room=nosuch", ready=lambda i: i.get("roomProblem"))
        self.assertIn("Room nosuch is not in memory on this server", self.desktop.find_element(By.ID, "room-problem").text)
        self.check(self.desktop, "room not in memory")

    def test_no_rooms_then_the_server_down(self):
        empty = support.Server().start()
        try:
            self.open(self.desktop, server=empty)
            self.assertTrue(self.desktop.find_element(By.ID, "rooms-empty").is_displayed())
            self.check(self.desktop, "no rooms")
            empty.stop()
            support.until(self.desktop, lambda d: inspector_info(d)["live"] == "offline", 15,
                          lambda: str(inspector_info(self.desktop)))
            self.check(self.desktop, "server down")
        finally:
            empty.close()

    def test_refused_without_a_key_and_with_a_wrong_one(self):
        for driver in (self.desktop, self.phone):
            self.open_refused(driver, self.server, 401)
            self.check(driver, "refused no key")
        self.type_credential(self.desktop, "not-the-key")
        self.wait_refused(self.desktop, 401, "not the operator key")
        self.check(self.desktop, "refused wrong key")

    def test_refused_without_an_admin_token_and_with_a_players(self):
        secret = "inspector-states-secret"
        guarded = support.Server({"auth": {"secret": secret}}).start()
        try:
            self.open_refused(self.desktop, guarded, 401)
            self.check(self.desktop, "refused no admin token")
            self.type_credential(self.desktop, support.mint_token(secret, "player"))
            self.wait_refused(self.desktop, 403)
            self.check(self.desktop, "refused 403")
        finally:
            guarded.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
