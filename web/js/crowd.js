// What the page shows of a crowd room (PROTOCOL.md section 12): the dragon's
// presses in the last second, from ticks (their `votes`, else their `names`)
// or from events one by one (a voted event's `votes`), and the most recent
// distinct senders. happyclient's `play` counts the same way
// (Sources/HappyClientCLI/Play/CrowdTally.swift).
import { EVENTS } from './protocol.js';

/** Presses older than this are no longer counted, in ms. */
export const TALLY_WINDOW_MS = 1000;
/** How many recent senders are named. */
export const RECENT_LIMIT = 8;
/** How long a room still counts as a crowd after its last sign of one (a tick, a batch of joins, a voted event), in ms. */
export const CROWD_LINGERS_MS = 10000;

export class CrowdTally {
  constructor() {
    /** {at, forward, back}, oldest first. */
    this.presses = [];
    /** The most recent distinct senders, newest first: [{id, name}]. */
    this.recent = [];
    this.lastSign = -Infinity;
  }

  /** A tick came (`now`: performance.now()). */
  addTick(tick, now) {
    this.lastSign = now;
    if (!(tick.seq >= tick.from)) return;
    if (tick.votes) this.note(tick.votes.forward, tick.votes.back, now);
    else this.note(tick.names?.[EVENTS.forwardButtonClicked.name] ?? 0, tick.names?.[EVENTS.backButtonClicked.name] ?? 0, now);
    const senders = Array.isArray(tick.senders) ? tick.senders : [];
    for (let i = senders.length - 1; i >= 0; i -= 1) this.noteSender(senders[i]);
  }

  /** An event came on its own (`each` delivery). */
  addEvent(event, now) {
    if (event.votes) {
      this.lastSign = now;
      this.note(event.votes.forward, event.votes.back, now);
      return;
    }
    if (event.name === EVENTS.forwardButtonClicked.name) this.note(1, 0, now);
    else if (event.name === EVENTS.backButtonClicked.name) this.note(0, 1, now);
    if (event.sender?.id) this.noteSender(event.sender);
  }

  /** A batch of joins and leaves came: the room is a crowd. */
  sawCrowd(now) {
    this.lastSign = now;
  }

  /** Presses of each button within the last second: {forward, back}. */
  counts(now) {
    let forward = 0;
    let back = 0;
    for (const entry of this.presses) {
      if (now - entry.at >= TALLY_WINDOW_MS) continue;
      forward += entry.forward;
      back += entry.back;
    }
    return { forward, back };
  }

  isCrowd(now, delivery) {
    return delivery === 'tick' || now - this.lastSign < CROWD_LINGERS_MS;
  }

  note(forward, back, now) {
    while (this.presses.length > 0 && now - this.presses[0].at >= TALLY_WINDOW_MS) this.presses.shift();
    if (forward > 0 || back > 0) this.presses.push({ at: now, forward, back });
  }

  noteSender(sender) {
    // Intents over HTTP all come from id "http": those are told apart by name.
    const same = (known) => known.id === sender.id && (sender.id !== 'http' || known.name === sender.name);
    const at = this.recent.findIndex(same);
    if (at >= 0) this.recent.splice(at, 1);
    this.recent.unshift(sender);
    if (this.recent.length > RECENT_LIMIT) this.recent.pop();
  }
}
