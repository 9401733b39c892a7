// The WebSocket to /ws (PROTOCOL.md sections 2-4): welcome, events, resume with
// since/epoch, reconnect with capped exponential backoff and jitter, and the
// server clock estimated from welcome.serverTime and app pings.

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 15000;
const PING_INTERVAL_MS = 10000;
/** On a first visit, the last events are replayed so the status label and log start filled in. */
const HISTORY_PEEK = 100;
const CLOCK_SAMPLES = 8;

export const CLOSE_REASONS = {
  1000: 'closed normally',
  1001: 'server going away',
  1003: 'unsupported data',
  1006: 'connection lost',
  1008: 'refused (policy)',
  1009: 'message too big',
  1011: 'server error',
  1013: 'server busy, try again later',
};

export class RoomConnection {
  /**
   * handlers: welcome(msg, {firstVisit}), event(msg, {replayed}), resync(msg), presence(msg),
   * serverError(msg), state({phase, text, detail, retryAt}).
   */
  constructor({ room, name, token, handlers }) {
    this.room = room;
    this.name = name;
    this.token = token;
    this.handlers = handlers;
    this.epoch = null;
    this.seq = null;
    this.welcomeSeq = null;
    this.socket = null;
    this.attempt = 0;
    this.retryTimer = null;
    this.pingTimer = null;
    this.pings = new Map();
    this.clockSamples = [];
    this.clockOffset = 0;
    this.nextId = 1;
    this.stopped = false;
    this.limits = { intentsPerSecond: 60, intentBurst: 120, maxMessageBytes: 4096 };
    window.addEventListener('online', () => {
      if (this.retryTimer !== null) this.reconnectNow();
    });
  }

  /** Server time now, in ms, from the best (shortest round trip) clock sample. */
  serverNow() {
    return Date.now() + this.clockOffset;
  }

