"""The operator's side in the browser (PROTOCOL.md section 13), against a real
server: the inspector at /admin pages through two rooms, shows a room's
connections, removes one by name (the page then says why and does not
reconnect) and one by id (the client module stops the same way), and deletes a
room after a confirmation (4004); the page says what the API's 401/403 mean
and takes a key or token typed in.
And issue 26 point 7: a running `happyclient watch` observes, so the page does
not list it among the people."""

import json
import subprocess
import time
import unittest

from selenium.webdriver.common.by import By

import support
from support import info, until, wait_for


def inspector_info(driver):
    return driver.execute_script("return window.inspector ? window.inspector.info() : null")


def wait_inspector(driver, predicate, message, timeout=15):
    return until(driver, lambda d: predicate(inspector_info(d) or {}), timeout, lambda: f"{message}: {inspector_info(driver)}")


def named_page(driver, server, name, room):
    """The Happy page in `room` as `name`, counting the sockets it opens; waits until it is connected."""
    driver.get(server.base + "/healthz")
    driver.execute_script("localStorage.setItem('happy.name', arguments[0])", name)
    driver.get(f"{server.base}/?room={room}")
    wait_for(driver, lambda d: (info(d) or {}).get("connection") == "connected", 15, "the page did not connect")


def row_of(driver, table, key):
    return driver.find_element(By.CSS_SELECTOR, f"#{table} tr[data-key='{key}']")


