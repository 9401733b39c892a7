// A client for the Happy protocol (docs/PROTOCOL.md), as an ES module without
// dependencies but the protocol's table beside it (/js/protocol.js, written from
// the server's action table): import it from any page with
//
//   import { connect } from '/js/happy-client.js';
//
// It keeps one WebSocket to /ws open, reconnects with capped exponential
// backoff and resumes with since/epoch, keeps the room's latest scene,
// presence and live pointers, turns intents into promises of their ack, and
// estimates the server clock (section 8). In a crowd room (section 12) it
// reads ticks, delivery switches and batched presence. docs/web-client.md
// describes it.
import { EVENTS, EVENTS_BY_NAME } from './protocol.js';

/** The protocol version this module speaks (`welcome.protocol`). */
export const PROTOCOL_VERSION = 1;

/** The WebSocket subprotocol offered to the server (section 2). */
export const SUBPROTOCOL = 'happy.v1';

/** The protocol's limits, used until a welcome tells the server's own (`welcome.limits`). */
export const DEFAULT_LIMITS = Object.freeze({ intentsPerSecond: 60, intentBurst: 120, maxMessageBytes: 4096 });

/** Words for the close codes a Happy server uses (sections 2 and 5). */
export const CLOSE_REASONS = Object.freeze({
  1000: 'closed normally',
  1001: 'server going away',
  1003: 'unsupported data',
  1006: 'connection lost',
  1008: 'refused (policy)',
  1009: 'message too big',
  1011: 'server error',
  1012: 'server restarting',
  1013: 'server busy, try again later',
  4003: 'removed by an operator',
  4004: 'room deleted by an operator',
});

/** A server restarting or being upgraded closes with 1012 (section 2): come back at once, with jitter. */
const SERVICE_RESTART = 1012;
const RESTART_JITTER_MS = 250;

/** An operator removed this client (4003) or deleted its room (4004), section 13: never retried by itself. */
const OPERATOR_CLOSES = Object.freeze({
  4003: 'removed from the room by an operator',
  4004: 'the room was deleted by an operator',
});

/**
 * `1008 refused (policy): bad room` for a close code and its reason text.
 * @param {number} code
 * @param {string} [reason]
 * @returns {string}
 */
export function describeClose(code, reason = '') {
  const meaning = CLOSE_REASONS[code] || 'closed';
  return `${code} ${meaning}${reason ? `: ${reason}` : ''}`;
}

/**
 * Who a tick's events came from: `alice`, `alice and bob`, `alice and 36 others`; without
 * names `37 people`, or `the crowd` when not even a count came.
 * @param {{name: string}[]} senders The most recent senders, newest first.
 * @param {number} count How many distinct senders there were.
 * @returns {string}
 */
export function describeSenders(senders, count) {
  const [first, second] = Array.isArray(senders) ? senders : [];
  if (!first) return count === 1 ? '1 person' : count > 1 ? `${count} people` : 'the crowd';
  if (!(count > 1)) return first.name;
  if (count === 2 && second) return `${first.name} and ${second.name}`;
  return `${first.name} and ${count - 1} other${count === 2 ? '' : 's'}`;
}

/**
 * A tick's events by kind: `41 forward, 19 back, 3 happiness` (the votes first when it has them).
 * @param {object} tick
 * @returns {string}
 */
export function describeTickCounts(tick) {
  const parts = tick.votes ? [`${tick.votes.forward} forward`, `${tick.votes.back} back`] : [];
  const voted = [EVENTS.forwardButtonClicked.name, EVENTS.backButtonClicked.name];
  for (const [name, count] of Object.entries(tick.names || {})) {
    if (tick.votes && voted.includes(name)) continue;
    parts.push(`${count} ${EVENTS_BY_NAME[name]?.word ?? name}`);
  }
  return parts.join(', ');
}

/**
 * A batch of joins and leaves: `+120 joined, 33 left (5234 here)`.
 * @param {{count: number, joinedCount: number, leftCount: number}} batch
 * @returns {string}
 */
export function describePresenceBatch(batch) {
  return `+${batch.joinedCount} joined, ${batch.leftCount} left (${batch.count} here)`;
}

/**
 * A whole tick in one line, as happyclient's `watch` prints it after the time:
 * `#131–190 alice and 36 others: 41 forward, 19 back; +120 joined, 33 left (5234 here)`.
 * @param {object} tick
 * @returns {string}
 */
export function describeTick(tick) {
  const parts = [];
  if (tickEventCount(tick) > 0) {
    const range = tick.from === tick.seq ? `#${tick.seq}` : `#${tick.from}–${tick.seq}`;
    parts.push(`${range} ${describeSenders(tick.senders, tick.senderCount ?? tick.senders?.length ?? 0)}: ${describeTickCounts(tick)}`);
  }
  if (tick.presence && (tick.presence.joinedCount > 0 || tick.presence.leftCount > 0)) {
    parts.push(describePresenceBatch(tick.presence));
  }
  return parts.join('; ');
}

/**
 * A delivery switch: `delivery: one tick every 50 ms`, `delivery: one message per event`.
 * @param {{mode: 'each'|'tick', tickMs?: number}} delivery
 * @returns {string}
 */
