"""Helpers for the browser tests: a real happyserver on a free port with its
own config and data directory, and headless Chromium sessions driven by
Selenium (desktop, or a phone with touch and devicePixelRatio 3)."""

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.support.ui import WebDriverWait

REPO = Path(__file__).resolve().parents[2]
SERVER_BINARY = Path(os.environ.get("HAPPY_SERVER", REPO / ".build" / "debug" / "happyserver"))
CLIENT_BINARY = Path(os.environ.get("HAPPY_CLIENT", REPO / ".build" / "debug" / "happyclient"))
CHROMIUM = os.environ.get("HAPPY_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("HAPPY_CHROMEDRIVER", shutil.which("chromedriver") or "/usr/bin/chromedriver")
SHOTS = Path(os.environ.get("HAPPY_SHOTS", "/tmp/page-shots"))


class Server:
    """happyserver with persistence on, in a temporary directory; restartable on the same port and data."""

    def __init__(self, settings=None):
        self.directory = Path(tempfile.mkdtemp(prefix="happy-browser-"))
        self.config_path = self.directory / "config.json"
        config = {
            "port": 0,
            "webRoot": str(REPO / "web"),
            "dataDir": str(self.directory / "data"),
            "persistence": {"enabled": True, "fsync": False},
            "log": {"level": "info", "format": "text"},
        }
        settings = dict(settings or {})
        # Every browser and helper of a test asks from 127.0.0.1: the page's files, frames of up to two million
        # pixels and history, over and over, pay from one bucket. Generous HTTP limits, unless a test sets them.
        config["limits"] = {"httpPerSecond": 1000, "httpBurst": 2000, **settings.pop("limits", {})}
        config.update(settings)
        self.config_path.write_text(json.dumps(config))
        self.port = 0
        self.process = None
        self.log_lines = []

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def operator_key(self):
        """The key of the operator API, made by the server on its first start in its data directory
        (kept with auth.secret too, where admin tokens take its place, for a reload that clears the secret)."""
        path = Path(json.loads(self.config_path.read_text())["dataDir"]) / "operator.key"
        return path.read_text().strip() if path.exists() else None

    def admin_url(self, settings="", key=None):
        """The inspector's address with the operator key (or `key`) in its fragment, before `settings`
        (`room=R&limit=N`)."""
        fragment = "&".join(part for part in (f"key={key or self.operator_key}", settings.lstrip("#")) if part)
        return f"{self.base}/admin#{fragment}"

    def start(self, timeout=20):
        arguments = [str(SERVER_BINARY), "--config", str(self.config_path)]
        if self.port:
            arguments += ["--port", str(self.port)]
        self.process = subprocess.Popen(arguments, cwd=self.directory, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        listening = threading.Event()

        def read(process):
            for line in process.stdout:
                self.log_lines.append(line.rstrip())
                match = re.search(r"listening.*port=(\d+)", line)
                if match:
                    self.port = int(match.group(1))
                    listening.set()

        self.reader = threading.Thread(target=read, args=(self.process,), daemon=True)
        self.reader.start()
        deadline = time.time() + timeout
        while time.time() < deadline and self.process.poll() is None:
            if listening.wait(0.05):
                return self
        raise RuntimeError("happyserver did not start:\n" + "\n".join(self.log_lines[-30:]))

    def serving_pids(self):
        """The happyservers running on this config: the one started here, or those that took over from it."""
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
                zombie = "State:\tZ" in (entry / "status").read_text()
            except OSError:
                continue
            if str(self.config_path).encode() in command and not zombie:
                pids.append(int(entry.name))
        return pids

    def upgrade(self, timeout=30):
        """SIGUSR2, as `systemctl kill --signal=SIGUSR2` would: waits until a new process alone serves."""
        [old] = self.serving_pids()
        os.kill(old, signal.SIGUSR2)
        deadline = time.time() + timeout
        while time.time() < deadline:
            pids = self.serving_pids()
            if len(pids) == 1 and pids[0] != old:
                return pids[0]
            time.sleep(0.02)
        raise RuntimeError("the upgrade did not complete:\n" + "\n".join(self.log_lines[-30:]))

    def stop(self):
        """SIGTERM, as a deploy would; waits for the process (and any that took over from it)."""
        for successor in self.serving_pids():
            if self.process is None or successor != self.process.pid:
                os.kill(successor, signal.SIGTERM)
        deadline = time.time() + 10
        while time.time() < deadline and any(pid != getattr(self.process, "pid", None) for pid in self.serving_pids()):
            time.sleep(0.02)
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process:
            self.reader.join(5)
            self.process.stdout.close()

    def close(self):
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    # HTTP API

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=10) as response:
            return response.read()

    def state(self, room):
        return json.loads(self.get(f"/api/state?room={room}"))

    def intent(self, room, body, name="tester"):
        request = urllib.request.Request(f"{self.base}/api/intent?room={room}", data=json.dumps(body).encode(),
                                         headers={"X-Happy-Name": name, "Content-Type": "application/json"},
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise AssertionError(f"intent {body} refused: {error.code} {error.read().decode()}") from None


def browser(phone=False, width=1280, height=800):
    """A headless Chromium session; `phone` emulates a 390×844 touch screen at devicePixelRatio 3."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--hide-scrollbars", "--force-color-profile=srgb", "--disable-extensions",
                     "--no-first-run", "--disable-background-timer-throttling",
                     "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"):
        options.add_argument(argument)
    if phone:
        options.add_experimental_option("mobileEmulation", {
            "deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 3.0, "touch": True},
            "userAgent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 "
                         "(KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36",
        })
    else:
        options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    if not phone:
        # --window-size sizes the window; make the viewport itself the asked size.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    return driver


def wait_for(driver, predicate, timeout=10, message=""):
    """Waits until predicate(driver) is truthy and returns it."""
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: predicate(d), message)


def info(driver):
    return driver.execute_script("return window.happy && window.happy.info ? window.happy.info() : null")


def log_lines(driver):
    """The event log's lines as written, oldest first."""
    return driver.execute_script("return [...document.querySelectorAll('#log li')].map((item) => item.textContent)")


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


class Writers:
    """Clients of a room over WebSocket that send intents at a steady rate each (cycling through
    `actions`) until stopped, and read whatever the server sends them; they are in the room's
    presence like anyone else."""

    DRAGON = ({"action": "dragon.forward"}, {"action": "dragon.forward"}, {"action": "dragon.back"})

    def __init__(self, server, room, count, per_second=10, actions=DRAGON, name="writer"):
        import websocket  # websocket-client, which Selenium depends on

        self.actions = actions
        self.interval = 1 / per_second
        self.stopping = threading.Event()
        self.sockets = []
        for index in range(count):
            socket = websocket.create_connection(f"ws://127.0.0.1:{server.port}/ws?room={room}&name={name}{index + 1}",
                                                 subprotocols=["happy.v1"], timeout=10)
            welcome = json.loads(socket.recv())
            assert welcome["type"] == "welcome", welcome
            socket.settimeout(None)
            self.sockets.append(socket)
        self.readers = [threading.Thread(target=self.read, args=(socket,), daemon=True) for socket in self.sockets]
        for reader in self.readers:
            reader.start()
        self.senders = []

    def start(self):
        self.stopping.clear()
        self.senders = [threading.Thread(target=self.send, args=(index, socket), daemon=True)
                        for index, socket in enumerate(self.sockets)]
        for sender in self.senders:
            sender.start()
        return self

    def send(self, index, socket):
        due = time.monotonic() + index * self.interval / len(self.sockets)
        count = 0
        while not self.stopping.is_set():
            intent = dict(self.actions[(count + index) % len(self.actions)], type="intent", id=f"w{count}")
            try:
                socket.send(json.dumps(intent))
            except Exception:
                return
            count += 1
            due += self.interval
            self.stopping.wait(max(0, due - time.monotonic()))

    @staticmethod
    def read(socket):
        try:
            while socket.recv():
                pass
        except Exception:
            return

    def stop(self):
        """Stops sending; the clients stay in the room."""
        self.stopping.set()
        for sender in self.senders:
            sender.join(5)

    def close(self):
        self.stop()
        for socket in self.sockets:
            try:
                socket.close()
            except Exception:
                pass


def settled_seq(server, room, quiet=0.5, timeout=20):
    """The room's seq once it has not moved for `quiet` seconds."""
    deadline = time.time() + timeout
    seq = server.state(room)["seq"]
    while time.time() < deadline:
        time.sleep(quiet)
        now = server.state(room)["seq"]
        if now == seq:
            return seq
        seq = now
    raise AssertionError(f"room {room} kept moving for {timeout} s")


# The client module (/js/happy-client.js) in a page of the server: window.clients[key] is a client and
# window.statuses[key] every status it reported; window.openedSockets counts the sockets the page opened.
MODULE_CLIENTS = """
const done = arguments[arguments.length - 1];
const [specs] = arguments;
const load = window.clientModule ? Promise.resolve(window.clientModule) : (() => {
  const NativeWebSocket = window.WebSocket;
  window.openedSockets = [];
  window.WebSocket = class extends NativeWebSocket {
    constructor(...args) { super(...args); window.openedSockets.push(args[0]); }
  };
  return import('/js/happy-client.js');
})();
load.then((module) => {
  window.clientModule = module;
  window.clients ??= {};
  window.statuses ??= {};
  const ready = specs.map(({ key, options }) => {
    const client = module.connect(options);
    window.clients[key] = client;
    window.statuses[key] = [];
    client.on('status', (status) => window.statuses[key].push(status));
    return client.ready();
  });
  return Promise.all(ready);
}).then(() => done(true), (error) => done(String(error)));
"""


def open_module_clients(driver, server, specs):
    """Opens module clients on a page of `server`: specs are (key, options) pairs; waits for their welcomes."""
    if not driver.current_url.startswith(server.base):
        driver.get(server.base + "/healthz")
    driver.set_script_timeout(30)
    loaded = driver.execute_async_script(MODULE_CLIENTS, [{"key": key, "options": options} for key, options in specs])
    assert loaded is True, f"the module clients did not connect: {loaded}"


def count_sockets(driver):
    """Makes every page this driver opens from now on count the WebSockets it opens in window.openedSockets."""
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.openedSockets = [];
        const NativeWebSocket = window.WebSocket;
        window.WebSocket = class extends NativeWebSocket {
          constructor(...args) { super(...args); window.openedSockets.push(args[0]); }
        };"""})


def operator(server, method, path, body=None, token=None):
    """An operator API request with `token`, by default the server's operator key: (status, JSON answer).
    `token=""` sends none."""
    headers = {"Content-Type": "application/json"}
    if token is None:
        token = server.operator_key
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.base + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def mint_token(secret, role, subject="tester"):
    """A token the server accepts, made by `happyserver token`."""
    made = subprocess.run([str(SERVER_BINARY), "token", "--secret", secret, "--sub", subject, "--role", role],
                          capture_output=True, text=True, timeout=20, check=True)
    return made.stdout.strip()


def save_shot(driver, name, full=False):
    """A screenshot in SHOTS (`name`.png); `full` takes the whole page, beyond the window."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    if full:
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"captureBeyondViewport": True, "format": "png"})
        path.write_bytes(base64.b64decode(shot["data"]))
    else:
        driver.save_screenshot(str(path))
    return path


def until(driver, predicate, timeout, describe):
    """Waits until predicate(driver) is truthy and returns it; on timeout fails with describe(), said then."""
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: predicate(d))
    except TimeoutException:
        raise AssertionError(f"not within {timeout} s: {describe()}") from None
