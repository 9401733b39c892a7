"""The pages' side of the server's security (docs/operations.md, Security): the
inspector takes the operator key from its address's fragment, keeps it in the
tab's sessionStorage and takes it out of the address bar and the tab's
history; without it, or with a wrong one, it says how to get in and takes one
typed in; no page of another site can frame it; the page keeps its access
token (#token= or ?token=) the same way; and neither the page (live, a past
moment, a replay, the server's frame) nor the inspector breaks the content
security policy they are served with."""

import http.server
import threading
import unittest
import urllib.request

from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By

import support
from support import info, until, wait_for
from test_page import new_room

KEY_STORAGE = "happy.operatorKey"
TOKEN_STORAGE = "happy.token"
POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
          "object-src 'none'; base-uri 'none'; form-action 'self'")

# Before any script of the page: every securitypolicyviolation event, in window.policyViolations.
RECORD_VIOLATIONS = """
window.policyViolations = [];
document.addEventListener('securitypolicyviolation', (event) => {
  window.policyViolations.push({ directive: event.violatedDirective, blocked: event.blockedURI,
                                 source: event.sourceFile, line: event.lineNumber, sample: event.sample });
}, true);"""


def inspector_info(driver):
    return driver.execute_script("return window.inspector ? window.inspector.info() : null")


def wait_inspector(driver, predicate, message, timeout=15):
    return until(driver, lambda d: predicate(inspector_info(d) or {}), timeout, lambda: f"{message}: {inspector_info(driver)}")


def session_item(driver, key):
    return driver.execute_script("return sessionStorage.getItem(arguments[0])", key)


def access_status(inspector):
    return (inspector.get("access") or {}).get("status")