export function describeDelivery({ mode, tickMs }) {
  return mode === 'tick' ? `delivery: one tick every ${tickMs} ms` : 'delivery: one message per event';
}

/** How many events a tick covers (none when `from` is `seq` + 1: it carries presence only). */
function tickEventCount(tick) {
  return tick.seq >= tick.from ? tick.seq - tick.from + 1 : 0;
}

/**
 * An error from the server (`fromServer` true, `code` one of the protocol's
 * error codes: `bad_json`, `bad_message`, `unknown_action`, `invalid_value`,
 * `rate_limited`, `forbidden`, `unavailable`) or from this client:
 * `not_connected` (nothing was sent), `connection_lost` (the socket dropped
 * before the answer came: the intent may or may not have been applied),
 * `closed` (the client was closed), `refused` (the server refused the
 * connection), `removed` (an operator removed this client or deleted its
 * room), `message_too_big` (over `welcome.limits.maxMessageBytes`, not sent).
 */
export class HappyError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{id?: string|null, action?: string|null, fromServer?: boolean}} [details]
   */
  constructor(code, message, { id = null, action = null, fromServer = false } = {}) {
    super(message);
    this.name = 'HappyError';
    /** @type {string} */
    this.code = code;
    /** The intent's or ping's id, when the error answers one. @type {string|null} */
    this.id = id;
    /** The intent's action, when the error answers an intent. @type {string|null} */
    this.action = action;
    /** True when the server sent this error, false when the client raised it. @type {boolean} */
    this.fromServer = fromServer;
  }
}

/**
 * @typedef {object} ConnectOptions
 * @property {string} [url] The WebSocket endpoint, `ws://host:port/ws`. An `http(s)://` URL is
 *   turned into its `ws(s)://` twin and an empty path becomes `/ws`. Default: `/ws` on the
 *   page's own host (`wss:` on an `https:` page).
 * @property {string} [room] Room to join, 1–64 of `[A-Za-z0-9_-]`; the server's default room
 *   (`lobby`) when left out.
 * @property {string} [name] Display name, 1–32 printable characters; the server picks
 *   `guest-<id>` when left out.
 * @property {string} [token] Access token, when the server requires one (section 7).
 * @property {boolean} [observe] Join as an observer (section 13): hear the room without being
 *   in its presence; intents and pointers are refused (`forbidden`).
 * @property {number} [since] With `epoch`: resume after this seq, so the events after it are
 *   replayed (for instance a seq kept from an earlier visit).
 * @property {string} [epoch] The epoch that `since` belongs to.
 * @property {false|{minDelayMs?: number, maxDelayMs?: number}} [reconnect] Backoff between
 *   attempts after a lost connection: a random delay in [ceiling/2, ceiling], the ceiling
 *   doubling from `minDelayMs` (500) up to `maxDelayMs` (15000). `false`: never reconnect.
 *   A close with 1012 (the server restarting or being upgraded) is not a failure: the client
 *   comes back after a random 0–250 ms, without backoff.
 * @property {number} [pingIntervalMs] How often to ping the server to keep the clock estimate
 *   fresh (10000; 0 turns it off). A connection that leaves pings unanswered for two intervals
 *   is given up and reconnected.
 * @property {typeof WebSocket} [WebSocket] The WebSocket class to use, for a runtime without a
 *   global one (default: `globalThis.WebSocket`).
 */

/**
 * @typedef {object} Status
 * @property {'connecting'|'connected'|'reconnecting'|'refused'|'removed'|'closed'} phase
 * @property {number} failures Connection attempts that failed in a row (0 once connected).
 * @property {number} [retryAt] `reconnecting`: when the next attempt starts (`Date.now()` ms).
 * @property {number} [code] `reconnecting`, `refused`, `removed`: the close code.
 * @property {string} [reason] `reconnecting`, `refused`, `removed`: the close reason.
 * @property {string} [message] `removed`: what happened, in words: "removed from the room by an
 *   operator: <reason>" (4003) or "the room was deleted by an operator" (4004).
 * @property {boolean} [recovered] `connected`: the welcome's `recovered`.
 * @property {string} [error] `refused` before any socket opened: why (a malformed URL).
 */

/**
 * @typedef {object} Ack
 * @property {string} id The intent's id.
 * @property {number} seq The room's seq after the intent (the event's seq when it made one).
 * @property {'applied'|'clamped'|'unchanged'|'blocked'|'counted'} result `counted`: a dragon vote (section 12;
 *   `seq` is the voted event's, 0 on a tie).
 */

/**
 * @typedef {object} Pointer
 * @property {string} id
 * @property {string} name
 * @property {'face'|'heart'|'dragon'} view
 * @property {number} x 0..1 across the view.
 * @property {number} y 0..1 down the view.
 * @property {'idle'|'drag'|'pinch'|'press'} activity
 */

const EVENT_TYPES = ['welcome', 'event', 'tick', 'delivery', 'state', 'presence', 'resync', 'status', 'pointers', 'error'];
const POINTER_VIEWS = ['face', 'heart', 'dragon'];
const POINTER_ACTIVITIES = ['idle', 'drag', 'pinch', 'press'];
const DEFAULT_POINTER_INTERVAL_MS = 50;
const DEFAULT_TICK_MS = 50;
const CLOCK_SAMPLES = 8;
const SECOND_PING_DELAY_MS = 1000;

