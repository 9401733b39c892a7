// The operator API (docs/PROTOCOL.md section 13) as the inspector page uses it:
// the rooms a page at a time, one room's connections, kick and delete. The
// credential (the server's operator key, or with auth.secret an admin token)
// goes in the Authorization header of every request.

/** Why a request got no answer it could use: `status` 0 when the server could not be reached. */
export class OperatorError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'OperatorError';
    this.status = status;
    this.code = code;
  }

  /** 401 or 403: no credential, a wrong one, one without the admin role, or a request from a name or page the server refuses. */
  get isAccess() {
    return this.status === 401 || this.status === 403;
  }
}

export class OperatorAPI {
  /** @param {{credential?: string, timeoutMs?: number}} options; `credential` may change between requests. */
  constructor({ credential = '', timeoutMs = 5000 } = {}) {
    this.credential = credential;
    this.timeoutMs = timeoutMs;
  }

  /** `{rooms: [{room, epoch, seq, clients, observers, delivery, lastEventTime}], next}` */
  rooms({ limit, after = null }) {
    const query = new URLSearchParams({ limit: String(limit) });
    if (after !== null) query.set('after', after);
    return this.#request('GET', `/api/rooms?${query}`);
  }

  /** The room's summary and `connections: [{id, name, role, observer, address, connectedAt, queuedBytes, resyncs, rateLimited}]`. */
  room(name) {
    return this.#request('GET', `/api/rooms/${encodeURIComponent(name)}`);
  }

  /** `{kicked}`: how many connections closed with 4003. `target` is `{id}` or `{name}`. */
  kick(room, target, reason = '') {
    return this.#request('POST', `/api/rooms/${encodeURIComponent(room)}/kick`, { ...target, ...(reason ? { reason } : {}) });
  }

  /** `{room, deleted, closed}` */
  deleteRoom(room) {
    return this.#request('DELETE', `/api/rooms/${encodeURIComponent(room)}`);
  }

  async #request(method, path, body) {
    const headers = {};
    if (this.credential) headers.Authorization = `Bearer ${this.credential}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(path, {
        method, headers, cache: 'no-store', body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      // fetch says only "Failed to fetch" (a TypeError) for a refused or broken connection.
      const why = error.name === 'TimeoutError' ? `no answer within ${this.timeoutMs / 1000} s`
        : error.name === 'TypeError' ? 'the connection failed' : error.message;
      throw new OperatorError(0, 'unreachable', why);
    }
    let answer = null;
    try {
      answer = await response.json();
    } catch {
      // Said below: an answer that is not JSON.
    }
    if (!response.ok) {
      throw new OperatorError(response.status, answer?.code ?? 'http_error', answer?.message ?? `HTTP ${response.status}`);
    }
    if (answer === null || typeof answer !== 'object') throw new OperatorError(response.status, 'unreadable', 'the answer is not JSON');
    return answer;
  }
}
