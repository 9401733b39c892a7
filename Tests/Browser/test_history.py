"""The history bar (PROTOCOL.md section 11) on the page: dragging its slider
back shows the room as it was at that seq (the three canvases, the dragon's
label, the log, and a scene canvas that matches the server's
/frame/scene.png?seq=N); Live returns to the present with the events that
came meanwhile, counted on its button; ?seq=N in the address opens a moment;
a replay keeps the events' own pauses (a second at most) and reaches the
present."""

import io
import json
import time
import unittest
import urllib.error
import urllib.parse

from PIL import Image
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import support
import view_diff
from support import info, wait_for
from test_page import count_face_ink, decode_data_url, new_room, open_room, status_text

# The first moment the tests look at: every view away from its defaults, the dragon at (40, 10).
EARLIER = [{"action": "face.setHappiness", "value": 85}, {"action": "face.setScale", "value": 0.75},
           {"action": "heart.setRate", "value": 0.35},
           {"action": "heart.setStyle", "fillColor": "#2266dd", "strokeColor": "#aa0000", "lineWidth": 4},
           {"action": "dragon.forward"}, {"action": "dragon.forward"}, {"action": "dragon.forward"}]
# What follows it: every view changes again, and the dragon hides.
LATER = [{"action": "face.setHappiness", "value": 10}, {"action": "heart.setRate", "value": 0.9},
         {"action": "dragon.back"}, {"action": "dragon.back"}, {"action": "dragon.toggleHidden"}]

CANVASES = ("face", "heart", "dragon")
CANVAS_IMAGE = "return document.getElementById(arguments[0]).toDataURL('image/png')"

# A page-side recorder of the bar while a replay runs: the slider and the moment shown at each
# redraw of the bar (its position text changes with every step), with the time.
RECORD_SLIDER = """
window.sliderTrack = [];
const slider = document.getElementById('history-slider');
window.sliderRecorder = new MutationObserver(() => {
  const h = window.happy.info().history;
  window.sliderTrack.push({ slider: Number(slider.value), viewing: h.viewing, shown: h.shown, t: performance.now() });
});
window.sliderRecorder.observe(document.getElementById('history-position'), { childList: true, characterData: true, subtree: true });"""


def history(driver):
    return info(driver)["history"]


def local_time(ms):
    """An event's time of day as the page shows it (the browser and this process share the time zone)."""
    return time.strftime("%H:%M:%S", time.localtime(ms / 1000))


def images_equal(a, b):
    """Pixel for pixel, alpha included."""
    a, b = a.convert("RGBA"), b.convert("RGBA")
    return a.size == b.size and a.tobytes() == b.tobytes()


