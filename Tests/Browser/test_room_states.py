"""What the page says about its room and its connection, honestly: a new room
(most likely a mistyped name) says it is new; a refused room name says why
once and offers what can work (another room, the lobby) instead of a
reconnect that would be refused again; while the server is down the views
and the people list are dimmed, and come back when it does."""

import unittest
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import support
from support import info, wait_for

# The visible elements whose own text contains arguments[0] (not counting their ancestors).
SHOWING = """
const needle = arguments[0];
return [...document.querySelectorAll('body *')].filter((element) => {
  if (!element.checkVisibility({ visibilityProperty: true })) return false;
  const own = [...element.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('');
  return own.includes(needle);
}).map((element) => element.id || element.className || element.tagName);"""

# How dimmed an element looks: its own opacity times its ancestors', and whether a grayscale filter is on the way.
DIMMING = """
let opacity = 1, grey = false;
for (let element = document.getElementById(arguments[0]); element; element = element.parentElement) {
  const style = getComputedStyle(element);
  opacity *= Number(style.opacity);
  grey = grey || style.filter.includes('grayscale');
}
return { opacity, grey };"""


def new_room(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def named_browser(server, name="painter"):
    driver = support.browser()
    driver.get(server.base + "/healthz")
    driver.execute_script("localStorage.setItem('happy.name', arguments[0])", name)
    return driver


def wait_phase(driver, phase, timeout=15):
    wait_for(driver, lambda d: (info(d) or {}).get("connection") == phase, timeout,
             f"the page is not {phase}: {info(driver)}")


class NewAndRefusedRooms(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = support.Server().start()
        cls.driver = named_browser(cls.server)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.close()

    def notice(self):
        element = self.driver.find_element(By.ID, "room-notice")
        return element.text if element.is_displayed() else ""

    def test_a_new_room_says_it_is_new_until_something_happens(self):
        room = new_room("kitchn")
        self.driver.get(f"{self.server.base}/?room={room}")
        wait_phase(self.driver, "connected")
        wait_for(self.driver, lambda d: f"Room {room} is new: nobody here, no history." in self.notice(),
                 message=f"no word that the room is new: {self.notice()!r}")
        lobby = self.driver.find_element(By.CSS_SELECTOR, "#room-notice a[href='/?room=lobby']")
        self.assertTrue(lobby.is_displayed(), "the lobby is offered")

        self.server.intent(room, {"action": "dragon.forward"}, name="carol")
        wait_for(self.driver, lambda d: self.notice() == "", message=f"the notice stays: {self.notice()!r}")

        # A room with a past is not new.
        self.driver.get(f"{self.server.base}/?room={room}")
        wait_phase(self.driver, "connected")
        wait_for(self.driver, lambda d: info(d)["seq"] == 1)
        self.assertEqual(self.notice(), "")

    def test_a_refused_room_name_says_why_once_and_offers_another_room(self):
        self.driver.get(f"{self.server.base}/?room=no%20spaces!")
        wait_phase(self.driver, "refused")
        reason = "invalid room name"
        wait_for(self.driver, lambda d: d.execute_script(SHOWING, reason), message="the reason is not shown")
        self.assertEqual(len(self.driver.execute_script(SHOWING, reason)), 1,
                         f"the reason shows once: {self.driver.execute_script(SHOWING, reason)}")
        self.assertIn("1008", self.driver.find_element(By.ID, "connection").text)
        self.assertFalse(self.driver.find_element(By.ID, "reconnect").is_displayed(),
                         "a reconnect would be refused again")
        lobby = self.driver.find_element(By.CSS_SELECTOR, "#room-notice a[href='/?room=lobby']")
        self.assertTrue(lobby.is_displayed(), "the lobby is offered")

        field = self.driver.find_element(By.ID, "other-room")
        self.assertTrue(field.is_displayed(), "another room can be typed")
        room = new_room("fixed")
        field.send_keys(room, Keys.ENTER)
        wait_phase(self.driver, "connected")
        self.assertEqual(self.driver.execute_script("return new URLSearchParams(location.search).get('room')"), room)

    def test_an_address_the_page_does_not_understand_is_said_once_and_dropped(self):
        room = new_room("addr")
        self.driver.get(f"{self.server.base}/?room={room}&seq=abc&width=5")
        wait_phase(self.driver, "connected")
        error = self.driver.find_element(By.ID, "error")
        self.assertTrue(error.is_displayed(), "the page says its address was not understood")
        self.assertIn("“seq=abc” is not an event number: showing the room live.", error.text)
        self.assertIn("“width” is not something this page understands", error.text)
        self.assertEqual(self.driver.execute_script("return location.search"), f"?room={room}",
                         "what was not understood leaves the address")
        self.assertIsNone((info(self.driver)["history"] or {}).get("viewing"), "the room is shown live")
        # An address the page understands says nothing.
        self.driver.get(f"{self.server.base}/?room={room}")
        wait_phase(self.driver, "connected")
        self.assertFalse(self.driver.find_element(By.ID, "error").is_displayed())


class WhileTheServerIsDown(unittest.TestCase):
    def test_the_views_and_people_are_dimmed_until_the_connection_is_back(self):
        server = support.Server().start()
        driver = named_browser(server)
        other = named_browser(server, "olga")
        try:
            room = new_room("offline")
            for page in (driver, other):
                page.get(f"{server.base}/?room={room}")
                wait_phase(page, "connected")
            wait_for(driver, lambda d: info(d)["presenceCount"] == 2)
            people_title = driver.find_element(By.ID, "people-title")
            self.assertTrue(people_title.text.startswith("Here now"), people_title.text)
            for element in ("face", "heart", "dragon", "presence"):
                self.assertEqual(driver.execute_script(DIMMING, element), {"opacity": 1, "grey": False}, element)

            server.stop()
            wait_phase(driver, "reconnecting")
            for element in ("face", "heart", "dragon", "presence"):
                dimming = driver.execute_script(DIMMING, element)
                self.assertTrue(dimming["grey"] or dimming["opacity"] < 0.7, f"{element} is not dimmed: {dimming}")
            self.assertNotIn("Here now", people_title.text, "nobody is known to be here while disconnected")

            server.start()
            wait_phase(driver, "connected", 30)
            wait_for(driver, lambda d: d.find_element(By.ID, "people-title").text.startswith("Here now"))
            for element in ("face", "heart", "dragon", "presence"):
                self.assertEqual(driver.execute_script(DIMMING, element), {"opacity": 1, "grey": False}, element)
        finally:
            driver.quit()
            other.quit()
            server.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