class InspectorWithTwoRooms(unittest.TestCase):
    """Rooms atrium (the Happy page as alice) and bazaar (module clients bob and carol); one server per test."""

    @classmethod
    def setUpClass(cls):
        cls.inspector = support.browser()
        cls.page = support.browser()
        support.count_sockets(cls.page)
        cls.module = support.browser()
        for driver in (cls.inspector, cls.page, cls.module):
            driver.set_script_timeout(30)

    @classmethod
    def tearDownClass(cls):
        for driver in (cls.inspector, cls.page, cls.module):
            driver.quit()

    def setUp(self):
        self.server = support.Server().start()
        named_page(self.page, self.server, "alice", "atrium")
        support.open_module_clients(self.module, self.server, [
            ("bob", {"room": "bazaar", "name": "bob", "reconnect": {"minDelayMs": 100, "maxDelayMs": 250}}),
            ("carol", {"room": "bazaar", "name": "carol"}),
        ])

    def tearDown(self):
        self.module.execute_script("for (const c of Object.values(window.clients || {})) c.close();")
        self.server.close()

    def open_inspector(self, settings=""):
        self.inspector.get("about:blank")  # a load of its own, not a move within the page
        self.inspector.get(self.server.admin_url(settings))
        wait_inspector(self.inspector, lambda i: i.get("live") == "live", "the inspector did not load")

    def click(self, element_id):
        self.inspector.find_element(By.ID, element_id).click()

    def choose_room(self, room):
        row_of(self.inspector, "rooms-body", room).find_element(By.TAG_NAME, "button").click()
        wait_inspector(self.inspector, lambda i: i.get("selected") == room and i.get("connections"), f"{room} not shown")

    def page_sockets(self):
        return self.page.execute_script("return window.openedSockets.length")

    def assert_page_stays_removed(self, sockets, text):
        """Two seconds, four times the page's longest first wait before a reconnect (0.5 s): no new socket."""
        deadline = time.time() + 2.0
        while time.time() < deadline:
            self.assertEqual(self.page_sockets(), sockets, "the page opened another socket")
            self.assertEqual(info(self.page)["connection"], "removed")
            time.sleep(0.1)
        self.assertEqual(info(self.page)["connectionText"], text)

    def test_two_rooms_paged_a_kick_by_name_and_a_deleted_room_stop_the_page(self):
        self.open_inspector("limit=1")
        wait_inspector(self.inspector, lambda i: i["rooms"] == ["atrium"] and i["next"] == "atrium", "first page")
        self.assertFalse(self.inspector.find_element(By.ID, "previous-page").is_enabled())
        self.click("next-page")
        wait_inspector(self.inspector, lambda i: i["rooms"] == ["bazaar"] and i["page"] == 1, "second page")
        self.assertFalse(self.inspector.find_element(By.ID, "next-page").is_enabled(), "bazaar is the last room")
        row = row_of(self.inspector, "rooms-body", "bazaar").text
        self.assertIn("2", row.split(), f"two people in bazaar: {row}")
        self.click("previous-page")
        wait_inspector(self.inspector, lambda i: i["rooms"] == ["atrium"] and i["page"] == 0, "back to the first page")

        self.choose_room("atrium")
        [alice] = inspector_info(self.inspector)["connections"]
        self.assertEqual((alice["name"], alice["observer"], alice["queuedBytes"], alice["resyncs"], alice["rateLimited"]),
                         ("alice", False, 0, 0, 0))
        self.assertIn("person", row_of(self.inspector, "connections-body", alice["id"]).text)
        self.assertIn("room=atrium", self.inspector.current_url, "the address names the room shown")

        # Remove alice by name, with a reason.
        sockets = self.page_sockets()
        row_of(self.inspector, "connections-body", alice["id"]).find_element(By.CSS_SELECTOR, "button.kick").click()
        wait_for(self.inspector, lambda d: d.find_element(By.ID, "kick-dialog").is_displayed())
        self.inspector.find_element(By.CSS_SELECTOR, "#kick-form input[value='name']").click()
        self.inspector.find_element(By.ID, "kick-reason").send_keys("testing")
        self.assertEqual(self.inspector.find_element(By.ID, "kick-preview").text, "removed from the room by an operator: testing")
        support.save_shot(self.inspector, "admin-kick-dialog")
        self.click("kick-confirm")
        wait_inspector(self.inspector, lambda i: i["outcome"] == "Removed 1 connection named alice from atrium.", "no outcome")
        until(self.page, lambda d: info(d)["connection"] == "removed", 10, lambda: f"the page: {info(self.page)}")
        self.assert_page_stays_removed(sockets, "Removed from the room by an operator: testing")
        notice = self.page.find_element(By.ID, "room-notice")
        self.assertIn("An operator removed you from this room.", notice.text)
        self.assertFalse(self.page.find_element(By.ID, "reconnect").is_displayed(), "no automatic or offered reconnect")
        wait_inspector(self.inspector, lambda i: i["connections"] == [] or i["roomProblem"], "alice is gone from the list")

        # Joining again is alice's choice; then the room is deleted under her.
        self.page.find_element(By.ID, "notice-rejoin").click()
        until(self.page, lambda d: info(d)["connection"] == "connected", 10, lambda: f"the page: {info(self.page)}")
        sockets = self.page_sockets()
        self.choose_room("atrium")
        self.click("delete-room")
        wait_for(self.inspector, lambda d: d.find_element(By.ID, "delete-dialog").is_displayed())
        text = self.inspector.find_element(By.ID, "delete-text").text
        self.assertTrue(text.startswith("Its 1 connection is closed"), text)
        support.save_shot(self.inspector, "admin-delete-dialog")
        self.click("delete-confirm")
        wait_inspector(self.inspector, lambda i: i["outcome"].startswith("Deleted room atrium: 1 connection closed"),
                       "no outcome")
        until(self.page, lambda d: info(d)["connection"] == "removed", 10, lambda: f"the page: {info(self.page)}")
        self.assert_page_stays_removed(sockets, "The room was deleted by an operator")
        self.assertEqual(self.server.state("atrium")["seq"], 0, "its history went with it")
        self.assertIsNone(inspector_info(self.inspector)["selected"])

    def test_a_kick_by_id_stops_a_module_client_and_leaves_the_others(self):
        self.open_inspector("room=bazaar")
        wait_inspector(self.inspector, lambda i: len(i["connections"]) == 2, "bob and carol")
        bob = next(c for c in inspector_info(self.inspector)["connections"] if c["name"] == "bob")
        sockets = self.module.execute_script("return window.openedSockets.length")
        row_of(self.inspector, "connections-body", bob["id"]).find_element(By.CSS_SELECTOR, "button.kick").click()
        wait_for(self.inspector, lambda d: d.find_element(By.ID, "kick-dialog").is_displayed())
        self.click("kick-confirm")
        wait_inspector(self.inspector, lambda i: i["outcome"] == f"Removed 1 connection bob ({bob['id']}) from bazaar.",
                       "no outcome")
        wait_inspector(self.inspector, lambda i: [c["name"] for c in i["connections"]] == ["carol"], "carol stays")

        statuses = lambda: self.module.execute_script("return window.statuses.bob")  # noqa: E731
        until(self.module, lambda d: statuses()[-1]["phase"] == "removed", 10, lambda: str(statuses()))
        self.assertEqual((statuses()[-1]["code"], statuses()[-1]["message"]), (4003, "removed from the room by an operator"))
        deadline = time.time() + 1.0
        while time.time() < deadline:
            self.assertEqual(self.module.execute_script("return window.openedSockets.length"), sockets)
            time.sleep(0.05)
        self.assertEqual([s["phase"] for s in statuses()], ["connecting", "connected", "removed"])
        self.assertTrue(self.module.execute_script("return window.clients.carol.connected"))