class TheInspectorKeepsItsKey(unittest.TestCase):
    """A server without auth.secret (so with an operator key), a room `den` with one person in it."""

    @classmethod
    def setUpClass(cls):
        cls.server = support.Server().start()
        cls.person = support.Writers(cls.server, "den", 1, name="dora")
        cls.driver = support.browser()
        cls.driver.set_script_timeout(30)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.person.close()
        cls.server.close()

    def setUp(self):
        # Each test starts with a tab that holds no key.
        self.driver.get(self.server.base + "/healthz")
        self.driver.execute_script("sessionStorage.clear()")

    def open_admin(self, url):
        self.driver.get("about:blank")  # a load of its own, not a move within the page
        self.driver.get(url)

    def test_the_key_goes_from_the_address_to_the_tabs_session(self):
        key = self.server.operator_key
        self.assertTrue(key, "the server made an operator key in its data directory")
        driver = self.driver
        self.open_admin(self.server.admin_url("room=den&limit=5"))
        wait_inspector(driver, lambda i: i.get("live") == "live" and "den" in i["rooms"]
                       and [c["name"] for c in i["connections"]] == ["dora1"], "the inspector did not show den")
        self.assertNotIn("key=", driver.current_url)
        self.assertNotIn(key, driver.current_url)
        self.assertEqual(driver.current_url, f"{self.server.base}/admin#room=den&limit=5", "its own settings stay")
        self.assertEqual(session_item(driver, KEY_STORAGE), key)
        self.assertTrue(driver.find_element(By.ID, "forget-key").is_displayed())

        # The tab's history holds the address without the key: away and back, it is what comes back.
        driver.get(self.server.base + "/healthz")
        driver.back()
        wait_inspector(driver, lambda i: i.get("live") == "live" and i.get("selected") == "den", "back did not work")
        self.assertEqual(driver.current_url, f"{self.server.base}/admin#room=den&limit=5")

        # A reload keeps access, from the session, and loads an address without the key.
        driver.refresh()
        wait_inspector(driver, lambda i: i.get("live") == "live" and i.get("connections"), "a reload lost access")
        loaded = driver.execute_script("return performance.getEntriesByType('navigation')[0].name")
        self.assertNotIn(key, loaded)
        self.assertNotIn(key, driver.current_url)
        self.assertEqual(driver.execute_script("return history.length") >= 1, True)

        # A new tab without the fragment has no key.
        original = driver.current_window_handle
        driver.switch_to.new_window("tab")
        try:
            driver.get(self.server.base + "/admin")
            wait_inspector(driver, lambda i: access_status(i) == 401, "a new tab should need the key")
            self.assertIsNone(session_item(driver, KEY_STORAGE))
        finally:
            driver.close()
            driver.switch_to.window(original)

    def test_a_key_given_later_in_the_address_is_taken_the_same_way(self):
        driver = self.driver
        self.open_admin(f"{self.server.base}/admin#room=den")
        wait_inspector(driver, lambda i: access_status(i) == 401, "no 401 without a key")
        # Typed into the address bar of the open page: a move within it (hashchange), not a load.
        driver.execute_script("location.hash = arguments[0]", f"key={self.server.operator_key}&room=den")
        wait_inspector(driver, lambda i: i.get("live") == "live" and i.get("connections"), "the key was not taken")
        self.assertEqual(driver.current_url, f"{self.server.base}/admin#room=den")
        self.assertEqual(session_item(driver, KEY_STORAGE), self.server.operator_key)

    def test_without_the_key_it_says_how_to_get_in_and_takes_one_typed(self):
        driver = self.driver
        self.open_admin(f"{self.server.base}/admin#room=den")
        wait_inspector(driver, lambda i: access_status(i) == 401, "no 401 without a key")
        access = driver.find_element(By.ID, "access")
        self.assertIn("The server answered 401: the operator API needs the operator key", access.text)
        self.assertIn("/admin#key=KEY", access.text)
        self.assertIn("operator.key", access.text)
        self.assertIn("happyserver token --role admin", access.text, "and what a server with auth.secret takes")
        self.assertNotIn("loopback", access.text.lower())
        self.assertFalse(driver.find_element(By.ID, "inspector-main").is_displayed(), "nothing to show yet")
        self.assertFalse(driver.find_element(By.ID, "forget-key").is_displayed())
        form = driver.find_element(By.ID, "credential-form")
        self.assertIn("Operator key or admin token", form.text)

        # A wrong key: said to be wrong, and the address stays as it was.
        field = driver.find_element(By.ID, "credential-input")
        field.send_keys("not-the-key")
        field.submit()
        wait_inspector(driver, lambda i: access_status(i) == 401 and "not the operator key" in i["access"]["message"],
                       "a wrong key was not refused as one")
        self.assertIn("The key this tab holds is not the server's operator key", access.text)
        self.assertEqual(driver.current_url, f"{self.server.base}/admin#room=den")

        # The right one: in, without the address changing; the keyboard goes on from the rooms.
        field = driver.find_element(By.ID, "credential-input")
        field.send_keys(self.server.operator_key)
        field.submit()
        wait_inspector(driver, lambda i: i.get("live") == "live" and i.get("access") is None and i.get("connections"),
                       "the right key typed did not open the inspector")
        self.assertFalse(access.is_displayed())
        self.assertEqual(driver.current_url, f"{self.server.base}/admin#room=den")
        self.assertEqual(session_item(driver, KEY_STORAGE), self.server.operator_key)
        until(driver, lambda d: d.switch_to.active_element.get_attribute("id") == "rooms-title", 5,
              lambda: f"focus on {driver.switch_to.active_element.get_attribute('id')}")

        # Forgotten: out of the session, what it showed gone, the form asks again.
        driver.find_element(By.ID, "forget-key").click()
        wait_inspector(driver, lambda i: access_status(i) == 401 and not i["rooms"] and not i["connections"],
                       "forgetting the key kept access")
        self.assertIsNone(session_item(driver, KEY_STORAGE))
        self.assertFalse(driver.find_element(By.ID, "forget-key").is_displayed())
        self.assertIn("needs the operator key", access.text)
        until(driver, lambda d: d.switch_to.active_element.get_attribute("id") == "credential-input", 5,
              lambda: f"focus on {driver.switch_to.active_element.get_attribute('id')}")
        driver.refresh()
        wait_inspector(driver, lambda i: access_status(i) == 401, "a reload after forgetting should need the key")


class FramingPage(http.server.BaseHTTPRequestHandler):
    """A page of another site (another port) that frames the inspector, and a frameable route of the same server."""

    target = ""

    def do_GET(self):  # noqa: N802 (the handler's name)
        body = (f'<!doctype html><title>elsewhere</title>'
                f'<iframe id="admin" src="{self.target}/admin#room=den"></iframe>'
                f'<iframe id="control" src="{self.target}/healthz"></iframe>'
                '<script>window.loaded = [];'
                'for (const frame of document.querySelectorAll("iframe"))'
                '  frame.addEventListener("load", () => window.loaded.push(frame.id));</script>').encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


