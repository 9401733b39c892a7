"""Screenshots of the page in each of its states, at desktop and phone sizes,
for a person to look at (not a test: it asserts only that each state was
reached). Run it with `make shots`; the PNGs go to $HAPPY_SHOTS
(default /tmp/page-shots), named <size>-<n>-<state>.png.

States: live (two people, a few events), history (the bar on an earlier
event), replaying, disconnected (the server stopped), refused (a room name
the server refuses), a new room, an address the page does not understand,
and a crowd room delivering ticks."""

import sys
import time

from selenium.webdriver.common.by import By

import support
from support import info, save_shot, until

ROOM = "tour"


def named(server, phone, name):
    driver = support.browser(phone=phone)
    driver.get(server.base + "/healthz")
    driver.execute_script("localStorage.setItem('happy.name', arguments[0])", name)
    return driver


def phase_is(driver, phase, timeout=20):
    until(driver, lambda d: (info(d) or {}).get("connection") == phase, timeout,
          lambda: f"the page is not {phase}: {(info(driver) or {}).get('connection')}")


def live_room(server):
    for action in ({"action": "face.setHappiness", "value": 80}, {"action": "dragon.forward"},
                   {"action": "heart.setRate", "value": 0.8}, {"action": "dragon.forward"},
                   {"action": "face.setHappiness", "value": 35}):
        server.intent(ROOM, action, name="carol")
        time.sleep(1)  # a replay at 1× takes as long: it lasts long enough to be seen


def tour(size, phone, server, shots):
    driver = named(server, phone, "alice")
    friend = named(server, False, "bob")
    try:
        friend.get(f"{server.base}/?room={ROOM}")
        driver.get(f"{server.base}/?room={ROOM}")
        phase_is(driver, "connected")
        until(driver, lambda d: info(d)["seq"] >= 5, 10, lambda: f"seq {info(driver)['seq']}")
        shots.append(save_shot(driver, f"{size}-1-live", full=True))

        driver.get(f"{server.base}/?room={ROOM}&seq=2")
        until(driver, lambda d: ((info(d) or {}).get("history") or {}).get("shown") == 2, 15,
              lambda: f"history {(info(driver) or {}).get('history')}")
        shots.append(save_shot(driver, f"{size}-2-history", full=True))

        driver.find_element(By.ID, "history-play").click()
        until(driver, lambda d: (info(d)["history"] or {}).get("playing"), 10, lambda: "not replaying")
        shots.append(save_shot(driver, f"{size}-3-replaying", full=True))

        driver.get(f"{server.base}/?room={ROOM}")
        phase_is(driver, "connected")
        server.stop()
        until(driver, lambda d: (info(d) or {}).get("connection") not in ("connected", "connecting"), 20,
              lambda: f"still {(info(driver) or {}).get('connection')}")
        time.sleep(0.5)  # let the dimming transition finish
        shots.append(save_shot(driver, f"{size}-4-disconnected", full=True))
        server.start()
        phase_is(driver, "connected", 30)

        driver.get(f"{server.base}/?room=no%20spaces!")
        phase_is(driver, "refused")
        shots.append(save_shot(driver, f"{size}-5-refused", full=True))

        driver.get(f"{server.base}/?room=tour-new-{size}")
        phase_is(driver, "connected")
        shots.append(save_shot(driver, f"{size}-6-new-room", full=True))

        driver.get(f"{server.base}/?room={ROOM}&seq=abc&width=5")
        phase_is(driver, "connected")
        shots.append(save_shot(driver, f"{size}-7-address-not-understood", full=True))

    finally:
        driver.quit()
        friend.quit()


def crowd(size, phone, shots):
    """A room delivering ticks (its own server, with crowd.mode tick), people pressing the dragon's buttons."""
    server = support.Server({"crowd": {"mode": "tick"}}).start()
    driver = named(server, phone, "alice")
    try:
        driver.get(f"{server.base}/?room={ROOM}")
        phase_is(driver, "connected")
        for index in range(12):
            server.intent(ROOM, {"action": "dragon.forward" if index % 3 else "dragon.back"}, name=f"p{index % 5}")
        until(driver, lambda d: info(d)["crowd"]["shown"], 10, lambda: f"crowd {info(driver)['crowd']}")
        shots.append(save_shot(driver, f"{size}-8-crowd", full=True))
    finally:
        driver.quit()
        server.close()


def main():
    shots = []
    for size, phone in (("desktop", False), ("phone", True)):
        server = support.Server().start()
        try:
            live_room(server)
            tour(size, phone, server, shots)
        finally:
            server.close()
        crowd(size, phone, shots)
    for path in shots:
        print(path)
    print(f"page tour: {len(shots)} screenshots in {support.SHOTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