  get isOpen() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN && this.welcomed;
  }

  async start() {
    this.stopped = false;
    if (this.epoch === null) await this.peekHistory();
    this.open();
  }

  /** Changes the display name: reconnects, resuming where this page was. */
  rename(name) {
    this.name = name;
    this.reconnectNow();
  }

  reconnectNow() {
    if (this.stopped && !this.refused) return;
    this.refused = false;
    this.stopped = false;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.socket) {
      const socket = this.socket;
      this.detach(socket);
      socket.close(1000, 'reconnecting');
    }
    this.open();
  }

  /** Sends an intent; returns its id, or null when offline (the caller shows it). */
  sendIntent(action, fields = {}) {
    if (!this.isOpen) return null;
    const id = `i${this.nextId++}`;
    this.socket.send(JSON.stringify({ type: 'intent', id, action, ...fields }));
    return id;
  }

  async peekHistory() {
    try {
      const response = await fetch(this.httpURL('/api/state'), { cache: 'no-store' });
      if (!response.ok) return;
      const body = await response.json();
      if (typeof body.epoch === 'string' && Number.isInteger(body.seq)) {
        this.epoch = body.epoch;
        this.seq = Math.max(0, body.seq - HISTORY_PEEK);
        this.peeking = true;
      }
    } catch {
      // The WebSocket reports what is wrong; without history the page starts from the welcome's state.
    }
  }

  httpURL(path, extra = {}) {
    const params = new URLSearchParams({ room: this.room, ...extra });
    if (this.token) params.set('token', this.token);
    return `${path}?${params}`;
  }

  socketURL() {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const params = new URLSearchParams({ room: this.room, name: this.name });
    if (this.epoch !== null && this.seq !== null) {
      params.set('since', String(this.seq));
      params.set('epoch', this.epoch);
    }
    if (this.token) params.set('token', this.token);
    return `${scheme}://${location.host}/ws?${params}`;
  }

  open() {
    this.welcomed = false;
    this.report('connecting', this.attempt === 0 ? 'Connecting…' : `Connecting (attempt ${this.attempt + 1})…`);
    let socket;
    try {
      socket = new WebSocket(this.socketURL(), 'happy.v1');
    } catch (error) {
      this.report('refused', `Cannot connect: ${error.message}`);
      return;
    }
    this.socket = socket;
    socket.onmessage = (message) => this.receive(message.data);
    socket.onclose = (event) => this.closed(socket, event);
  }

  detach(socket) {
    socket.onmessage = null;
    socket.onclose = null;
    if (this.socket === socket) this.socket = null;
    clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      this.handlers.serverError({ code: 'bad_json', message: 'the server sent text that is not JSON' });
      return;
    }
    switch (message.type) {
      case 'welcome': return this.welcome(message);
      case 'event': return this.event(message);
      case 'resync':
        this.seq = message.seq;
        return this.handlers.resync(message);
      case 'presence': return this.handlers.presence(message);
      case 'pong': return this.pong(message);
      case 'error': return this.handlers.serverError(message);
      case 'ack': return this.handlers.ack?.(message);
      default: return undefined;
    }
  }

  welcome(message) {
    const firstVisit = this.peeking === true;
    this.peeking = false;
    this.welcomed = true;
    this.attempt = 0;
    this.epoch = message.epoch;
    this.welcomeSeq = message.seq;
    // Replayed events (seq up to welcome.seq) follow when recovered; otherwise the state is the truth.
    if (!message.recovered) this.seq = message.seq;
    if (message.limits) this.limits = message.limits;
    this.noteClock(message.serverTime, Infinity);
    this.handlers.welcome(message, { firstVisit });
    const resumed = message.recovered && !firstVisit;
    this.report('connected', `Connected to ${message.room} as ${message.you.name}`,
      resumed ? `resumed at seq ${message.seq}` : '', { recovered: message.recovered });
    this.ping();
    setTimeout(() => this.ping(), 1000);
    this.pingTimer = setInterval(() => this.ping(), PING_INTERVAL_MS);
  }

  event(message) {
    if (this.seq !== null && message.seq <= this.seq) return;
    this.seq = message.seq;
    const replayed = this.welcomeSeq !== null && message.seq <= this.welcomeSeq;
    this.handlers.event(message, { replayed });
  }

  ping() {
    if (!this.isOpen) return;
    const id = `p${this.nextId++}`;
    this.pings.set(id, performance.now());
    this.socket.send(JSON.stringify({ type: 'ping', id }));
  }

  pong(message) {
    const sentAt = this.pings.get(message.id);
    if (sentAt === undefined) return;
    this.pings.delete(message.id);
    const roundTrip = performance.now() - sentAt;
    this.noteClock(message.serverTime + roundTrip / 2, roundTrip);
  }

  /** Keeps the recent samples and uses the one with the shortest round trip. */
  noteClock(serverTime, roundTrip) {
    if (typeof serverTime !== 'number') return;
    this.clockSamples.push({ offset: serverTime - Date.now(), roundTrip });
    if (this.clockSamples.length > CLOCK_SAMPLES) this.clockSamples.shift();
    const best = this.clockSamples.reduce((a, b) => (b.roundTrip < a.roundTrip ? b : a));
    this.clockOffset = best.offset;
  }

  closed(socket, event) {
    const wasWelcomed = this.welcomed;
    this.detach(socket);
    this.welcomed = false;
    this.pings.clear();
    const meaning = CLOSE_REASONS[event.code] || 'closed';
    const why = `${event.code} ${meaning}${event.reason ? `: ${event.reason}` : ''}`;
    // Refused at admission (bad room, name or token): retrying would be refused again.
    if (event.code === 1008 && !wasWelcomed) {
      this.stopped = true;
      this.refused = true;
      this.report('refused', `Refused by the server (${why})`, '', { code: event.code, reason: event.reason });
      return;
    }
    this.scheduleRetry(why, event);
  }

  scheduleRetry(why, event) {
    const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.attempt);
    const delay = ceiling / 2 + Math.random() * ceiling / 2;
    this.attempt += 1;
    const retryAt = Date.now() + delay;
    this.report('reconnecting', `Disconnected (${why})`, `next attempt ${this.attempt} in`,
      { retryAt, code: event.code, reason: event.reason });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.open();
    }, delay);
  }

  report(phase, text, detail = '', extra = {}) {
    this.handlers.state({ phase, text, detail, ...extra });
  }
}
