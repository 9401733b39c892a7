"""The client module, /js/happy-client.js, imported by a page of a real happyserver in
headless Chromium: welcome, intents answered by acks or errors, two clients that see
each other, pings, a refused room, live pointers, reconnecting with resume after
the server restarts or the socket drops, a crowd room's ticks, delivery switches
and batched presence, an observer, and an operator's kick or deletion of the
room, after which it does not reconnect."""

import time
import unittest
import uuid
from urllib.parse import parse_qs, urlparse

import support
from support import wait_for
from test_page import join_with_dialog

# Loads the module into the page once, and keeps a record per client of everything it reported.
# The WebSocket constructor is wrapped only to let a test drop a socket from the page side.
INSTALL = """
const done = arguments[arguments.length - 1];
if (window.clientModule) { done(true); return; }
const NativeWebSocket = window.WebSocket;
window.openedSockets = [];
window.WebSocket = class extends NativeWebSocket {
  constructor(...args) { super(...args); window.openedSockets.push(this); }
};
import('/js/happy-client.js').then((module) => {
  window.clientModule = module;
  window.records = {};
  window.openClient = (key, options) => {
    const client = module.connect(options);
    const record = { client, welcomes: [], events: [], states: [], presence: [], resyncs: [], statuses: [],
                     pointers: [], errors: [], ticks: [], deliveries: [] };
    client.on('welcome', (welcome) => record.welcomes.push(welcome));
    client.on('event', (event, { replayed }) => record.events.push({ ...event, replayed }));
    client.on('state', (state, { cause }) => record.states.push({ state, cause }));
    client.on('tick', (tick, { fresh, missed }) => record.ticks.push({ ...tick, fresh, missed,
      line: module.describeTick(tick) }));
    client.on('delivery', (delivery) => record.deliveries.push(delivery));
    client.on('presence', (change) => record.presence.push(change));
    client.on('resync', (resync) => record.resyncs.push(resync));
    client.on('status', (status) => record.statuses.push({ ...status, at: Date.now() }));
    client.on('pointers', (change) => record.pointers.push(change));
    client.on('error', (error) => record.errors.push({ code: error.code, message: error.message }));
    window.records[key] = record;
    return client;
  };
  done(true);
}, (error) => done(String(error)));
"""

# Runs a script body as an async function of `clients` (the page's client objects by key) and
# `args`; resolves with {value} or, when it throws, {error: {name, code, id, action, fromServer, message}}.
RUN = """
const done = arguments[arguments.length - 1];
const [body, args] = arguments;
const clients = Object.fromEntries(Object.entries(window.records).map(([key, r]) => [key, r.client]));
const run = new Function('clients', 'args', 'records', 'module', `return (async () => { ${body} })();`);
run(clients, args, window.records, window.clientModule).then(
  (value) => done({ value: value === undefined ? null : value }),
  (error) => done({ error: { name: error.name, code: error.code ?? null, id: error.id ?? null,
                             action: error.action ?? null, fromServer: error.fromServer ?? null,
                             message: String(error.message) } }));
"""