/**
 * Connects to a Happy server and returns the client at once; it starts connecting in a
 * microtask, so listeners added right after `connect` see every status and the first welcome.
 *
 * @example
 * const client = connect({ room: 'lobby', name: 'alice' });
 * client.on('state', (state) => draw(state));
 * await client.ready();
 * const ack = await client.intent('face.setHappiness', 80);   // { id, seq, result: 'applied' }
 *
 * @param {ConnectOptions} [options]
 * @returns {HappyClient}
 */
export function connect(options = {}) {
  return new HappyClient(options);
}

/** One connection to a room, kept open across drops; made by {@link connect}. */
export class HappyClient {
  #endpoint;
  #room;
  #name;
  #token;
  #observe;
  #reconnect;
  #pingIntervalMs;
  #WebSocket;

  #listeners = new Map(EVENT_TYPES.map((type) => [type, new Set()]));
  #socket = null;
  #url = null;
  #welcome = null;
  #welcomed = false;
  #welcomeSeq = null;
  #epoch = null;
  #seq = null;
  #state = null;
  #people = new Map();
  #peopleCount = 0;
  #pointers = new Map();
  #delivery = 'each';
  #tickMs = DEFAULT_TICK_MS;
  #status = { phase: 'connecting', failures: 0 };
  #failures = 0;
  #ended = false;
  #refused = false;
  /** Why an operator removed this client (a HappyError), until reconnect(). */
  #removal = null;
  #retryTimer = null;
  #pingTimer = null;
  #nextId = 1;
  #intents = new Map();
  #pings = new Map();
  #clockSamples = [];
  #clockOffset = 0;
  #pointerOut = null;
  #pointerShown = null;
  #pointerSentAt = -Infinity;
  #pointerTimer = null;
  #readyWaiters = [];
  #onOnline = () => {
    if (this.#retryTimer !== null) this.reconnect();
  };