class NoOtherSiteFramesTheInspector(unittest.TestCase):
    """frame-ancestors 'none' and X-Frame-Options: DENY: a page on another origin that frames /admin shows
    nothing of it, while it can frame a route without them (the control)."""

    def test_the_inspector_in_a_frame_of_another_site_stays_empty(self):
        server = support.Server().start()
        self.addCleanup(server.close)
        FramingPage.target = server.base
        elsewhere = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FramingPage)
        threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
        self.addCleanup(elsewhere.server_close)
        self.addCleanup(elsewhere.shutdown)
        driver = support.browser()
        self.addCleanup(driver.quit)
        # The operator's tab holds the key for the server's origin: the frame would share it.
        driver.get(server.admin_url())
        wait_inspector(driver, lambda i: i.get("live") == "live", "the inspector did not open with its key")

        driver.get(f"http://127.0.0.1:{elsewhere.server_address[1]}/")
        wait_for(driver, lambda d: sorted(d.execute_script("return window.loaded")) == ["admin", "control"], 15,
                 "the frames did not load")
        driver.switch_to.frame("control")
        self.assertIn("ok", driver.execute_script("return document.body.textContent").lower(), "the control frame")
        driver.switch_to.default_content()

        driver.switch_to.frame("admin")
        try:
            inside = driver.execute_script("return [location.href, document.title, Boolean(window.inspector)]")
        except WebDriverException as error:
            inside = ["no script runs in the blocked frame", str(error).splitlines()[0], False]
        driver.switch_to.default_content()
        self.assertFalse(inside[2], f"the inspector ran in the frame: {inside}")
        self.assertNotEqual(inside[1], "Happy inspector", inside)
        self.assertFalse(inside[0].startswith(server.base), f"the frame holds the inspector's address: {inside}")


class ThePageKeepsItsToken(unittest.TestCase):
    """A server with auth.secret: the page takes its token from #token= (or ?token=) into the tab's session."""

    SECRET = "page-token-secret"

    @classmethod
    def setUpClass(cls):
        cls.server = support.Server({"auth": {"secret": cls.SECRET}}).start()
        cls.token = support.mint_token(cls.SECRET, "player")
        cls.driver = support.browser()

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.close()

    def setUp(self):
        self.driver.get(self.server.base + "/healthz")
        self.driver.execute_script("sessionStorage.clear(); localStorage.setItem('happy.name', 'tess')")

    def connected(self, driver):
        wait_for(driver, lambda d: (info(d) or {}).get("connection") == "connected", 15,
                 f"the page did not connect: {info(driver)}")

    def test_a_token_in_the_fragment_connects_and_leaves_the_address(self):
        driver = self.driver
        room = new_room("vault")
        driver.get(f"{self.server.base}/?room={room}#token={self.token}")
        self.connected(driver)
        self.assertEqual(driver.current_url, f"{self.server.base}/?room={room}")
        self.assertEqual(session_item(driver, TOKEN_STORAGE), self.token)
        driver.refresh()
        self.connected(driver)
        self.assertNotIn(self.token, driver.execute_script("return performance.getEntriesByType('navigation')[0].name"))

        # Another room from the notice: the token goes with the tab, not in the address.
        wait_for(driver, lambda d: d.find_element(By.ID, "other-room-form").is_displayed(), 10, "no room notice")
        other = new_room("annex")
        driver.find_element(By.ID, "other-room").send_keys(other)
        driver.find_element(By.ID, "other-room-form").submit()
        wait_for(driver, lambda d: d.current_url == f"{self.server.base}/?room={other}", 10, "not in the other room")
        self.connected(driver)
        self.assertEqual(info(driver)["you"]["name"], "tester", "named by the token's subject, so it was used")

    def test_a_token_in_the_query_is_taken_too_and_the_rest_of_the_address_stays(self):
        driver = self.driver
        room = new_room("vault")
        driver.get(f"{self.server.base}/?room={room}&token={self.token}&phase=10")
        self.connected(driver)
        self.assertEqual(driver.current_url, f"{self.server.base}/?room={room}&phase=10")
        self.assertEqual(session_item(driver, TOKEN_STORAGE), self.token)

    def test_without_a_token_the_notice_asks_for_one_in_the_fragment(self):
        driver = self.driver
        driver.get(f"{self.server.base}/?room={new_room('vault')}")
        wait_for(driver, lambda d: (info(d) or {}).get("connection") == "refused", 15, "not refused without a token")
        wait_for(driver, lambda d: d.find_element(By.ID, "room-notice").is_displayed())
        self.assertIn("#token=…", driver.find_element(By.ID, "room-notice-text").text)


