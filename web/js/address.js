// What the page's address asks for (?room, ?seq, ?phase, and the access
// token as #token or ?token), and what in it the page does not understand:
// said once, then dropped from the address, rather than kept and silently
// ignored. A room name the server refuses is the server's to explain (the
// room notice).
//
// The token never stays in the address: it is kept in the tab's
// sessionStorage, so that it is neither in the address bar, the tab's
// history, a bookmark nor a link copied from the page. `#token=` is the
// preferred form, as browsers never send the fragment to the server.

const KNOWN = ['room', 'token', 'seq', 'phase'];
const TOKEN_STORAGE = 'happy.token';

/**
 * Reads `search` and `hash` (location.search and location.hash). Returns
 * `{ room, token, seq, phase, problems, cleaned }`: `token` is the fragment's, else the query's (empty when
 * neither has one); `problems` are sentences naming each parameter not understood and what was done instead;
 * `cleaned` is the address's search and fragment without them and without the token ('' or '?…', then '#…').
 */
export function readAddress(search, hash = '') {
  const params = new URLSearchParams(search);
  const problems = [];
  const kept = new URLSearchParams();
  for (const [key, value] of params) {
    if (!KNOWN.includes(key)) {
      problems.push(`“${key}” is not something this page understands (it knows ${KNOWN.join(', ')}).`);
      continue;
    }
    if (kept.has(key)) {
      problems.push(`“${key}” is given twice: the first, “${kept.get(key)}”, is used.`);
      continue;
    }
    const problem = valueProblem(key, value);
    if (problem) problems.push(problem);
    else kept.set(key, value);
  }
  const fragment = new URLSearchParams(hash.replace(/^#/, ''));
  const token = fragment.get('token') || kept.get('token') || '';
  const tokenGiven = fragment.has('token') || kept.has('token');
  fragment.delete('token');
  kept.delete('token');
  const cleaned = kept.toString();
  const cleanedFragment = fragment.toString();
  return {
    room: kept.get('room') || 'lobby',
    token,
    tokenGiven,
    seq: kept.has('seq') ? Number(kept.get('seq')) : null,
    phase: kept.has('phase') ? Number(kept.get('phase')) : null,
    problems,
    cleaned: `${cleaned ? `?${cleaned}` : ''}${cleanedFragment ? `#${cleanedFragment}` : ''}`,
  };
}

/**
 * The page's access token: one given in the address is kept in the tab's sessionStorage (replacing any
 * before it); without one, the one kept. Empty when there is none.
 */
export function accessToken(address) {
  try {
    if (address.token) sessionStorage.setItem(TOKEN_STORAGE, address.token);
    return address.token || sessionStorage.getItem(TOKEN_STORAGE) || '';
  } catch {
    return address.token; // Storage turned off: the token lasts as long as the page.
  }
}

function valueProblem(key, value) {
  switch (key) {
    case 'seq':
      return /^\d{1,15}$/.test(value) ? null
        : `“seq=${value}” is not an event number: showing the room live.`;
    case 'phase':
      return /^\d{1,2}$/.test(value) ? null
        : `“phase=${value}” is not a wave phase (0 to 99): the heart's wave moves.`;
    default:
      return null;
  }
}
