// A room's recorded past over HTTP (PROTOCOL.md section 11): pages of events
// exactly as they were broadcast, and the room as it was after any held event.

/** A history request the server refused: `status` is the HTTP status, `code` the error code (`gone`, `invalid_value`, …). */
export class HistoryError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'HistoryError';
    this.status = status;
    this.code = code;
  }
}

/** The server's largest page (`limit` 1..1000). */
export const MAX_PAGE = 1000;

/** The longest pause a replay keeps between two events, in ms of the room's own time. */
export const MAX_REPLAY_PAUSE_MS = 1000;

/**
 * How long a replay at `speed` (1, 4, 16…) waits before an event that happened at `time`, after one
 * at `previousTime` (ms): the real gap, a pause longer than a second shortened to a second, divided
 * by the speed. Without a previous time (the first event held), no wait.
 */
export function replayPause(previousTime, time, speed) {
  if (typeof previousTime !== 'number' || typeof time !== 'number') return 0;
  const gap = Math.min(MAX_REPLAY_PAUSE_MS, Math.max(0, time - previousTime));
  return gap / (speed > 0 ? speed : 1);
}

export class RoomHistory {
  /** urlFor(path, query): the address of one of the server's routes for this room, its token included. */
  constructor(urlFor) {
    this.urlFor = urlFor;
  }

  /**
   * `{room, epoch, seq, first, events}`: the events after `since` (from the oldest held when
   * undefined), oldest first, at most `limit`.
   */
  page(since, limit = 100) {
    const query = { limit: String(Math.max(1, Math.min(MAX_PAGE, limit))) };
    if (since !== undefined) query.since = String(since);
    return this.get('/api/history', query);
  }

  /** `{room, epoch, seq, state, dragonStatus}`: the room right after event `seq`. */
  stateAt(seq) {
    return this.get('/api/state', { seq: String(seq) });
  }

  async get(path, query) {
    const response = await fetch(this.urlFor(path, query), { cache: 'no-store' });
    let body = null;
    try {
      body = await response.json();
    } catch {
      // Not JSON (a server without these routes answers its 404 page): told by the status below.
    }
    if (!response.ok) {
      throw new HistoryError(response.status, body?.code ?? 'http_error', body?.message ?? `HTTP ${response.status} for ${path}`);
    }
    return body;
  }
}
