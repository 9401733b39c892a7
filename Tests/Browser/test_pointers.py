"""Live pointers on the page (PROTOCOL.md section 10), two pages in one room:
alice's mouse over a view shows as her labelled pointer in bob's page, at
the same spot of that view although bob's window is smaller, within 300 ms;
her gestures show as their activity, and bob's people list says she is
steering; the pointer fades when still, goes when she leaves the view, and
goes when her page closes. The views' canvases are not redrawn for it."""

import statistics
import time
import unittest
import uuid

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By

import support
from support import info, wait_for

# The budget from alice's page handing a move to its client to bob's page drawing it.
LATENCY_BUDGET_MS = 300

# Where alice's pointer is drawn in bob's page, as 0..1 of the view's box it is drawn over.
DRAWN_AT = """
const [id, box] = arguments;
const marker = document.querySelector(`.pointer[data-id="${id}"]`);
if (!marker) return null;
const view = document.getElementById(box).getBoundingClientRect();
const tip = marker.getBoundingClientRect();
return { x: (tip.left - view.left) / view.width, y: (tip.top - view.top) / view.height,
         name: marker.querySelector('.pointer-name').textContent,
         layer: marker.parentElement.id,
         opacity: Number(getComputedStyle(marker).opacity) };"""


def new_room(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def open_as(driver, server, room, name):
    driver.get(server.base + "/healthz")
    driver.execute_script("localStorage.setItem('happy.name', arguments[0])", name)
    driver.get(f"{server.base}/?room={room}")
    wait_for(driver, lambda d: (info(d) or {}).get("connection") == "connected", 15, "the page did not connect")


def pointer_of(driver, name):
    return next((p for p in info(driver)["pointers"] if p["name"] == name), None)


def presence_text(driver):
    return driver.find_element(By.ID, "presence").text


class PointersBetweenTwoPages(unittest.TestCase):
    """alice on a 1280×800 desktop, bob on a 1000×760 one, on one server; a new room for each test."""

    @classmethod
    def setUpClass(cls):
        cls.server = support.Server().start()
        cls.alice = support.browser()
        cls.bob = support.browser(width=1000, height=760)

    @classmethod
    def tearDownClass(cls):
        cls.alice.quit()
        cls.bob.quit()
        cls.server.close()

    def setUp(self):
        self.room = new_room("pointers")
        open_as(self.alice, self.server, self.room, "alice")
        open_as(self.bob, self.server, self.room, "bob")
        wait_for(self.bob, lambda d: "alice" in info(d)["presence"], message="bob does not see alice")
        # Start from outside every view.
        ActionChains(self.alice, duration=0).move_to_element(self.alice.find_element(By.TAG_NAME, "h1")).perform()

    def move_over(self, element_id, x, y, actions=None):
        """Moves alice's mouse to (x, y), 0..1 across and down the element's box."""
        element = self.alice.find_element(By.ID, element_id)
        size = element.size
        chain = actions or ActionChains(self.alice, duration=0)
        # Offsets count from the element's centre.
        chain.move_to_element_with_offset(element, round((x - 0.5) * size["width"]), round((y - 0.5) * size["height"]))
        return chain

    def wait_pointer(self, predicate, message, timeout=5):
        return wait_for(self.bob, lambda d: (lambda p: p if p and predicate(p) else None)(pointer_of(d, "alice")),
                        timeout, message)

    def test_a_pointer_over_the_face_shows_in_the_other_page_at_the_same_spot_within_300_ms(self):
        paints_before = info(self.bob)["paints"]
        spots = [(0.3, 0.4), (0.7, 0.25), (0.5, 0.8), (0.2, 0.6), (0.8, 0.7), (0.4, 0.3), (0.6, 0.55), (0.15, 0.15)]
        drawn_latencies, seen_latencies = [], []
        for x, y in spots:
            self.move_over("face", x, y).perform()
            own = info(self.alice)["ownPointer"]
            self.assertEqual(own["view"], "face")
            self.assertAlmostEqual(own["x"], x, delta=0.02)
            self.assertAlmostEqual(own["y"], y, delta=0.02)
            self.assertEqual(own["activity"], "idle")
            # A tight loop on bob's page until the pointer is there.
            deadline = time.time() + 5
            while True:
                pointer = pointer_of(self.bob, "alice")
                if pointer and pointer["view"] == "face" and (pointer["x"], pointer["y"]) == (own["x"], own["y"]):
                    break
                self.assertLess(time.time(), deadline, f"bob does not show alice's pointer at {own}: {pointer}")
            # Both pages run on this machine's clock: bob stamps when it drew the move, alice when she sent it.
            drawn_latencies.append(pointer["receivedAt"] - own["at"])
            seen_latencies.append(time.time() * 1000 - own["at"])
            self.assertEqual(pointer["activity"], "idle")
            self.assertFalse(pointer["faded"])
            drawn = self.bob.execute_script(DRAWN_AT, pointer["id"], "face")
            self.assertEqual((drawn["name"], drawn["layer"]), ("alice", "face-pointers"))
            self.assertAlmostEqual(drawn["x"], own["x"], delta=0.01, msg="drawn at the same spot of bob's face")
            self.assertAlmostEqual(drawn["y"], own["y"], delta=0.01, msg="drawn at the same spot of bob's face")
        drawn_latencies.sort()
        print(f"\n  pointer latency, alice's move to bob's page: drawn {drawn_latencies} ms, "
              f"seen by polling {sorted(round(ms) for ms in seen_latencies)} ms", end="")
        self.assertLessEqual(statistics.median(drawn_latencies), LATENCY_BUDGET_MS)
        self.assertLessEqual(statistics.median(seen_latencies), LATENCY_BUDGET_MS)
        self.assertLess(max(drawn_latencies), 2000, "even on a busy machine")

        # The views are not redrawn for pointers (the heart's wave animates on its own).
        paints_after = info(self.bob)["paints"]
        self.assertEqual((paints_after[0], paints_after[2]), (paints_before[0], paints_before[2]))
        # And nobody sees their own pointer.
        self.assertEqual(info(self.alice)["pointers"], [])

    def test_each_view_has_its_own_pointer_spot(self):
        for view, box in (("heart", "heart"), ("dragon", "panel")):
            self.move_over(box, 0.35, 0.45).perform()
            pointer = self.wait_pointer(lambda p: p["view"] == view, f"alice's pointer is not over bob's {view}")
            drawn = self.bob.execute_script(DRAWN_AT, pointer["id"], box)
            self.assertEqual(drawn["layer"], f"{view}-pointers")
            self.assertAlmostEqual(drawn["x"], 0.35, delta=0.02)
            self.assertAlmostEqual(drawn["y"], 0.45, delta=0.02)

    def test_a_drag_on_the_face_shows_as_drag_and_alice_is_steering(self):
        self.move_over("face", 0.5, 0.5).perform()
        self.wait_pointer(lambda p: p["activity"] == "idle", "no pointer before the drag")
        chain = ActionChains(self.alice, duration=0).click_and_hold()
        for _ in range(4):
            chain.move_by_offset(0, -8).pause(0.03)
        chain.perform()  # The button stays down.
        try:
            self.assertEqual(info(self.alice)["ownPointer"]["activity"], "drag")
            self.wait_pointer(lambda p: p["activity"] == "drag" and p["steering"], "bob does not see alice drag")
            wait_for(self.bob, lambda d: "alice — steering face (drag)" in presence_text(d),
                     message=presence_text(self.bob))
            self.assertEqual(self.bob.find_element(By.CSS_SELECTOR, "#face-pointers .pointer").get_attribute(
                "data-activity"), "drag")
        finally:
            ActionChains(self.alice, duration=0).release().perform()
        self.wait_pointer(lambda p: p["activity"] == "idle", "the drag did not end in bob's page")
        released = time.time()
        # The pan changed happiness as ever: 32 pixels up is +16.
        wait_for(self.bob, lambda d: info(d)["state"]["face"]["happiness"] == 66, message=str(info(self.bob)["state"]))
        # Still, it stops being steering after 2 s and fades after 3 s.
        wait_for(self.bob, lambda d: "steering" not in presence_text(d), 5, presence_text(self.bob))
        self.assertGreater(time.time() - released, 1.2)
        pointer = self.wait_pointer(lambda p: p["faded"], "a still pointer did not fade", timeout=6)
        self.assertGreater(time.time() - released, 2.2)
        self.assertFalse(pointer["steering"])
        wait_for(self.bob, lambda d: d.execute_script(DRAWN_AT, pointer["id"], "face")["opacity"] == 0,
                 message="a faded pointer is still drawn")
        # A move brings it back.
        self.move_over("face", 0.3, 0.3).perform()
        self.wait_pointer(lambda p: not p["faded"] and p["x"] < 0.35, "the pointer did not come back")

    def test_the_wheel_shows_as_pinch_and_a_held_dragon_button_as_press(self):
        face = self.alice.find_element(By.ID, "face")
        self.move_over("face", 0.5, 0.5).perform()
        ActionChains(self.alice).scroll_from_origin(ScrollOrigin.from_element(face), 0, -100).perform()
        self.wait_pointer(lambda p: p["activity"] == "pinch", "bob does not see alice pinch")
        self.wait_pointer(lambda p: p["activity"] == "idle", "the pinch did not end")

        forward = self.alice.find_element(By.ID, "dragon-forward")
        ActionChains(self.alice, duration=0).move_to_element(forward).click_and_hold().perform()
        try:
            self.wait_pointer(lambda p: p["view"] == "dragon" and p["activity"] == "press",
                              "bob does not see alice press a dragon button")
            wait_for(self.bob, lambda d: "alice — steering dragon (press)" in presence_text(d),
                     message=presence_text(self.bob))
        finally:
            ActionChains(self.alice, duration=0).release().perform()
        self.wait_pointer(lambda p: p["activity"] == "idle", "the press did not end")
        wait_for(self.bob, lambda d: info(d)["state"]["dragon"]["x"] == 20, message="the click still moves the dragon")

    def test_leaving_the_views_hides_the_pointer(self):
        self.move_over("face", 0.6, 0.6).perform()
        self.wait_pointer(lambda p: p["view"] == "face", "no pointer over the face")
        ActionChains(self.alice, duration=0).move_to_element(self.alice.find_element(By.TAG_NAME, "h1")).perform()
        self.assertIsNone(info(self.alice)["ownPointer"])
        wait_for(self.bob, lambda d: info(d)["pointers"] == [], 5, "the pointer stayed after alice left the face")
        self.assertEqual(self.bob.find_elements(By.CSS_SELECTOR, ".pointer"), [])

    def test_closing_the_page_removes_its_pointer(self):
        self.move_over("face", 0.4, 0.6).perform()
        self.wait_pointer(lambda p: p["view"] == "face", "no pointer over the face")
        self.alice.get("about:blank")
        wait_for(self.bob, lambda d: info(d)["pointers"] == [], 5, "alice's page closed but her pointer stayed")
        self.assertEqual(self.bob.find_elements(By.CSS_SELECTOR, ".pointer"), [])
        wait_for(self.bob, lambda d: "alice" not in info(d)["presence"])
        # (/healthz, visited to store the name, has no favicon.)
        errors = [e for e in support.console_errors(self.bob) if "favicon.ico" not in e["message"]]
        self.assertEqual(errors, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