def new_room(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class PageWithTheModule:
    """One browser page on a server (`SETTINGS`), with the module loaded; each test opens its own
    clients in its own room."""

    SETTINGS = {}

    @classmethod
    def setUpClass(cls):
        cls.server = support.Server(cls.SETTINGS).start()
        cls.driver = support.browser()
        cls.driver.set_script_timeout(60)
        cls.load_module(cls.server)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.close()

    @classmethod
    def load_module(cls, server):
        # Any page of the server will do: the module needs only its origin for /ws.
        cls.driver.get(server.base + "/healthz")
        loaded = cls.driver.execute_async_script(INSTALL)
        assert loaded is True, f"the module did not load: {loaded}"

    def tearDown(self):
        self.driver.execute_script("for (const r of Object.values(window.records || {})) r.client.close();"
                                   "window.records = {};")

    # In the page

    def open_client(self, key, **options):
        self.driver.execute_script("window.openClient(arguments[0], arguments[1])", key, options)

    def run_js(self, body, *args):
        """The value `body` returns, or an AssertionError when it throws."""
        outcome = self.driver.execute_async_script(RUN, body, list(args))
        if "error" in outcome:
            raise AssertionError(f"the page script threw {outcome['error']}")
        return outcome["value"]

    def rejection(self, body, *args):
        """The error `body` throws (as a dict); fails when it does not throw."""
        outcome = self.driver.execute_async_script(RUN, body, list(args))
        self.assertIn("error", outcome, f"expected a rejection, got {outcome}")
        return outcome["error"]

    def record(self, key, field):
        return self.driver.execute_script("return window.records[arguments[0]][arguments[1]]", key, field)

    def client(self, key, expression):
        """`expression` about the client `c`, evaluated in the page."""
        return self.driver.execute_script(f"const c = window.records[arguments[0]].client; return {expression};", key)

    def wait(self, predicate, message, timeout=30):
        return wait_for(self.driver, lambda d: predicate(), timeout, message)

    def connected(self, key, **options):
        self.open_client(key, **options)
        return self.run_js("return await clients[args[0]].ready();", key)


class ClientModuleOnAPage(PageWithTheModule, unittest.TestCase):

    # Tests

    def test_connect_gets_a_welcome_with_the_room_and_its_state(self):
        room = new_room("welcome")
        welcome = self.connected("alice", room=room, name="alice")
        self.assertEqual(welcome["protocol"], 1)
        self.assertEqual(welcome["room"], room)
        self.assertEqual(welcome["you"]["name"], "alice")
        self.assertFalse(welcome["recovered"])
        self.assertEqual(self.client("alice", "c.state"), self.server.state(room)["state"])
        self.assertEqual(self.client("alice", "c.seq"), 0)
        self.assertTrue(self.client("alice", "c.connected"))
        self.assertEqual([s["phase"] for s in self.record("alice", "statuses")], ["connecting", "connected"])
        self.assertEqual(self.record("alice", "presence")[-1]["count"], 1)
        query = parse_qs(urlparse(self.client("alice", "c.url")).query)
        self.assertEqual((query["room"], query["name"]), ([room], ["alice"]))
        self.assertNotIn("since", query, "a first connection does not resume")

    def test_an_intent_resolves_with_its_ack_once_the_state_has_changed(self):
        room = new_room("ack")
        self.connected("alice", room=room, name="alice")
        before = self.client("alice", "c.seq")
        answer = self.run_js("""
            const ack = await clients.alice.intent('face.setHappiness', 80);
            return { ack, happinessAtAck: clients.alice.state.face.happiness };""")
        self.assertEqual(answer["ack"]["seq"], before + 1)
        self.assertEqual(answer["ack"]["result"], "applied")
        self.assertEqual(answer["happinessAtAck"], 80, "the event comes before its ack")
        self.wait(lambda: any(s["cause"] == "event" and s["state"]["face"]["happiness"] == 80
                              for s in self.record("alice", "states")), "no state event with happiness 80")
        event = self.record("alice", "events")[-1]
        self.assertEqual((event["name"], event["seq"], event["replayed"]), ("faceView:didChangeHappiness:", before + 1, False))
        self.assertEqual(self.server.state(room)["state"]["face"]["happiness"], 80)

        # An object gives the intent's fields; a dragon button at the edge is blocked, still acked.
        style = self.run_js("return await clients.alice.intent('heart.setStyle', { fillColor: '#00ff00', lineWidth: 3 });")
        self.assertEqual(style["result"], "applied")
        self.assertEqual(self.client("alice", "c.state.heart.fillColor"), "#00ff00")
        blocked = self.run_js("return await clients.alice.intent('dragon.back');")
        self.assertEqual((blocked["result"], blocked["seq"]), ("blocked", before + 3))

    def test_an_invalid_value_rejects_with_its_code_and_the_connection_stays(self):
        room = new_room("invalid")
        self.connected("alice", room=room, name="alice")
        error = self.rejection("await clients.alice.intent('face.setHappiness', 'very');")
        self.assertEqual(error["code"], "invalid_value")
        self.assertEqual((error["name"], error["action"], error["fromServer"]), ("HappyError", "face.setHappiness", True))
        self.assertTrue(error["id"])
        self.assertEqual(self.rejection("await clients.alice.intent('face.setHappiness', 50.5);")["code"], "invalid_value")
        self.assertEqual(self.rejection("await clients.alice.intent('face.frown');")["code"], "unknown_action")
        self.assertTrue(self.client("alice", "c.connected"))
        self.assertEqual(self.run_js("return (await clients.alice.intent('face.setHappiness', 20)).result;"), "applied")
        self.assertEqual(self.record("alice", "errors"), [], "an error that answers an intent is not reported twice")

    def test_a_burst_over_the_rate_limit_is_rejected_as_rate_limited(self):
        room = new_room("burst")
        self.connected("alice", room=room, name="alice")
        codes = self.run_js("""
            const limits = clients.alice.limits;
            const sends = [];
            for (let i = 0; i < limits.intentBurst + 10; i++) sends.push(clients.alice.intent('dragon.toggleHidden'));
            const outcomes = await Promise.allSettled(sends);
            return outcomes.map((o) => (o.status === 'fulfilled' ? o.value.result : o.reason.code));""")
        self.assertIn("rate_limited", codes)
        self.assertIn("applied", codes)
        self.assertEqual(set(codes), {"applied", "rate_limited"})

    def test_two_clients_see_each_others_presence_and_events(self):
        room = new_room("two")
        self.connected("alice", room=room, name="alice")
        self.connected("bob", room=room, name="bob")
        self.wait(lambda: any(change.get("joined", {}).get("name") == "bob" for change in self.record("alice", "presence")),
                  "alice did not see bob join")
        self.assertEqual(sorted(p["name"] for p in self.client("alice", "c.people")), ["alice", "bob"])
        self.assertEqual(self.client("bob", "c.peopleCount"), 2)

        ack = self.run_js("return await clients.bob.intent('dragon.forward');")
        self.wait(lambda: any(e["seq"] == ack["seq"] for e in self.record("alice", "events")), "alice missed bob's event")
        event = next(e for e in self.record("alice", "events") if e["seq"] == ack["seq"])
        self.assertEqual((event["name"], event["sender"]["name"]), ("forwardButtonClicked:", "bob"))
        self.assertEqual(self.client("alice", "c.state.dragon.x"), 20)

        self.run_js("await clients.alice.intent('heart.setRate', 0.75);")
        self.wait(lambda: self.client("bob", "c.state.heart.rate") == 0.75, "bob did not see alice's heart")

        # A listener removed with the function `on` returned hears nothing more.
        self.run_js("""
            window.heard = 0;
            const stop = clients.bob.on('event', () => { window.heard += 1; });
            await clients.alice.intent('dragon.forward');
            await clients.bob.ping();
            stop();
            await clients.alice.intent('dragon.forward');
            await clients.bob.ping();""")
        self.assertEqual(self.driver.execute_script("return window.heard"), 1)

        self.driver.execute_script("window.records.bob.client.close()")
        self.wait(lambda: any(change.get("left", {}).get("name") == "bob" for change in self.record("alice", "presence")),
                  "alice did not see bob leave")
        self.assertEqual(self.client("alice", "c.peopleCount"), 1)
        self.assertEqual(self.record("bob", "statuses")[-1]["phase"], "closed")
        self.assertEqual(self.rejection("await clients.bob.intent('dragon.forward');")["code"], "closed")

    def test_ping_measures_the_round_trip_and_the_server_clock(self):
        self.connected("alice", room=new_room("ping"), name="alice")
        answer = self.run_js("const ms = await clients.alice.ping(); return { ms, off: clients.alice.serverNow() - Date.now() };")
        self.assertGreaterEqual(answer["ms"], 0)
        self.assertLess(answer["ms"], 5000)
        # The server runs on this machine's clock.
        self.assertLess(abs(answer["off"]), 250)

    def test_a_refused_room_rejects_ready_and_is_not_retried(self):
        self.open_client("bad", room="no spaces!", name="alice")
        error = self.rejection("await clients.bad.ready();")
        self.assertEqual(error["code"], "refused")
        self.assertIn("1008", error["message"])
        status = self.client("bad", "c.status")
        self.assertEqual((status["phase"], status["code"]), ("refused", 1008))
        self.assertIn("room", status["reason"])

    # An operator's closes (PROTOCOL.md section 13): never retried by the client itself.

    def assert_stays_removed(self, key, room, sockets_before):
        """A second, ten times the longest first wait of this client's backoff (0.1 s), without a new socket,
        another status, or anyone in the room."""
        until = time.time() + 1.0
        while time.time() < until:
            self.assertEqual(self.driver.execute_script("return window.openedSockets.length"), sockets_before,
                             "the client opened another socket")
            status, answer = support.operator(self.server, "GET", f"/api/rooms/{room}")
            self.assertEqual(answer.get("connections", []) if status == 200 else [], [], "someone is back in the room")
            time.sleep(0.05)
        self.assertEqual([s["phase"] for s in self.record(key, "statuses")], ["connecting", "connected", "removed"])

    def test_a_kick_ends_the_client_with_the_reason_and_it_does_not_reconnect(self):
        room = new_room("kick")
        self.connected("alice", room=room, name="alice", reconnect={"minDelayMs": 100, "maxDelayMs": 250})
        sockets = self.driver.execute_script("return window.openedSockets.length")
        status, answer = support.operator(self.server, "POST", f"/api/rooms/{room}/kick", {"name": "alice", "reason": "testing"})
        self.assertEqual((status, answer), (200, {"kicked": 1}))
        self.wait(lambda: self.client("alice", "c.status.phase") == "removed", f"not removed: {self.client('alice', 'c.status')}")
        removed = self.client("alice", "c.status")
        self.assertEqual((removed["code"], removed["message"]), (4003, "removed from the room by an operator: testing"))
        error = self.rejection("await clients.alice.ready();")
        self.assertEqual((error["code"], error["message"]), ("removed", "removed from the room by an operator: testing"))
        self.assertFalse(self.client("alice", "c.connected"))
        self.assert_stays_removed("alice", room, sockets)

        # Joining again is the person's choice, and works.
        self.run_js("clients.alice.reconnect(); await clients.alice.ready();")
        self.assertTrue(self.client("alice", "c.connected"))

    def test_a_deleted_room_ends_the_client_with_4004_and_it_does_not_reconnect(self):
        room = new_room("deleted")
        self.connected("bob", room=room, name="bob", reconnect={"minDelayMs": 100, "maxDelayMs": 250})
        sockets = self.driver.execute_script("return window.openedSockets.length")
        self.assertEqual(support.operator(self.server, "DELETE", f"/api/rooms/{room}")[0], 200)
        self.wait(lambda: self.client("bob", "c.status.phase") == "removed", f"not removed: {self.client('bob', 'c.status')}")
        removed = self.client("bob", "c.status")
        self.assertEqual((removed["code"], removed["message"]), (4004, "the room was deleted by an operator"))
        self.assertEqual(self.run_js("return module.describeClose(4004, '');"), "4004 room deleted by an operator")
        self.assert_stays_removed("bob", room, sockets)

    def test_an_observer_hears_the_room_without_being_in_its_presence(self):
        room = new_room("observe")
        self.connected("alice", room=room, name="alice")
        welcome = self.connected("dash", room=room, name="dash", observe=True)
        self.assertEqual((welcome["presenceCount"], welcome["observerCount"]), (1, 1))
        self.assertEqual([p["name"] for p in self.client("dash", "c.people")], ["alice"])
        self.assertEqual(parse_qs(urlparse(self.client("dash", "c.url")).query)["observe"], ["1"])
        self.assertEqual(self.rejection("await clients.dash.intent('dragon.forward');")["code"], "forbidden")
        ack = self.run_js("return await clients.alice.intent('dragon.forward');")
        self.wait(lambda: any(e["seq"] == ack["seq"] for e in self.record("dash", "events")), "the observer missed the event")
        self.assertEqual(self.client("alice", "c.peopleCount"), 1)
        self.assertFalse(any("joined" in change for change in self.record("alice", "presence")), "nobody joined for alice")

    def test_pointers_reach_the_others_and_never_come_back_to_their_sender(self):
        room = new_room("pointer")
        self.connected("alice", room=room, name="alice")
        self.connected("bob", room=room, name="bob")
        self.assertTrue(self.client("bob", "c.supportsPointers"), "the server lists pointers in its welcome")
        self.assertEqual(self.client("bob", "c.pointerIntervalMs"), 50)
        bob = self.client("bob", "c.you.id")

        def seen_by(key):
            return {p["id"]: p for p in self.client(key, "c.pointers")}

        self.run_js("clients.bob.sendPointer('face', 0.25, 0.75, 'drag');")
        self.wait(lambda: bob in seen_by("alice"), "alice does not see bob's pointer")
        self.assertEqual(seen_by("alice")[bob], {"id": bob, "name": "bob", "view": "face", "x": 0.25, "y": 0.75,
                                                 "activity": "drag"})
        change = next(c for c in self.record("alice", "pointers") if c["changed"])
        self.assertEqual([p["id"] for p in change["changed"]], [bob])

        # A newcomer hears the visible pointers with its welcome.
        self.open_client("carol", room=room, name="carol")
        self.wait(lambda: self.record("carol", "pointers"), "carol heard no pointers")
        first = self.record("carol", "pointers")[0]
        self.assertEqual([p["id"] for p in first["pointers"]], [bob])
        self.assertEqual(first["changed"], first["pointers"])

        # Out of range coordinates are brought into 0..1 rather than refused.
        self.run_js("clients.bob.sendPointer('heart', 1.5, -2);")
        self.wait(lambda: seen_by("alice").get(bob, {}).get("view") == "heart", "alice missed bob's move")
        self.assertEqual((seen_by("alice")[bob]["x"], seen_by("alice")[bob]["y"]), (1, 0))
        self.assertEqual(seen_by("alice")[bob]["activity"], "idle")

        self.run_js("clients.bob.hidePointer();")
        self.wait(lambda: bob not in seen_by("alice") and bob not in seen_by("carol"), "bob's pointer is still shown")
        self.assertIn(bob, self.record("alice", "pointers")[-1]["gone"])

        # A client never receives its own pointer; and its pointer is gone when it leaves.
        self.run_js("clients.alice.sendPointer('dragon', 0.5, 0.5, 'press'); clients.bob.sendPointer('face', 0.1, 0.2);")
        self.wait(lambda: bob in seen_by("carol") and len(seen_by("carol")) == 2, "carol does not see both pointers")
        self.assertNotIn(self.client("alice", "c.you.id"), seen_by("alice"))
        self.assertNotIn(bob, seen_by("bob"))
        self.driver.execute_script("window.records.bob.client.close()")
        self.wait(lambda: bob not in seen_by("alice"), "bob left but his pointer stayed")
        self.assertEqual(self.record("bob", "errors") + self.record("alice", "errors"), [])

    def test_a_client_never_hears_of_its_own_pointer(self):
        room = new_room("own-pointer")
        self.connected("alice", room=room, name="alice")
        self.connected("bob", room=room, name="bob")
        alice, bob = self.client("alice", "c.you.id"), self.client("bob", "c.you.id")

        def seen_by(key):
            return {p["id"] for p in self.client(key, "c.pointers")}

        self.run_js("clients.bob.sendPointer('face', 0.3, 0.3);")
        self.wait(lambda: bob in seen_by("alice"), "alice does not see bob's pointer")
        self.run_js("clients.bob.hidePointer();")
        self.wait(lambda: bob not in seen_by("alice"), "bob's pointer is still shown")
        # Then alice's, shown and hidden: by the time bob hears it go, every batch before it reached him.
        self.run_js("clients.alice.sendPointer('heart', 0.5, 0.5);")
        self.wait(lambda: alice in seen_by("bob"), "bob does not see alice's pointer")
        self.run_js("clients.alice.hidePointer();")
        self.wait(lambda: any(alice in change["gone"] for change in self.record("bob", "pointers")), "bob missed alice's hide")

        heard = self.record("bob", "pointers")
        self.assertEqual([change for change in heard if bob in change["gone"]
                          or bob in [p["id"] for p in change["changed"] + change["pointers"]]], [],
                         "bob heard of his own pointer")

    def test_pointers_are_paced_and_the_latest_one_wins(self):
        room = new_room("pace")
        self.connected("alice", room=room, name="alice")
        self.connected("bob", room=room, name="bob")
        bob = self.client("bob", "c.you.id")
        sent = self.run_js("""
            const socket = window.openedSockets.find((s) => s.url === clients.bob.url && s.readyState === 1);
            const send = socket.send.bind(socket);
            const pointers = [];
            socket.send = (text) => {
              const message = JSON.parse(text);
              if (message.type === 'pointer') pointers.push({ ...message, at: performance.now() });
              send(text);
            };
            // Hiding a pointer nobody saw sends nothing.
            clients.bob.hidePointer();
            for (let i = 0; i < 20; i++) clients.bob.sendPointer('face', i / 20, 0.5);
            await new Promise((resolve) => setTimeout(resolve, 300));
            return pointers;""")
        self.assertEqual([p["x"] for p in sent], [0, 0.95], "the first at once, then only the latest")
        self.assertGreaterEqual(sent[1]["at"] - sent[0]["at"], 45)
        self.wait(lambda: [p["x"] for p in self.client("alice", "c.pointers") if p["id"] == bob] == [0.95],
                  "alice does not see the latest position")

    def test_pointers_are_not_sent_to_a_server_without_them(self):
        # A server from before section 10: its welcome has no `pointers`.
        sent = self.run_js("""
            const sent = [];
            class OlderServerSocket {
              constructor(url) {
                this.url = url;
                this.readyState = 0;
                setTimeout(() => {
                  this.readyState = 1;
                  this.onmessage({ data: JSON.stringify({ type: 'welcome', protocol: 1, room: 'old',
                    you: { id: 'c1', name: 'alice', role: 'player' }, epoch: 'e1', seq: 0, state: {},
                    presence: [{ id: 'c1', name: 'alice' }], presenceCount: 1, serverTime: Date.now(),
                    recovered: false, limits: { intentsPerSecond: 60, intentBurst: 120, maxMessageBytes: 4096 } }) });
                }, 0);
              }
              send(text) { sent.push(JSON.parse(text)); }
              close() { this.readyState = 3; }
            }
            const client = module.connect({ url: 'ws://127.0.0.1:9/ws', WebSocket: OlderServerSocket, pingIntervalMs: 0 });
            await client.ready();
            const supports = client.supportsPointers;
            client.sendPointer('face', 0.5, 0.5, 'drag');
            await new Promise((resolve) => setTimeout(resolve, 200));
            client.close();
            return { supports, sent };""")
        self.assertFalse(sent["supports"])
        self.assertEqual(sent["sent"], [])

    def test_events_missed_while_the_socket_was_down_are_replayed_on_resume(self):
        room = new_room("replay")
        # alice waits at least 1.5 s before reconnecting, so bob's intent lands while she is away.
        self.connected("alice", room=room, name="alice", reconnect={"minDelayMs": 3000})
        self.connected("bob", room=room, name="bob")
        self.run_js("await clients.bob.intent('face.setHappiness', 70);")
        self.wait(lambda: self.client("alice", "c.seq") == 1, "alice did not see the first event")

        # An intent in flight when the socket drops is rejected, not sent again.
        lost = self.rejection("""
            const sent = clients.alice.intent('heart.setRate', 0.2);
            const socket = window.openedSockets.find((s) => s.url === clients.alice.url && s.readyState === 1);
            socket.close(4000, 'dropped by the test');
            await sent;""")
        self.assertEqual((lost["code"], lost["action"]), ("connection_lost", "heart.setRate"))
        self.wait(lambda: self.client("alice", "c.status.phase") == "reconnecting", "alice did not notice the drop")
        self.assertEqual(self.rejection("await clients.alice.intent('dragon.forward');")["code"], "not_connected")
        ack = self.run_js("return await clients.bob.intent('dragon.forward');")

        self.wait(lambda: len(self.record("alice", "welcomes")) == 2, "alice did not reconnect")
        welcome = self.record("alice", "welcomes")[1]
        self.assertTrue(welcome["recovered"])
        query = parse_qs(urlparse(self.client("alice", "c.url")).query)
        self.assertEqual((query["since"], query["epoch"]), (["1"], [welcome["epoch"]]))
        self.wait(lambda: self.client("alice", "c.seq") == ack["seq"], "alice did not catch up")
        replayed = [e for e in self.record("alice", "events") if e["replayed"]]
        self.assertIn(("forwardButtonClicked:", "bob"), [(e["name"], e["sender"]["name"]) for e in replayed])
        self.assertEqual(self.client("alice", "c.state"), self.server.state(room)["state"])
        self.assertEqual(self.client("alice", "c.status.phase"), "connected")


class ClientModuleInACrowdRoom(PageWithTheModule, unittest.TestCase):
    """A server whose rooms switch to ticks above a load of 100 deliveries a second and batch the
    joins and leaves of rooms of more than two."""

    SETTINGS = {"crowd": {"mode": "auto", "tickAbove": 100, "presenceBatchAbove": 2}}

    def test_batches_a_switch_and_ticks_keep_the_people_seq_and_state_right(self):
        room = new_room("crowd")
        welcome = self.connected("alice", room=room, name="alice")
        self.assertEqual(self.client("alice", "[c.delivery, c.tickMs]"), ["each", 50])
        writers = support.Writers(self.server, room, 3, per_second=20)
        self.addCleanup(writers.close)
        # From the third client on, the room has more than two: joins come in batches.
        self.wait(lambda: self.client("alice", "c.peopleCount") == 4, "the writers did not all show")
        batches = [change for change in self.record("alice", "presence") if "batch" in change]
        self.assertTrue(batches, self.record("alice", "presence"))
        self.assertEqual((batches[-1]["count"], batches[-1]["batch"]["count"]), (4, 4))
        self.assertNotIn("tick", batches[-1], "a batch of its own, not in a tick")
        self.assertEqual(sorted(p["name"] for p in self.client("alice", "c.people")), ["alice", "writer1", "writer2", "writer3"])

        writers.start()
        self.wait(lambda: len(self.record("alice", "ticks")) >= 20, "no ticks")
        self.assertEqual(self.record("alice", "deliveries"), [{"mode": "tick", "tickMs": 50}])
        self.assertEqual(self.client("alice", "c.delivery"), "tick")
        late = support.Writers(self.server, room, 1, name="late")
        self.addCleanup(late.close)
        self.wait(lambda: any("tick" in change and any(p["name"] == "late1" for p in change["batch"]["joined"])
                              for change in self.record("alice", "presence")), "the late join did not ride in a tick")
        writers.stop()
        seq = support.settled_seq(self.server, room)
        self.wait(lambda: self.client("alice", "c.seq") == seq, f"alice is at {self.client('alice', 'c.seq')}, not {seq}")
        self.assertEqual(self.client("alice", "c.state"), self.server.state(room)["state"])
        self.assertEqual(self.client("alice", "c.peopleCount"), 5)

        ticks = [tick for tick in self.record("alice", "ticks") if tick["seq"] >= tick["from"]]
        events = self.record("alice", "events")
        for before, after in zip(ticks, ticks[1:]):
            self.assertEqual(after["from"], before["seq"] + 1, "ticks follow one another")
        self.assertEqual(ticks[0]["from"], events[-1]["seq"] + 1, "the first tick follows the last event")
        self.assertEqual(events[0]["seq"], welcome["seq"] + 1)
        self.assertEqual(sum(tick["fresh"] for tick in ticks), seq - events[-1]["seq"], "every event counted once")
        self.assertTrue(all(tick["missed"] is None for tick in ticks))
        self.assertIn("tick", [state["cause"] for state in self.record("alice", "states")])
        for tick in ticks:
            self.assertRegex(tick["line"], r"^#\d+(–\d+)? writer\d( and (writer\d|\d+ others?))?: \d+ (forward|back)")

    def test_a_tick_past_the_next_seq_reports_the_events_that_never_came(self):
        # A server that starts at seq 5 and then sends these ticks.
        outcome = self.run_js("""
            const state = (x) => ({ face: { happiness: 50, smile: 0, scale: 0.9 },
              heart: { rate: 0.5, fillColor: '#ff0000', strokeColor: '#000000', lineWidth: 1 }, dragon: { x, y: 10, hidden: false } });
            const tick = (from, seq, x, extra = {}) => ({ type: 'tick', room: 'r', from, seq, time: 1764504245000,
              names: { 'forwardButtonClicked:': Math.max(0, seq - from + 1) }, senders: [{ id: 'c2', name: 'bob' }],
              senderCount: 1, changes: [], state: state(x), ...extra });
            const messages = [
              { type: 'welcome', protocol: 1, room: 'r', you: { id: 'c1', name: 'alice', role: 'player' }, epoch: 'e1', seq: 5,
                state: state(10), presence: [{ id: 'c1', name: 'alice' }], presenceCount: 1, serverTime: Date.now(),
                recovered: false, limits: { intentsPerSecond: 60, intentBurst: 120, maxMessageBytes: 4096 }, pointers: [],
                delivery: 'tick', tickMs: 40 },
              tick(4, 7, 30), tick(8, 8, 40), tick(12, 14, 70), tick(13, 14, 70),
              tick(15, 14, 70, { names: {}, senders: [], senderCount: 0,
                presence: { count: 3, joined: [{ id: 'c3', name: 'carol' }, { id: 'c4', name: 'dave' }], left: [], joinedCount: 2, leftCount: 0 } }),
            ];
            class TickingSocket {
              constructor(url) {
                this.readyState = 0;
                setTimeout(() => {
                  this.readyState = 1;
                  for (const message of messages) this.onmessage({ data: JSON.stringify(message) });
                }, 0);
              }
              send() {}
              close() { this.readyState = 3; }
            }
            const client = module.connect({ url: 'ws://127.0.0.1:9/ws', WebSocket: TickingSocket, pingIntervalMs: 0 });
            const ticks = [];
            const people = [];
            client.on('tick', (tick, details) => ticks.push({ from: tick.from, seq: tick.seq, ...details }));
            client.on('presence', (change) => people.push(change));
            await client.ready();
            await new Promise((resolve) => setTimeout(resolve, 50));
            const result = { ticks, people: people.at(-1), seq: client.seq, x: client.state.dragon.x,
                             delivery: client.delivery, tickMs: client.tickMs, count: client.peopleCount };
            client.close();
            return result;""")
        self.assertEqual(outcome["ticks"], [
            {"from": 4, "seq": 7, "fresh": 2, "missed": None},
            {"from": 8, "seq": 8, "fresh": 1, "missed": None},
            {"from": 12, "seq": 14, "fresh": 3, "missed": {"from": 9, "to": 11}},
            {"from": 15, "seq": 14, "fresh": 0, "missed": None},
        ], "the overlap skipped, the gap named, the tick seen twice dropped, joins alone kept")
        self.assertEqual((outcome["seq"], outcome["x"]), (14, 70))
        self.assertEqual((outcome["delivery"], outcome["tickMs"]), ("tick", 40))
        self.assertEqual(outcome["count"], 3)
        self.assertEqual([p["name"] for p in outcome["people"]["people"]], ["alice", "carol", "dave"])
        self.assertEqual(outcome["people"]["batch"]["joinedCount"], 2)
        self.assertEqual(outcome["people"]["tick"]["from"], 15)

    def test_the_one_line_summaries(self):
        lines = self.run_js("""
            const tick = { from: 131, seq: 190, names: { 'forwardButtonClicked:': 41, 'backButtonClicked:': 19 },
                           senders: [{ id: 'c7', name: 'alice' }], senderCount: 37,
                           presence: { count: 5234, joined: [], left: [], joinedCount: 120, leftCount: 33 } };
            return [module.describeTick(tick),
                    module.describeTick({ ...tick, from: 191, seq: 191, names: { 'forwardButtonClicked:': 1 },
                                          votes: { forward: 812, back: 403 }, presence: undefined }),
                    module.describeTick({ from: 9, seq: 8, names: {}, senders: [], senderCount: 0,
                                          presence: { count: 3, joinedCount: 1, leftCount: 0 } }),
                    module.describeSenders([{ name: 'a' }, { name: 'b' }], 2), module.describeSenders([{ name: 'a' }], 2),
                    module.describeSenders([], 40), module.describeSenders([], 0),
                    module.describeDelivery({ mode: 'tick', tickMs: 50 }), module.describeDelivery({ mode: 'each', tickMs: 50 }),
                    module.describePresenceBatch({ count: 5234, joinedCount: 120, leftCount: 33 })];""")
        self.assertEqual(lines, [
            "#131–190 alice and 36 others: 41 forward, 19 back; +120 joined, 33 left (5234 here)",
            "#191 alice and 36 others: 812 forward, 403 back",
            "+1 joined, 0 left (3 here)",
            "a and b", "a and 1 other", "40 people", "the crowd",
            "delivery: one tick every 50 ms", "delivery: one message per event",
            "+120 joined, 33 left (5234 here)",
        ])


class ClientModuleAcrossARestart(unittest.TestCase):
    """The module's client reconnects on its own after the server restarts and resumes with since."""

    def test_reconnects_and_resumes_after_the_server_restarts(self):
        server = support.Server().start()
        driver = support.browser()
        try:
            driver.set_script_timeout(60)
            driver.get(server.base + "/healthz")
            self.assertIs(driver.execute_async_script(INSTALL), True)
            room = new_room("restart")
            driver.execute_script("window.openClient('alice', arguments[0])", {"room": room, "name": "alice"})

            def run_js(body):
                outcome = driver.execute_async_script(RUN, body, [])
                self.assertNotIn("error", outcome)
                return outcome["value"]

            def client(expression):
                return driver.execute_script(f"const c = window.records.alice.client; return {expression};")

            run_js("await clients.alice.ready(); await clients.alice.intent('dragon.forward');")
            epoch = client("c.epoch")

            server.stop()
            wait_for(driver, lambda d: client("c.status.phase") == "reconnecting", 30, "the drop was not noticed")
            self.assertFalse(client("c.connected"))
            server.start()

            wait_for(driver, lambda d: client("c.connected"), 60, f"no reconnect: {client('c.status')}")
            welcome = client("c.welcome")
            self.assertTrue(welcome["recovered"])
            self.assertEqual(welcome["epoch"], epoch, "the room's history survived the restart")
            query = parse_qs(urlparse(client("c.url")).query)
            self.assertEqual((query["since"], query["epoch"]), (["1"], [epoch]))
            phases = [s["phase"] for s in driver.execute_script("return window.records.alice.statuses")]
            self.assertEqual(phases[-1], "connected")
            self.assertIn("reconnecting", phases)
            ack = run_js("return await clients.alice.intent('dragon.back');")
            self.assertEqual((ack["seq"], ack["result"]), (2, "applied"))
        finally:
            driver.quit()
            server.close()

    def test_comes_back_at_once_when_the_server_is_upgraded_and_so_does_the_page(self):
        server = support.Server().start()
        driver = support.browser()
        page = support.browser()
        try:
            driver.set_script_timeout(60)
            driver.get(server.base + "/healthz")
            self.assertIs(driver.execute_async_script(INSTALL), True)
            room = new_room("upgrade")
            join_with_dialog(page, server, room, "pat")
            driver.execute_script("window.openClient('alice', arguments[0])", {"room": room, "name": "alice"})

            def run_js(body):
                outcome = driver.execute_async_script(RUN, body, [])
                self.assertNotIn("error", outcome)
                return outcome["value"]

            def client(expression):
                return driver.execute_script(f"const c = window.records.alice.client; return {expression};")

            run_js("await clients.alice.ready(); await clients.alice.intent('dragon.forward');")
            epoch = client("c.epoch")
            wait_for(page, lambda d: support.info(d)["seq"] == 1, 10, "the page did not see the first event")
            page.execute_script("window.connectionTexts = []; new MutationObserver(() => "
                                "window.connectionTexts.push(document.getElementById('connection').textContent))"
                                ".observe(document.getElementById('connection'), {childList: true, characterData: true, subtree: true});")

            server.upgrade()

            wait_for(driver, lambda d: len(driver.execute_script("return window.records.alice.welcomes")) == 2
                     and client("c.connected"), 30, f"no reconnect: {client('c.status')}")
            statuses = driver.execute_script("return window.records.alice.statuses")
            restart = [s for s in statuses if s["phase"] == "reconnecting"]
            self.assertEqual(len(restart), 1, statuses)
            self.assertEqual(restart[0]["code"], 1012, restart)
            self.assertEqual(restart[0]["failures"], 0, "a restart is not a failed attempt")
            self.assertLessEqual(restart[0]["retryAt"] - restart[0]["at"], 251, "1012 is retried within 250 ms")
            welcome = client("c.welcome")
            self.assertTrue(welcome["recovered"])
            self.assertEqual(welcome["epoch"], epoch)
            query = parse_qs(urlparse(client("c.url")).query)
            self.assertEqual((query["since"], query["epoch"]), (["1"], [epoch]))
            ack = run_js("return await clients.alice.intent('dragon.back');")
            self.assertEqual((ack["seq"], ack["result"]), (2, "applied"))

            # The page: told the server restarts, back by itself, resumed, and it sees what came after.
            wait_for(page, lambda d: support.info(d)["seq"] == 2 and support.info(d)["connection"] == "connected",
                     30, "the page did not come back after the upgrade")
            self.assertTrue(support.info(page)["recovered"])
            page_texts = page.execute_script("return window.connectionTexts")
            self.assertTrue(any("Server restarting" in text for text in page_texts), page_texts)
        finally:
            driver.quit()
            page.quit()
            server.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