  /** @param {ConnectOptions} options */
  constructor({ url, room, name, token, observe = false, since, epoch, reconnect, pingIntervalMs = 10000, WebSocket } = {}) {
    this.#endpoint = endpointURL(url);
    this.#room = room ?? null;
    this.#name = name ?? null;
    this.#token = token || null;
    this.#observe = observe === true;
    this.#reconnect = reconnect === false ? null
      : { minDelayMs: reconnect?.minDelayMs ?? 500, maxDelayMs: reconnect?.maxDelayMs ?? 15000 };
    this.#pingIntervalMs = pingIntervalMs;
    this.#WebSocket = WebSocket ?? null;
    if (Number.isInteger(since) && since >= 0 && typeof epoch === 'string' && epoch !== '') {
      this.#seq = since;
      this.#epoch = epoch;
    }
    globalThis.addEventListener?.('online', this.#onOnline);
    queueMicrotask(() => {
      if (!this.#ended && this.#url === null) this.#open(); // Unless reconnect() opened it already.
    });
  }

  // MARK: what the client knows

  /** The room asked for (the server's default room when null); `welcome.room` once connected. @type {string|null} */
  get room() { return this.#welcome?.room ?? this.#room; }

  /** The display name asked for. @type {string|null} */
  get name() { return this.#name; }

  /** This client as the server knows it, `{id, name, role}`, from the last welcome (kept while reconnecting). @type {object|null} */
  get you() { return this.#welcome?.you ?? null; }

  /** The last welcome, or null before the first. @type {object|null} */
  get welcome() { return this.#welcome; }

  /** The room's epoch (history identity), from the last welcome or resync. @type {string|null} */
  get epoch() { return this.#epoch; }

  /** The seq of the newest event this client has applied; what it resumes from. @type {number|null} */
  get seq() { return this.#seq; }

  /** The room's scene, always the latest known (replayed events never move it back). @type {object|null} */
  get state() { return this.#state; }

  /** `welcome.scene`: width, height, dragonSize, step. @type {object|null} */
  get scene() { return this.#welcome?.scene ?? null; }

  /** `welcome.limits`, or the protocol's defaults before a welcome. @type {object} */
  get limits() { return this.#welcome?.limits ?? DEFAULT_LIMITS; }

  /** The people in the room, `[{id, name}]` (at most `presenceBroadcastMax` of them). @type {object[]} */
  get people() { return [...this.#people.values()]; }

  /** How many people the room has, this client included unless it observes. @type {number} */
  get peopleCount() { return this.#peopleCount; }

  /**
   * How the room's events arrive now (section 12): `each` (one `event` each) or `tick` (one
   * `tick` per {@link HappyClient#tickMs} for all of them). @type {'each'|'tick'}
   */
  get delivery() { return this.#delivery; }

  /** How often a tick room sends ticks, in ms (`welcome.tickMs`, or the last `delivery` message's). @type {number} */
  get tickMs() { return this.#tickMs; }

  /** The others' visible pointers (section 10). @type {Pointer[]} */
  get pointers() { return [...this.#pointers.values()]; }

  /**
   * Whether the server has live pointers (section 10): its welcome lists the visible ones in
   * `welcome.pointers`, as every server that speaks section 10 does. False before the first welcome.
   * @type {boolean}
   */
  get supportsPointers() {
    return Array.isArray(this.#welcome?.pointers);
  }

  /** How often pointers go out at most, in ms: `limits.pointerIntervalMs`, else 50. @type {number} */
  get pointerIntervalMs() {
    const { pointerIntervalMs, pointersPerSecond } = this.limits;
    const fromRate = pointersPerSecond > 0 ? 1000 / pointersPerSecond : 0;
    return Math.max(pointerIntervalMs > 0 ? pointerIntervalMs : DEFAULT_POINTER_INTERVAL_MS, fromRate);
  }

  /** The connection's status, as last reported to `status` listeners. @type {Status} */
  get status() { return this.#status; }

  /** True while a socket is open and welcomed: intents and pings can be sent. @type {boolean} */
  get connected() {
    return this.#socket !== null && this.#welcomed && this.#socket.readyState === 1;
  }

  /** The URL of the current (or last) socket, since and epoch included. @type {string|null} */
  get url() { return this.#url; }

  /**
   * The server's clock now, in ms since the epoch: the local clock plus the offset measured
   * with the shortest round trip among the recent pings (section 8).
   * @returns {number}
   */
  serverNow() {
    return Date.now() + this.#clockOffset;
  }

  // MARK: listening

  /**
   * Adds a listener and returns the function that removes it.
   *
   * - `welcome` (welcome): every welcome, first or after a reconnect; `welcome.recovered` tells
   *   whether the events missed meanwhile follow (as `event`s with `replayed` true).
   * - `event` (event, {replayed}): each event once, in seq order, duplicates dropped. In tick
   *   delivery only the events a resume replays come one by one; the others come in ticks.
   * - `tick` (tick, {fresh, missed}): a crowd room's tick (section 12), with the events from
   *   `tick.from` to `tick.seq` counted by name; `fresh` is how many of them this client had not
   *   seen (a first tick may start at or before the welcome's seq), `missed` `{from, to}` the
   *   events that never arrived when it starts past the next seq (else null; the state is current
   *   either way). A tick that brings nothing new is dropped; one with joins and leaves only has
   *   `fresh` 0. {@link describeTick} says it in one line.
   * - `delivery` ({mode, tickMs}): the room switched between `each` and `tick`.
   * - `state` (state, {cause: 'welcome'|'event'|'tick'|'resync', event?, tick?}): the scene changed.
   * - `presence` ({people, count, joined?, left?, batch?, tick?}): the people list changed
   *   (welcome, join, leave); in a crowd room `batch` is a batch of joins and leaves,
   *   `{joined, left, joinedCount, leftCount, count}`, and `tick` the tick it came in, if so.
   * - `resync` (resync): the server replaced queued events by the whole scene.
   * - `status` (status): connecting, connected, reconnecting, refused, removed or closed; see {@link Status}.
   * - `pointers` ({pointers, changed, gone}): the others' live pointers changed: `pointers` is
   *   every visible one, `changed` the ones that appeared or moved, `gone` the ids that left or
   *   hid. Also on every welcome, with the room's visible pointers as `changed`.
   * - `error` (HappyError): an error not tied to a pending intent or ping.
   *
   * @param {'welcome'|'event'|'tick'|'delivery'|'state'|'presence'|'resync'|'status'|'pointers'|'error'} type
   * @param {Function} listener
   * @returns {() => void} removes the listener
   */
  on(type, listener) {
    const listeners = this.#listeners.get(type);
    if (!listeners) throw new TypeError(`happy-client: no such event "${type}" (one of ${EVENT_TYPES.join(', ')})`);
    if (typeof listener !== 'function') throw new TypeError('happy-client: a listener must be a function');
    const entry = (...args) => listener(...args);
    listeners.add(entry);
    return () => listeners.delete(entry);
  }

  /**
   * Resolves with the welcome once connected (at once when connected now); rejects with a
   * HappyError (`refused`, `removed` or `closed`) if the client gives up first.
   * @returns {Promise<object>}
   */
  ready() {
    if (this.connected) return Promise.resolve(this.#welcome);
    if (this.#ended) return Promise.reject(new HappyError('closed', 'the client is closed'));
    if (this.#refused) return Promise.reject(new HappyError('refused', `refused: ${this.#refusal()}`));
    if (this.#removal) return Promise.reject(this.#removal);
    return new Promise((resolve, reject) => this.#readyWaiters.push({ resolve, reject }));
  }

  // MARK: sending

  /**
   * Sends an intent (section 4) and resolves with its ack, which arrives after the event it
   * caused: by then `state` includes the change. Rejects with a HappyError: the server's error
   * (`invalid_value`, `rate_limited`, `unavailable`, …, `fromServer` true), `not_connected` when
   * offline (nothing sent), `connection_lost` when the socket dropped before the answer (the
   * intent may or may not have been applied, so it is not sent again: intents such as
   * `dragon.forward` are not idempotent), `closed`, or `message_too_big`.
   *
   * @param {string} action e.g. `face.setHappiness`, `dragon.forward`
   * @param {*} [value] A plain object is sent as the intent's fields (`{delta: 5}`,
   *   `{fillColor: '#00ff00', lineWidth: 3}`); anything else is sent as `value`; left out, no field.
   * @returns {Promise<Ack>}
   */
  intent(action, value) {
    if (typeof action !== 'string' || action === '') {
      return Promise.reject(new TypeError('happy-client: intent needs an action name'));
    }
    const fields = isPlainObject(value) ? value : value === undefined ? {} : { value };
    const id = `i${this.#nextId++}`;
    return this.#request(this.#intents, { ...fields, type: 'intent', id, action }, { id, action });
  }

  /**
   * Sends an application ping and resolves with the round trip in ms; the answer also refines
   * {@link HappyClient#serverNow}. Rejects like {@link HappyClient#intent} when not answered.
   * @returns {Promise<number>}
   */
  ping() {
    const id = `p${this.#nextId++}`;
    return this.#request(this.#pings, { type: 'ping', id }, { id, sentAt: performance.now() });
  }

  /**
   * Shows the others where this client points (section 10): `view` `face`, `heart` or
   * `dragon`, or null to hide; `x`, `y` in 0..1 inside the view (brought into that range when
   * outside it). Sent at most once per {@link HappyClient#pointerIntervalMs}, the latest
   * position winning; while offline the latest is kept and sent after the next welcome, and a
   * visible pointer is shown again after a reconnect. Hiding a pointer the others never saw
   * sends nothing. Nothing is sent to a server without pointers (see
   * {@link HappyClient#supportsPointers}). No ack.
   *
   * @param {'face'|'heart'|'dragon'|null} view
   * @param {number} [x]
   * @param {number} [y]
   * @param {'idle'|'drag'|'pinch'|'press'} [activity]
   */
  sendPointer(view, x = 0, y = 0, activity = 'idle') {
    if (view === null || view === undefined) {
      if (!this.#pointerShown?.view) {
        this.#pointerOut = null; // The others never saw it: nothing to hide.
        return;
      }
      this.#pointerOut = { type: 'pointer', view: null };
    } else {
      if (!POINTER_VIEWS.includes(view)) throw new TypeError(`happy-client: no such view "${view}" (one of ${POINTER_VIEWS.join(', ')})`);
      if (!POINTER_ACTIVITIES.includes(activity)) {
        throw new TypeError(`happy-client: no such activity "${activity}" (one of ${POINTER_ACTIVITIES.join(', ')})`);
      }
      this.#pointerOut = { type: 'pointer', view, x: unitInterval(x), y: unitInterval(y), activity };
    }
    this.#schedulePointer();
  }

  /** Hides this client's pointer: `sendPointer(null)`. */
  hidePointer() {
    this.sendPointer(null);
  }

  // MARK: the connection

  /**
   * Reconnects now, skipping any backoff wait (also after a refusal or a removal), and resumes where the
   * client was. `changes` may give a new display name or token for this and later connections.
   * A closed client stays closed.
   * @param {{name?: string, token?: string}} [changes]
   */
  reconnect({ name, token } = {}) {
    if (this.#ended) return;
    if (name !== undefined) this.#name = name;
    if (token !== undefined) this.#token = token || null;
    this.#refused = false;
    this.#removal = null;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
    if (this.#socket) this.#drop(this.#socket, 'reconnecting');
    this.#open();
  }

  /**
   * Closes the connection for good: pending intents and pings reject with `closed`, the
   * status becomes `closed` and nothing reconnects.
   */
  close() {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
    clearTimeout(this.#pointerTimer);
    this.#pointerTimer = null;
    globalThis.removeEventListener?.('online', this.#onOnline);
    this.#failPending(new HappyError('closed', 'the client was closed'));
    if (this.#socket) this.#drop(this.#socket, 'closed by the client');
    this.#rejectReady(new HappyError('closed', 'the client was closed'));
    this.#setStatus({ phase: 'closed' });
  }

  #open() {
    this.#welcomed = false;
    this.#setStatus({ phase: 'connecting' });
    const params = new URLSearchParams();
    if (this.#room !== null) params.set('room', this.#room);
    if (this.#name !== null) params.set('name', this.#name);
    if (this.#epoch !== null && this.#seq !== null) {
      params.set('since', String(this.#seq));
      params.set('epoch', this.#epoch);
    }
    if (this.#token !== null) params.set('token', this.#token);
    if (this.#observe) params.set('observe', '1');
    const url = new URL(this.#endpoint);
    for (const [key, value] of params) url.searchParams.set(key, value);
    this.#url = url.href;
    let socket;
    try {
      const Socket = this.#WebSocket ?? globalThis.WebSocket;
      if (typeof Socket !== 'function') throw new TypeError('no WebSocket class: pass one as the WebSocket option');
      socket = new Socket(this.#url, SUBPROTOCOL);
    } catch (error) {
      this.#refused = true;
      this.#setStatus({ phase: 'refused', error: error.message });
      this.#rejectReady(new HappyError('refused', `cannot connect: ${error.message}`));
      return;
    }
    this.#socket = socket;
    socket.onmessage = (message) => this.#receive(message.data);
    socket.onclose = (event) => this.#closed(socket, event.code, event.reason);
  }

  /** Leaves a socket: no more of its messages are read, and it is closed. */
  #drop(socket, reason) {
    socket.onmessage = null;
    socket.onclose = null;
    try {
      socket.close(1000, reason);
    } catch {
      // Already closing.
    }
    this.#lost();
  }

  /** What every lost socket leads to: timers stop, unanswered requests fail. */
  #lost() {
    this.#socket = null;
    this.#welcomed = false;
    clearInterval(this.#pingTimer);
    this.#pingTimer = null;
    clearTimeout(this.#pointerTimer);
    this.#pointerTimer = null;
    this.#failPending(new HappyError('connection_lost',
      'the connection was lost before the answer came; the intent may or may not have been applied'));
  }

  #closed(socket, code, reason) {
    if (socket !== this.#socket) return;
    const wasWelcomed = this.#welcomed;
    this.#lost();
    // Refused at admission (bad room, name or token): trying again would be refused again.
    if (code === 1008 && !wasWelcomed) {
      this.#refused = true;
      this.#setStatus({ phase: 'refused', code, reason });
      this.#rejectReady(new HappyError('refused', `refused: ${describeClose(code, reason)}`));
      return;
    }
    // An operator removed this client or deleted its room: it must not come back by itself.
    if (OPERATOR_CLOSES[code]) {
      const message = reason || OPERATOR_CLOSES[code];
      this.#removal = new HappyError('removed', message);
      this.#setStatus({ phase: 'removed', code, reason, message });
      this.#rejectReady(this.#removal);
      return;
    }
    this.#retryLater(code, reason);
  }

  #retryLater(code, reason) {
    if (this.#reconnect === null) {
      this.#ended = true;
      globalThis.removeEventListener?.('online', this.#onOnline);
      this.#setStatus({ phase: 'closed', code, reason });
      this.#rejectReady(new HappyError('closed', `closed: ${describeClose(code, reason)}`));
      return;
    }
    let delay;
    if (code === SERVICE_RESTART) {
      // The server taking over already listens; the jitter spreads the crowd coming back.
      delay = Math.random() * RESTART_JITTER_MS;
    } else {
      const { minDelayMs, maxDelayMs } = this.#reconnect;
      const ceiling = Math.min(maxDelayMs, minDelayMs * 2 ** this.#failures);
      delay = ceiling / 2 + Math.random() * ceiling / 2;
      this.#failures += 1;
    }
    const retryAt = Date.now() + delay;
    this.#setStatus({ phase: 'reconnecting', retryAt, code, reason });
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      this.#open();
    }, delay);
  }

  #refusal() {
    const { code, reason, error } = this.#status;
    return code !== undefined ? describeClose(code, reason) : error || 'refused';
  }

  #setStatus(status) {
    this.#status = { ...status, failures: this.#failures };
    this.#emit('status', this.#status);
  }

  // MARK: messages from the server

  #receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      this.#emit('error', new HappyError('bad_json', 'the server sent text that is not JSON'));
      return;
    }
    if (message === null || typeof message !== 'object') return;
    switch (message.type) {
      case 'welcome': return this.#receiveWelcome(message);
      case 'event': return this.#receiveEvent(message);
      case 'ack': return this.#answer(this.#intents, message.id, (request) => request.resolve(
        { id: message.id, seq: message.seq, result: message.result }));
      case 'error': return this.#receiveError(message);
      case 'resync': return this.#receiveResync(message);
      case 'presence':
        return typeof message.count === 'number' ? this.#receivePresenceBatch(message, null) : this.#receivePresence(message);
      case 'tick': return this.#receiveTick(message);
      case 'delivery': return this.#receiveDelivery(message);
      case 'pointers': return this.#receivePointers(message);
      case 'pong': return this.#receivePong(message);
      default: return undefined; // Newer message types are ignored, as unknown fields are.
    }
  }

  #receiveWelcome(welcome) {
    this.#welcome = welcome;
    this.#welcomed = true;
    this.#failures = 0;
    this.#epoch = welcome.epoch;
    this.#welcomeSeq = welcome.seq;
    // Recovered: the events since+1 … welcome.seq follow and move seq on; otherwise the state is the truth.
    if (!welcome.recovered || this.#seq === null) this.#seq = welcome.seq;
    this.#state = welcome.state;
    this.#people = new Map((welcome.presence || []).map((person) => [person.id, person]));
    this.#peopleCount = typeof welcome.presenceCount === 'number' ? welcome.presenceCount : this.#people.size;
    this.#delivery = welcome.delivery === 'tick' ? 'tick' : 'each';
    if (Number.isFinite(welcome.tickMs) && welcome.tickMs > 0) this.#tickMs = welcome.tickMs;
    const before = this.#pointers;
    this.#pointers = new Map((welcome.pointers || []).filter((pointer) => pointer.id !== welcome.you?.id)
      .map((pointer) => [pointer.id, pointer]));
    // Pointers hidden while this client was away are gone now.
    const pointersGone = [...before.keys()].filter((id) => !this.#pointers.has(id));
    this.#noteClock(welcome.serverTime, Infinity);

    this.#emit('welcome', welcome);
    this.#emit('presence', { people: this.people, count: this.#peopleCount });
    this.#emit('state', this.#state, { cause: 'welcome' });
    if (this.supportsPointers) this.#emit('pointers', { pointers: this.pointers, changed: this.pointers, gone: pointersGone });
    this.#setStatus({ phase: 'connected', recovered: welcome.recovered === true });
    if (this.#welcome !== welcome || !this.#welcomed) return; // A listener closed or reconnected the client.

    for (const waiter of this.#readyWaiters.splice(0)) waiter.resolve(welcome);
    this.#startPings();
    // A pointer others saw before the drop is shown again.
    if (this.#pointerOut === null && this.#pointerShown?.view) this.#pointerOut = this.#pointerShown;
    this.#schedulePointer();
  }

  #receiveEvent(event) {
    if (this.#seq !== null && event.seq <= this.#seq) return;
    this.#seq = event.seq;
    const replayed = this.#welcomeSeq !== null && event.seq <= this.#welcomeSeq;
    // welcome.state is already the newest: a replayed event's state is older.
    if (!replayed && event.state) this.#state = event.state;
    this.#emit('event', event, { replayed });
    if (!replayed) this.#emit('state', this.#state, { cause: 'event', event });
  }

  #receiveTick(tick) {
    if (!Number.isInteger(tick.from) || !Number.isInteger(tick.seq)) return;
    if (tick.presence && typeof tick.presence.count === 'number') this.#receivePresenceBatch(tick.presence, tick);
    const count = tickEventCount(tick);
    if (count === 0) {
      if (tick.presence) this.#emit('tick', tick, { fresh: 0, missed: null });
      return;
    }
    if (this.#seq !== null && tick.seq <= this.#seq) return; // Every event of it was seen already.
    const seen = this.#seq ?? tick.from - 1;
    const missed = tick.from > seen + 1 ? { from: seen + 1, to: tick.from - 1 } : null;
    const fresh = tick.seq - Math.max(seen, tick.from - 1);
    this.#seq = tick.seq;
    if (tick.state) this.#state = tick.state;
    this.#emit('tick', tick, { fresh, missed });
    this.#emit('state', this.#state, { cause: 'tick', tick });
  }

  #receiveDelivery(message) {
    if (message.mode !== 'each' && message.mode !== 'tick') return;
    this.#delivery = message.mode;
    if (Number.isFinite(message.tickMs) && message.tickMs > 0) this.#tickMs = message.tickMs;
    this.#emit('delivery', { mode: this.#delivery, tickMs: this.#tickMs });
  }

  /** A crowd room's joins and leaves, as a `presence` message of its own or in a tick. */
  #receivePresenceBatch(batch, tick) {
    const joined = Array.isArray(batch.joined) ? batch.joined : [];
    const left = Array.isArray(batch.left) ? batch.left : [];
    for (const person of joined) this.#people.set(person.id, person);
    const gone = [];
    for (const person of left) {
      this.#people.delete(person.id);
      if (this.#pointers.delete(person.id)) gone.push(person.id);
    }
    this.#peopleCount = Math.max(this.#people.size, batch.count);
    const summary = { joined, left, joinedCount: batch.joinedCount ?? joined.length,
      leftCount: batch.leftCount ?? left.length, count: batch.count };
    this.#emit('presence', { people: this.people, count: this.#peopleCount, batch: summary, ...(tick ? { tick } : {}) });
    if (gone.length > 0) this.#emit('pointers', { pointers: this.pointers, changed: [], gone });
  }

  #receiveResync(resync) {
    this.#seq = resync.seq;
    if (typeof resync.epoch === 'string') this.#epoch = resync.epoch;
    this.#state = resync.state;
    this.#emit('resync', resync);
    if (Array.isArray(resync.presence)) {
      this.#people = new Map(resync.presence.map((person) => [person.id, person]));
      this.#peopleCount = typeof resync.presenceCount === 'number' ? resync.presenceCount : this.#people.size;
      this.#emit('presence', { people: this.people, count: this.#peopleCount });
    }
    this.#emit('state', this.#state, { cause: 'resync' });
  }

  #receivePresence(message) {
    const { joined, left } = message;
    if (joined && !this.#people.has(joined.id)) {
      this.#people.set(joined.id, joined);
      this.#peopleCount += 1;
      this.#emit('presence', { people: this.people, count: this.#peopleCount, joined });
    }
    if (left && this.#people.delete(left.id)) {
      this.#peopleCount = Math.max(this.#people.size, this.#peopleCount - 1);
      this.#emit('presence', { people: this.people, count: this.#peopleCount, left });
      if (this.#pointers.delete(left.id)) this.#emit('pointers', { pointers: this.pointers, changed: [], gone: [left.id] });
    }
  }

  #receivePointers(message) {
    // This client's own pointer is never reported (section 10), though a server may list it in `gone`.
    const self = this.#welcome?.you?.id;
    const changed = (Array.isArray(message.pointers) ? message.pointers : []).filter((pointer) => pointer.id !== self);
    const gone = (Array.isArray(message.gone) ? message.gone : []).filter((id) => id !== self);
    if (changed.length === 0 && gone.length === 0) return;
    for (const pointer of changed) this.#pointers.set(pointer.id, pointer);
    for (const id of gone) this.#pointers.delete(id);
    this.#emit('pointers', { pointers: this.pointers, changed, gone });
  }

  #receiveError(message) {
    const error = new HappyError(String(message.code), String(message.message ?? message.code),
      { id: message.id ?? null, fromServer: true });
    const answered = this.#answer(this.#intents, message.id, (request) => {
      error.action = request.action;
      request.reject(error);
    }) || this.#answer(this.#pings, message.id, (request) => request.reject(error));
    if (!answered) this.#emit('error', error);
  }

  #receivePong(message) {
    this.#answer(this.#pings, message.id, (request) => {
      const roundTrip = performance.now() - request.sentAt;
      if (typeof message.serverTime === 'number') this.#noteClock(message.serverTime + roundTrip / 2, roundTrip);
      request.resolve(roundTrip);
    });
  }

  // MARK: requests and their answers

  #request(pending, message, request) {
    if (this.#ended) return Promise.reject(new HappyError('closed', 'the client is closed', request));
    if (!this.connected) {
      return Promise.reject(new HappyError('not_connected', `not connected: ${message.action || message.type} was not sent`, request));
    }
    const text = JSON.stringify(message);
    const maxBytes = this.limits.maxMessageBytes;
    if (maxBytes > 0 && new TextEncoder().encode(text).length > maxBytes) {
      return Promise.reject(new HappyError('message_too_big', `over the server's ${maxBytes} bytes: not sent`, request));
    }
    return new Promise((resolve, reject) => {
      pending.set(request.id, { ...request, resolve, reject });
      this.#socket.send(text);
    });
  }

  /** Settles the pending request with this id; false when there is none. */
  #answer(pending, id, settle) {
    const request = typeof id === 'string' ? pending.get(id) : undefined;
    if (!request) return false;
    pending.delete(id);
    settle(request);
    return true;
  }

  #failPending(error) {
    for (const pending of [this.#intents, this.#pings]) {
      const requests = [...pending.values()];
      pending.clear();
      for (const request of requests) {
        request.reject(new HappyError(error.code, error.message, { id: request.id, action: request.action ?? null }));
      }
    }
  }

  #rejectReady(error) {
    for (const waiter of this.#readyWaiters.splice(0)) waiter.reject(error);
  }

  // MARK: clock and liveness

  #startPings() {
    if (!(this.#pingIntervalMs > 0)) return;
    const socket = this.#socket;
    const ping = () => this.ping().catch(() => {});
    ping();
    setTimeout(() => {
      if (this.#socket === socket && this.connected) ping();
    }, SECOND_PING_DELAY_MS);
    this.#pingTimer = setInterval(() => {
      // A socket that leaves pings unanswered this long is dead even if the browser has not noticed.
      const oldest = Math.min(...[...this.#pings.values()].map((request) => request.sentAt));
      if (performance.now() - oldest > 2 * this.#pingIntervalMs) {
        this.#drop(socket, 'no answer to pings');
        this.#retryLater(1006, 'no answer to pings');
        return;
      }
      ping();
    }, this.#pingIntervalMs);
  }

  /** Keeps the recent samples and uses the one with the shortest round trip. */
  #noteClock(serverTime, roundTrip) {
    if (typeof serverTime !== 'number') return;
    this.#clockSamples.push({ offset: serverTime - Date.now(), roundTrip });
    if (this.#clockSamples.length > CLOCK_SAMPLES) this.#clockSamples.shift();
    const best = this.#clockSamples.reduce((a, b) => (b.roundTrip < a.roundTrip ? b : a));
    this.#clockOffset = best.offset;
  }

  // MARK: pointers

  #schedulePointer() {
    if (this.#pointerTimer !== null || this.#pointerOut === null) return;
    if (!this.connected || !this.supportsPointers) return; // Kept for the next welcome.
    const wait = this.#pointerSentAt + this.pointerIntervalMs - performance.now();
    if (wait <= 0) {
      this.#sendPointerNow();
    } else {
      this.#pointerTimer = setTimeout(() => {
        this.#pointerTimer = null;
        this.#sendPointerNow();
      }, wait);
    }
  }

  #sendPointerNow() {
    if (this.#pointerOut === null || !this.connected) return;
    this.#socket.send(JSON.stringify(this.#pointerOut));
    this.#pointerShown = this.#pointerOut;
    this.#pointerOut = null;
    this.#pointerSentAt = performance.now();
  }

  // MARK: listeners

  #emit(type, ...args) {
    for (const listener of [...this.#listeners.get(type)]) {
      try {
        listener(...args);
      } catch (error) {
        // One failing listener must not stop the others or the client.
        if (typeof globalThis.reportError === 'function') globalThis.reportError(error);
        else console.error(error);
      }
    }
  }
}

/** The WebSocket endpoint for `url` (see ConnectOptions.url). */
function endpointURL(url) {
  const base = globalThis.location?.href;
  if (url === undefined || url === null || url === '') {
    if (!base) throw new TypeError('happy-client: connect needs a url outside a web page');
    url = '/ws';
  }
  const endpoint = new URL(url, base);
  if (endpoint.protocol === 'http:') endpoint.protocol = 'ws:';
  else if (endpoint.protocol === 'https:') endpoint.protocol = 'wss:';
  if (endpoint.protocol !== 'ws:' && endpoint.protocol !== 'wss:') {
    throw new TypeError(`happy-client: ${endpoint.href} is not a ws:, wss:, http: or https: URL`);
  }
  if (endpoint.pathname === '/' || endpoint.pathname === '') endpoint.pathname = '/ws';
  return endpoint.href;
}

/** A coordinate brought into 0..1 (0 for what is not a number). */
function unitInterval(value) {
  const number = Number(value);
  return Number.isFinite(number) ? Math.min(1, Math.max(0, number)) : 0;
}

function isPlainObject(value) {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