class HistoryBarOnAPage(unittest.TestCase):
    """A server and one page on it, named 'painter'; a new room for each test."""

    # The default durable store (SQLite), as `make run` starts the server.
    SETTINGS = {}

    @classmethod
    def setUpClass(cls):
        cls.server = support.Server(cls.SETTINGS).start()
        cls.driver = support.browser()
        cls.driver.get(cls.server.base + "/")
        cls.driver.execute_script("localStorage.setItem('happy.name', 'painter')")

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.close()

    # The server

    def make(self, room, intents, pause=0.0):
        for body in intents:
            self.server.intent(room, body, name="carol")
            time.sleep(pause)
        return self.server.state(room)["seq"]

    def past(self, room, seq):
        return json.loads(self.server.get(f"/api/state?room={room}&seq={seq}"))

    def frame(self, room, width, height, seq=None):
        query = f"room={room}&w={width}&h={height}&phase=10" + ("" if seq is None else f"&seq={seq}")
        return Image.open(io.BytesIO(self.server.get(f"/frame/scene.png?{query}")))

    # The page

    def open_live(self, room):
        open_room(self.driver, self.server, room, "&phase=10")
        current = self.server.state(room)
        wait_for(self.driver, lambda d: info(d)["state"] == current["state"]
                 and (history(d) or {}).get("latest") == current["seq"], message=str(info(self.driver)))

    def canvases(self):
        return {view: decode_data_url(self.driver.execute_script(CANVAS_IMAGE, view)) for view in CANVASES}

    def slider_value(self):
        return int(self.driver.find_element(By.ID, "history-slider").get_attribute("value"))

    def drag_slider_to(self, seq):
        """Drags the thumb from where it is towards `seq`, then steps with the arrow keys to it exactly."""
        slider = self.driver.find_element(By.ID, "history-slider")
        low, high = int(slider.get_attribute("min")), int(slider.get_attribute("max"))
        width = slider.size["width"]

        def thumb(value):
            # Chromium's thumb is 16 px wide; its centre travels width − 16 pixels over the range.
            return round(8 + (width - 16) * (value - low) / (high - low) - width / 2)

        start = thumb(self.slider_value())
        ActionChains(self.driver).move_to_element_with_offset(slider, start, 0).click_and_hold() \
            .move_by_offset((thumb(seq) - start) // 2, 0).pause(0.05) \
            .move_by_offset(thumb(seq) - start - (thumb(seq) - start) // 2, 0).pause(0.05).release().perform()
        for _ in range(high - low + 1):
            value = self.slider_value()
            if value == seq:
                break
            slider.send_keys(Keys.ARROW_LEFT if value > seq else Keys.ARROW_RIGHT)
        self.assertEqual(self.slider_value(), seq)

    def wait_showing(self, seq, room):
        expected = self.past(room, seq)
        wait_for(self.driver, lambda d: history(d)["shown"] == seq and history(d)["viewing"] == seq
                 and info(d)["state"] == expected["state"], message=str(history(self.driver)))
        return expected

    def past_time(self, room, seq):
        """The time of event `seq`, from the server's history."""
        events = json.loads(self.server.get(f"/api/history?room={room}&since={seq - 1}&limit=1"))["events"]
        return events[0]["time"]

    def address_seq(self):
        query = urllib.parse.parse_qs(self.driver.execute_script("return location.search.slice(1)"))
        return query.get("seq", [None])[0]

    def scene_canvas(self):
        """The page's own scene canvas (shown beside the server's frame), once it has drawn the face."""
        def drawn(driver):
            image = decode_data_url(driver.execute_script(CANVAS_IMAGE, "scene"))
            face = view_diff.boxes(*image.size)["face"]
            return image if count_face_ink(view_diff.on_white(image), face) > 100 else None
        return wait_for(self.driver, drawn, message="the scene canvas was not drawn")

    # The tests

    def test_the_slider_shows_an_earlier_moment_and_live_brings_back_what_came_meanwhile(self):
        support.console_errors(self.driver)  # Reading the browser's log empties it: only this test's errors count.
        room = new_room("slider")
        earlier = self.make(room, EARLIER)
        self.open_live(room)
        self.driver.find_element(By.ID, "show-frame").click()
        self.scene_canvas()
        # The page at seq 7, live: what the slider must bring back.
        time.sleep(0.2)
        drawn_then, label_then = self.canvases(), status_text(self.driver)
        self.assertEqual(label_then, "carol: forward, (x,y) = (40, 10)")

        latest = self.make(room, LATER)
        current = self.server.state(room)
        wait_for(self.driver, lambda d: info(d)["state"] == current["state"], message=str(info(self.driver)["state"]))
        self.assertEqual(status_text(self.driver), "carol: hide")
        wait_for(self.driver, lambda d: not any(images_equal(drawn_then[v], image) for v, image in self.canvases().items()),
                 message="every view looks different now")

        self.drag_slider_to(earlier)
        past = self.wait_showing(earlier, room)
        self.assertEqual(past["dragonStatus"], "forward, (x,y) = (40, 10)")
        wait_for(self.driver, lambda d: status_text(d) == label_then, message=status_text(self.driver))
        wait_for(self.driver, lambda d: all(images_equal(drawn_then[v], image) for v, image in self.canvases().items()),
                 message="the canvases do not show seq 7 as they did live")
        position = f"event {earlier} of {latest} · {local_time(self.past_time(room, earlier))}"
        wait_for(self.driver, lambda d: d.find_element(By.ID, "history-position").text == position,
                 message=self.driver.find_element(By.ID, "history-position").text)
        self.assertEqual(self.driver.find_element(By.ID, "log-mark").text, f"Viewing {position}")
        log = support.log_lines(self.driver)
        self.assertTrue(log[-1].endswith(" #7 carol  dragon (30, 10) → (40, 10)  forwardButtonClicked:"), log)
        self.assertNotIn("happiness 85 → 10", "\n".join(log))
        self.assertEqual(self.address_seq(), str(earlier))

        # The scene canvas against the server's frame of that moment, view by view.
        wait_for(self.driver, lambda d: view_diff.over_bounds(view_diff.differences(
            self.scene_canvas(), self.frame(room, *self.scene_canvas().size, seq=earlier))) == [],
            message="the scene canvas does not match the frame at seq 7")
        page = self.scene_canvas()
        then = view_diff.differences(page, self.frame(room, page.width, page.height, seq=earlier))
        now = view_diff.differences(page, self.frame(room, page.width, page.height))
        print(f"\n  scene canvas {page.width}x{page.height} at seq {earlier}: {view_diff.describe(then)}; "
              f"against the present: {view_diff.describe(now)}", end="")
        self.assertEqual(view_diff.over_bounds(then), [], view_diff.describe(then))
        self.assertEqual(view_diff.over_bounds(now), list(view_diff.VIEWS), "the present differs in every view")
        wait_for(self.driver, lambda d: f"seq={earlier}" in d.find_element(By.ID, "frame-image").get_attribute("src"))

        # An event while looking at the past: counted, not shown, not lost.
        self.server.intent(room, {"action": "face.setHappiness", "value": 33}, name="carol")
        wait_for(self.driver, lambda d: d.find_element(By.ID, "history-live").text == "Live (1)",
                 message=self.driver.find_element(By.ID, "history-live").text)
        self.assertEqual(history(self.driver)["liveCount"], 1)
        self.assertEqual(history(self.driver)["latest"], latest + 1)
        self.assertEqual(info(self.driver)["state"], past["state"])
        self.assertTrue(self.driver.find_element(By.ID, "history-position").text.startswith(f"event {earlier} of {latest + 1} · "))

        self.driver.find_element(By.ID, "history-live").click()
        now = self.server.state(room)
        wait_for(self.driver, lambda d: history(d)["viewing"] is None and info(d)["state"] == now["state"])
        self.assertEqual(now["state"]["face"]["happiness"], 33)
        self.assertEqual(self.driver.find_element(By.ID, "history-live").text, "Live")
        self.assertEqual(history(self.driver)["liveCount"], 0)
        self.assertEqual(status_text(self.driver), "carol: hide")
        log = "\n".join(support.log_lines(self.driver))
        self.assertIn("carol  happiness 10 → 33  faceView:didChangeHappiness:", log)
        self.assertIn("happiness 85 → 10", log)
        self.assertFalse(self.driver.find_element(By.ID, "log-mark").is_displayed())
        wait_for(self.driver, lambda d: self.address_seq() is None, message="Live leaves ?seq= in the address")
        self.assertEqual(self.slider_value(), latest + 1)
        self.assertEqual(support.console_errors(self.driver), [])

    def test_a_gesture_on_the_views_returns_to_the_present(self):
        room = new_room("gesture")
        self.make(room, EARLIER)
        self.open_live(room)
        self.drag_slider_to(2)
        self.wait_showing(2, room)
        ActionChains(self.driver).move_to_element(self.driver.find_element(By.ID, "face")).click().perform()
        wait_for(self.driver, lambda d: history(d)["viewing"] is None, message=str(history(self.driver)))
        self.assertEqual(info(self.driver)["state"], self.server.state(room)["state"])

        # A dragon button pressed in the past acts on the present dragon.
        self.drag_slider_to(4)
        self.wait_showing(4, room)
        self.assertEqual(info(self.driver)["state"]["dragon"]["x"], 10)
        self.driver.find_element(By.ID, "dragon-forward").click()
        wait_for(self.driver, lambda d: history(d)["viewing"] is None and info(d)["state"]["dragon"]["x"] == 50,
                 message=str(info(self.driver)["state"]["dragon"]))
        self.assertEqual(status_text(self.driver), "painter: forward, (x,y) = (50, 10)")

    def test_the_address_opens_the_room_at_a_seq(self):
        room = new_room("address")
        self.make(room, EARLIER + LATER)
        open_room(self.driver, self.server, room, "&seq=5&phase=10")
        past = self.wait_showing(5, room)
        self.assertEqual(past["state"]["dragon"]["x"], 20)
        self.assertEqual(status_text(self.driver), "carol: forward, (x,y) = (20, 10)")
        self.assertEqual(self.slider_value(), 5)
        self.assertEqual(self.driver.find_element(By.ID, "history-position").text,
                         f"event 5 of 12 · {local_time(self.past_time(room, 5))}")
        self.assertEqual(self.address_seq(), "5")

        # Seq 0: the room before its first event, with the art's first label.
        open_room(self.driver, self.server, room, "&seq=0")
        self.wait_showing(0, room)
        self.assertEqual(status_text(self.driver), "dragon's status")
        self.assertEqual(self.driver.find_element(By.ID, "log").text, "")

        # The present seq opens as a moment too; a seq beyond it opens the present.
        open_room(self.driver, self.server, room, "&seq=12")
        self.wait_showing(12, room)
        open_room(self.driver, self.server, room, "&seq=99")
        wait_for(self.driver, lambda d: history(d)["viewing"] is None and history(d)["latest"] == 12,
                 message=str(history(self.driver)))
        wait_for(self.driver, lambda d: self.address_seq() is None)

    def test_a_seq_no_longer_held_opens_the_oldest_moment_held(self):
        server = support.Server({"persistence": {"enabled": False, "historyLimit": 4}}).start()
        try:
            room = new_room("gone")
            for body in EARLIER:
                server.intent(room, body, name="carol")
            self.driver.get(server.base + "/healthz")
            self.driver.execute_script("localStorage.setItem('happy.name', 'painter')")
            open_room(self.driver, server, room, "&seq=1")
            wait_for(self.driver, lambda d: history(d)["shown"] == 3 and history(d)["first"] == 4,
                     message=str(history(self.driver)))
            slider = self.driver.find_element(By.ID, "history-slider")
            self.assertEqual((slider.get_attribute("min"), slider.get_attribute("max")), ("3", "7"))
            self.assertEqual(info(self.driver)["state"], json.loads(server.get(f"/api/state?room={room}&seq=3"))["state"])
            wait_for(self.driver, lambda d: self.address_seq() == "3")
        finally:
            server.close()

    def test_replay_keeps_the_pauses_up_to_a_second_and_reaches_the_present(self):
        # The replay waits as the room did: 0.3 s, 0.3 s, then a 2.5 s pause shortened to 1 s.
        room = new_room("replay")
        self.make(room, [{"action": "face.setHappiness", "value": 60}, {"action": "face.setHappiness", "value": 70},
                         {"action": "face.setHappiness", "value": 80}], pause=0.3)
        time.sleep(2.2)
        self.make(room, [{"action": "dragon.forward"}, {"action": "heart.setRate", "value": 0.8},
                         {"action": "dragon.toggleHidden"}, {"action": "face.setHappiness", "value": 20}], pause=0.2)
        events = json.loads(self.server.get(f"/api/history?room={room}"))["events"]
        times = {event["seq"]: event["time"] / 1000 for event in events}

        open_room(self.driver, self.server, room, "&seq=0&phase=10")
        self.wait_showing(0, room)
        self.driver.execute_script(RECORD_SLIDER)
        self.driver.find_element(By.CSS_SELECTOR, '#history-speeds [data-speed="1"]').click()
        self.driver.find_element(By.ID, "history-play").click()
        wait_for(self.driver, lambda d: history(d)["shown"] == 4, 8, message=str(history(self.driver)))
        self.assertTrue(history(self.driver)["playing"])
        self.assertEqual(self.driver.find_element(By.ID, "history-play").get_attribute("aria-label"), "Pause the replay")
        self.assertEqual(status_text(self.driver), "carol: forward, (x,y) = (20, 10)")
        faster_at = self.driver.execute_script("return performance.now()") / 1000
        self.driver.find_element(By.CSS_SELECTOR, '#history-speeds [data-speed="16"]').click()
        now = self.server.state(room)
        wait_for(self.driver, lambda d: history(d)["viewing"] is None, 5, message=str(history(self.driver)))
        self.assertEqual(info(self.driver)["state"], now["state"])
        self.assertFalse(history(self.driver)["playing"])
        wait_for(self.driver, lambda d: self.address_seq() is None)

        track = self.driver.execute_script("window.sliderRecorder.disconnect(); return window.sliderTrack")
        shown_at = {}
        for point in track:
            if point["viewing"] is not None:
                self.assertEqual(point["slider"], point["viewing"], "the slider follows the replay")
            if point["shown"] is not None:
                shown_at.setdefault(point["shown"], point["t"] / 1000)
        self.assertEqual(sorted(shown_at), list(range(0, 8)), track)
        self.assertEqual([p["viewing"] for p in track if p["viewing"] is not None],
                         sorted(p["viewing"] for p in track if p["viewing"] is not None), "forward only")
        gaps = {seq: shown_at[seq] - shown_at[seq - 1] for seq in range(2, 8)}
        print(f"\n  room gaps {[round(times[s] - times[s - 1], 3) for s in range(2, 8)]} s, "
              f"replayed {[round(gaps[s], 3) for s in range(2, 8)]} s", end="")
        # At 1×: the room's own gaps, and the long pause cut to a second (timers may run late, never early).
        for seq in (2, 3):
            self.assertGreater(gaps[seq], times[seq] - times[seq - 1] - 0.03)
            self.assertLess(gaps[seq], times[seq] - times[seq - 1] + 0.8)
        self.assertGreater(times[4] - times[3], 2)
        self.assertGreater(gaps[4], 0.97)
        self.assertLess(gaps[4], times[4] - times[3] - 0.5, "the long pause is cut short")
        # At 16× from the click on, the wait under way included: 0.2 s becomes 12.5 ms.
        self.assertLess(gaps[6], 0.15)
        self.assertLess(gaps[7], 0.15)
        self.assertLess(shown_at[7] - faster_at, 3 * 0.2 / 16 + 1.0)

    def test_the_bar_names_the_event_and_its_time_and_keeps_its_layout(self):
        room = new_room("words")
        latest = self.make(room, EARLIER + LATER)
        times = {e["seq"]: e["time"] for e in json.loads(self.server.get(f"/api/history?room={room}"))["events"]}
        self.open_live(room)
        slider = self.driver.find_element(By.ID, "history-slider")
        position = self.driver.find_element(By.ID, "history-position")
        width_live = slider.rect["width"]

        # Live: the replay button says why it does nothing yet.
        play = self.driver.find_element(By.ID, "history-play")
        self.assertEqual(play.get_attribute("aria-disabled"), "true")
        hint = self.driver.find_element(By.ID, "history-hint")
        self.assertTrue(hint.is_displayed(), "the hint shows at Live")
        self.assertEqual(hint.text, "Move the slider back to replay")
        self.assertIn("history-hint", play.get_attribute("aria-describedby").split())
        play.click()
        self.assertFalse(history(self.driver)["playing"])

        self.drag_slider_to(5)
        self.wait_showing(5, room)
        expected = f"event 5 of {latest} · {local_time(times[5])}"
        wait_for(self.driver, lambda d: position.text == expected, message=f"{position.text!r} != {expected!r}")
        self.assertEqual(slider.get_attribute("aria-valuetext"), expected)
        self.assertEqual(self.driver.find_element(By.ID, "log-mark").text, f"Viewing {expected}")
        self.assertFalse(hint.is_displayed(), "no hint once a moment is chosen")
        self.assertEqual(play.get_attribute("aria-disabled"), "false")
        self.assertEqual(slider.rect["width"], width_live, "the slider keeps its width as the text changes")

        self.drag_slider_to(0)
        self.wait_showing(0, room)
        wait_for(self.driver, lambda d: position.text == f"before event 1 of {latest}", message=position.text)
        self.assertEqual(slider.rect["width"], width_live)

    def test_the_replay_pause_rule(self):
        self.open_live(new_room("pauses"))
        pauses = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import('/js/history.js').then(({ replayPause }) => done([
              replayPause(1000, 1300, 1), replayPause(1000, 1300, 4), replayPause(0, 5000, 1),
              replayPause(0, 5000, 16), replayPause(null, 5000, 1), replayPause(2000, 1000, 1)]));""")
        self.assertEqual(pauses, [300, 75, 1000, 62.5, 0, 0])


class HistoryBarOnAPhone(unittest.TestCase):
    """The bar on a 390×844 phone: labelled, its position on one line, the slider's width steady."""

    @classmethod
    def setUpClass(cls):
        cls.server = support.Server().start()
        cls.driver = support.browser(phone=True)
        cls.driver.get(cls.server.base + "/healthz")
        cls.driver.execute_script("localStorage.setItem('happy.name', 'pat')")

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.close()

    def test_the_bar_is_labelled_and_its_position_takes_one_line(self):
        room = new_room("phone")
        for body in EARLIER + LATER:
            self.server.intent(room, body, name="carol")
        open_room(self.driver, self.server, room)
        wait_for(self.driver, lambda d: (history(d) or {}).get("latest") == 12)
        title = self.driver.find_element(By.ID, "history-title")
        self.assertTrue(title.is_displayed() and title.rect["width"] > 20, f"the bar's label: {title.rect}")
        slider = self.driver.find_element(By.ID, "history-slider")
        width_live = slider.rect["width"]
        self.assertTrue(self.driver.find_element(By.ID, "history-hint").is_displayed())

        open_room(self.driver, self.server, room, "&seq=5")
        wait_for(self.driver, lambda d: history(d)["shown"] == 5 and "·" in d.find_element(By.ID, "history-position").text)
        title = self.driver.find_element(By.ID, "history-title")
        slider = self.driver.find_element(By.ID, "history-slider")
        lines = self.driver.execute_script("""
            const p = document.getElementById('history-position');
            return p.getBoundingClientRect().height / parseFloat(getComputedStyle(p).lineHeight);""")
        self.assertLess(lines, 1.5, "the position text takes one line")
        self.assertEqual(slider.rect["width"], width_live, "the slider keeps its width")
        self.assertTrue(title.is_displayed())


if __name__ == "__main__":
    unittest.main(verbosity=2)
