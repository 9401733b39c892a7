// The page's room connection, on top of happy-client.js (which speaks the
// protocol, reconnects and resumes): a first visit starts from the room's
// recent events, and the client's status becomes the texts the page shows.
import { connect, describeClose, CLOSE_REASONS, DEFAULT_LIMITS } from './happy-client.js';

export { CLOSE_REASONS };

/** On a first visit, the last events are replayed so the status label and log start filled in. */
const HISTORY_PEEK = 100;

export class RoomConnection {
  /**
   * handlers: welcome(msg, {firstVisit}), event(msg, {replayed}), tick(msg, {fresh, missed}),
   * delivery({mode, tickMs}), resync(msg), presence({people, count, joined?, left?, batch?, tick?}),
   * pointers({pointers, changed, gone}),
   * serverError(error), state({phase, text, detail, retryAt}).
   */
  constructor({ room, name, token, handlers }) {
    this.room = room;
    this.name = name;
    this.token = token;
    this.handlers = handlers;
    this.client = null;
    this.peeking = false;
    this.firstVisit = false;
  }

  /** Server time now, in ms (PROTOCOL.md section 8). */
  serverNow() {
    return this.client ? this.client.serverNow() : Date.now();
  }

  get isOpen() {
    return this.client !== null && this.client.connected;
  }

  get epoch() {
    return this.client?.epoch ?? null;
  }

  get seq() {
    return this.client?.seq ?? null;
  }

  /** The room's latest scene. */
  get state() {
    return this.client?.state ?? null;
  }

  /** `each` or `tick` (PROTOCOL.md section 12). */
  get delivery() {
    return this.client?.delivery ?? 'each';
  }

  get tickMs() {
    return this.client?.tickMs ?? 50;
  }

  get limits() {
    return this.client ? this.client.limits : DEFAULT_LIMITS;
  }

  async start() {
    const since = await this.peekHistory();
    this.client = connect({ room: this.room, name: this.name, token: this.token || undefined, ...since });
    const { handlers } = this;
    this.client.on('welcome', (welcome) => {
      this.firstVisit = this.peeking;
      this.peeking = false;
      handlers.welcome(welcome, { firstVisit: this.firstVisit });
    });
    this.client.on('event', (event, details) => handlers.event(event, details));
    this.client.on('tick', (tick, details) => handlers.tick(tick, details));
    this.client.on('delivery', (delivery) => handlers.delivery(delivery));
    this.client.on('resync', (resync) => handlers.resync(resync));
    this.client.on('presence', (change) => handlers.presence(change));
    this.client.on('pointers', (change) => handlers.pointers(change));
    this.client.on('error', (error) => handlers.serverError(error));
    this.client.on('status', (status) => this.report(status));
  }

  /** Changes the display name: reconnects, resuming where this page was. */
  rename(name) {
    this.name = name;
    this.client?.reconnect({ name });
  }

  reconnectNow() {
    this.client?.reconnect();
  }

  /** Sends an intent; returns its promise, or null when offline (the caller shows it). */
  sendIntent(action, fields = {}) {
    if (!this.isOpen) return null;
    const sent = this.client.intent(action, fields);
    // The server's errors are shown; an answer lost with the connection is not (the page resumes).
    sent.catch((error) => {
      if (error.fromServer) this.handlers.serverError(error);
    });
    return sent;
  }

  /** Shows the others where this page points (null hides it); the client paces and keeps it while offline. */
  sendPointer(view, x, y, activity) {
    this.client?.sendPointer(view, x, y, activity);
  }

  /** since and epoch that replay the room's last events, or nothing when the room cannot be read. */
  async peekHistory() {
    try {
      const response = await fetch(this.httpURL('/api/state'), { cache: 'no-store' });
      if (!response.ok) return {};
      const body = await response.json();
      if (typeof body.epoch === 'string' && Number.isInteger(body.seq)) {
        this.peeking = true;
        return { since: Math.max(0, body.seq - HISTORY_PEEK), epoch: body.epoch };
      }
    } catch {
      // The WebSocket reports what is wrong; without history the page starts from the welcome's state.
    }
    return {};
  }

  httpURL(path, extra = {}) {
    const params = new URLSearchParams({ room: this.room, ...extra });
    if (this.token) params.set('token', this.token);
    return `${path}?${params}`;
  }

  /** The client's status in the page's words. */
  report(status) {
    const { phase, failures, code, reason } = status;
    switch (phase) {
      case 'connecting':
        return this.tell(phase, failures === 0 ? 'Connecting…' : `Connecting (attempt ${failures + 1})…`);
      case 'connected': {
        const welcome = this.client.welcome;
        const resumed = status.recovered && !this.firstVisit;
        return this.tell(phase, `Connected to ${welcome.room} as ${welcome.you.name}`,
          resumed ? `resumed at seq ${welcome.seq}` : '', { recovered: status.recovered });
      }
      case 'reconnecting':
        // 1012: the server is restarting or being upgraded; the client is back within 250 ms.
        if (code === 1012) return this.tell(phase, 'Server restarting: reconnecting…', '', { code, reason });
        return this.tell(phase, `Disconnected (${describeClose(code, reason)})`, `next attempt ${failures} in`,
          { retryAt: status.retryAt, code, reason });
      case 'refused':
        if (code === undefined) return this.tell(phase, `Cannot connect: ${status.error}`);
        return this.tell(phase, `Refused by the server (${describeClose(code, reason)})`, '', { code, reason });
      case 'removed':
        // Not retried: an operator closed this page's connection (4003) or deleted the room (4004).
        return this.tell(phase, `${status.message[0].toUpperCase()}${status.message.slice(1)}`, '', { code, reason });
      default:
        return this.tell(phase, 'Closed');
    }
  }

  tell(phase, text, detail = '', extra = {}) {
    this.handlers.state({ phase, text, detail, ...extra });
  }
}