class TheInspectorSaysHowToGetIn(unittest.TestCase):
    """401 and 403 from a server with auth.secret: /admin answers a browser with the page (it holds no data), which
    says why and how to get in, and takes a token typed in without putting it in the address."""

    def test_without_a_token_with_a_players_and_with_an_admins(self):
        secret = "inspector-secret"
        server = support.Server({"auth": {"secret": secret}}).start()
        driver = support.browser()
        try:
            status, answer = support.operator(server, "GET", "/api/rooms")
            self.assertEqual(status, 401, "with auth.secret, admin tokens take the operator key's place")
            self.assertIn("the operator key is no credential while auth.secret is set", json.dumps(answer))
            driver.get(f"{server.base}/admin#room=lobby")
            wait_inspector(driver, lambda i: (i.get("access") or {}).get("status") == 401, "no 401")
            access = driver.find_element(By.ID, "access")
            self.assertIn("The server answered 401: the operator API needs an admin token", access.text)
            self.assertIn("happyserver token --role admin", access.text)
            self.assertIn("/admin#key=KEY", access.text)

            player = support.mint_token(secret, "player")
            field = driver.find_element(By.ID, "credential-input")
            field.send_keys(player)
            field.submit()
            wait_inspector(driver, lambda i: (i.get("access") or {}).get("status") == 403, "no 403")
            self.assertIn("needs the admin role", access.text)
            self.assertIn("This token is not enough", access.text)
            self.assertEqual(driver.current_url, f"{server.base}/admin#room=lobby", "the address stays as it was")

            field = driver.find_element(By.ID, "credential-input")
            field.send_keys(support.mint_token(secret, "admin"))
            field.submit()
            wait_inspector(driver, lambda i: i.get("live") == "live" and i.get("access") is None,
                           "no access with an admin token")
            self.assertFalse(access.is_displayed())

            # An admin token in the address works as the operator key does, and leaves it the same way.
            admin = support.mint_token(secret, "admin", subject="other")
            driver.get("about:blank")
            driver.get(server.admin_url("room=lobby", key=admin))
            wait_inspector(driver, lambda i: i.get("live") == "live" and i.get("access") is None, "#key= with a token")
            self.assertEqual(driver.current_url, f"{server.base}/admin#room=lobby")
            self.assertEqual(driver.execute_script("return sessionStorage.getItem('happy.operatorKey')"), admin)

            # The query is refused, and says where the key goes.
            status, answer = support.operator(server, "GET", f"/admin?token={admin}")
            self.assertEqual(status, 400)
            self.assertIn("/admin#key=KEY", answer["message"])
        finally:
            driver.quit()
            server.close()


class ReadOnlyCommandsAreNotPeople(unittest.TestCase):
    """Issue 26 point 7: before, a running watch was listed on the page as guest-cN."""

    def test_a_running_watch_is_not_among_the_pages_people(self):
        server = support.Server().start()
        driver = support.browser()
        watch = subprocess.Popen([str(support.CLIENT_BINARY), "--url", f"ws://127.0.0.1:{server.port}", "--room", "den",
                                  "--name", "watcher", "watch"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            until(driver, lambda d: any(c["name"] == "watcher" for c in support.operator(server, "GET", "/api/rooms/den")[1]
                                        .get("connections", [])), 10, lambda: "the watch did not join the room")
            named_page(driver, server, "alice", "den")
            self.assertEqual((info(driver)["presence"], info(driver)["presenceCount"]), (["alice"], 1))
            for _ in range(3):
                subprocess.run([str(support.CLIENT_BINARY), "--url", f"ws://127.0.0.1:{server.port}", "--room", "den",
                                "state"], capture_output=True, timeout=20, check=True)
            # The event comes after anything the server sent the page before it: a join or leave would be logged by now.
            server.intent("den", {"action": "dragon.forward"}, name="carol")
            until(driver, lambda d: any("forwardButtonClicked:" in line for line in support.log_lines(d)), 10,
                  lambda: support.log_lines(driver))
            self.assertEqual(info(driver)["presence"], ["alice"])
            self.assertEqual([line for line in support.log_lines(driver) if "joined" in line or " left" in line], [])
        finally:
            watch.terminate()
            watch.wait(10)
            driver.quit()
            server.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