class NeitherPageBreaksItsPolicy(unittest.TestCase):
    """The content security policy on the page and the inspector: sent, and no violation while they work."""

    @classmethod
    def setUpClass(cls):
        cls.server = support.Server().start()
        cls.driver = support.browser()
        cls.driver.set_script_timeout(30)
        cls.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_VIOLATIONS})
        cls.driver.get(cls.server.base + "/healthz")
        cls.driver.execute_script("localStorage.setItem('happy.name', 'paula')")

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.close()

    def violations(self):
        recorded = self.driver.execute_script("return window.policyViolations")
        self.assertIsNotNone(recorded, "the recorder did not run before the page")
        logged = [entry["message"] for entry in support.console_errors(self.driver)
                  if "Content Security Policy" in entry["message"]]
        return recorded + logged

    def headers(self, path):
        with urllib.request.urlopen(self.server.base + path, timeout=10) as response:
            return response.headers

    def test_the_headers(self):
        for path in ("/", "/index.html", "/?room=lobby"):
            headers = self.headers(path)
            self.assertEqual(headers["Content-Security-Policy"], POLICY + "; frame-ancestors 'self'", path)
            self.assertEqual(headers["X-Frame-Options"], "SAMEORIGIN", path)
            self.assertEqual((headers["X-Content-Type-Options"], headers["Referrer-Policy"]), ("nosniff", "no-referrer"))
        headers = self.headers("/admin")
        self.assertEqual(headers["Content-Security-Policy"], POLICY + "; frame-ancestors 'none'")
        self.assertEqual(headers["X-Frame-Options"], "DENY")
        self.assertEqual((headers["X-Content-Type-Options"], headers["Referrer-Policy"]), ("nosniff", "no-referrer"))

    def test_the_page_live_with_the_servers_frame_a_past_moment_and_a_replay(self):
        driver = self.driver
        room = new_room("policy")
        for value in (20, 40, 60):
            self.server.intent(room, {"action": "face.setHappiness", "value": value}, name="carol")
        self.server.intent(room, {"action": "dragon.forward"}, name="carol")
        driver.get(f"{self.server.base}/?room={room}")
        wait_for(driver, lambda d: (info(d) or {}).get("connection") == "connected", 15, "the page did not connect")
        wait_for(driver, lambda d: (info(d)["history"] or {}).get("latest") == 4, 10, "no history")
        driver.find_element(By.ID, "show-frame").click()
        wait_for(driver, lambda d: d.execute_script(
            "const image = document.getElementById('frame-image'); return image.complete && image.naturalWidth > 0"),
            15, "the server's frame did not load")
        driver.find_element(By.ID, "dragon-forward").click()
        wait_for(driver, lambda d: info(d)["seq"] == 5, 10, "the click did not land")
        self.assertEqual(self.violations(), [], "live")

        driver.get(f"{self.server.base}/?room={room}&seq=1")
        wait_for(driver, lambda d: ((info(d) or {}).get("history") or {}).get("shown") == 1, 15, "the past moment")
        driver.find_element(By.CSS_SELECTOR, '#history-speeds [data-speed="16"]').click()
        driver.find_element(By.ID, "history-play").click()
        wait_for(driver, lambda d: info(d)["history"]["viewing"] is None, 15, f"the replay: {info(driver)['history']}")
        self.assertEqual(self.violations(), [], "a past moment and its replay")

        # The recorder hears a violation when there is one: an inline style, refused.
        driver.execute_script("const probe = document.createElement('p'); probe.setAttribute('style', 'color: red');"
                              "document.body.append(probe);")
        wait_for(driver, lambda d: d.execute_script("return window.policyViolations.length") > 0, 5,
                 "an inline style raised no violation: is the policy in force?")

    def test_the_inspector_with_its_key_and_its_dialogs(self):
        driver = self.driver
        writer = support.Writers(self.server, "studio", 1, name="sam")
        self.addCleanup(writer.close)
        driver.get("about:blank")
        driver.get(self.server.admin_url("room=studio"))
        wait_inspector(driver, lambda i: i.get("live") == "live" and i.get("connections"), "the inspector with its key")
        driver.find_element(By.CSS_SELECTOR, "#connections-body button.kick").click()
        wait_for(driver, lambda d: d.find_element(By.ID, "kick-dialog").is_displayed())
        driver.find_element(By.ID, "kick-reason").send_keys("policy")
        driver.find_element(By.ID, "kick-cancel").click()
        driver.find_element(By.ID, "delete-room").click()
        wait_for(driver, lambda d: d.find_element(By.ID, "delete-dialog").is_displayed())
        driver.find_element(By.ID, "delete-cancel").click()
        driver.find_element(By.ID, "forget-key").click()
        wait_inspector(driver, lambda i: access_status(i) == 401, "forgotten")
        self.assertEqual(self.violations(), [], "the inspector")


if __name__ == "__main__":
    unittest.main(verbosity=2)
