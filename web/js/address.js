// What the page's address asks for (?room, ?token, ?seq, ?phase), and what
// in it the page does not understand: said once, then dropped from the
// address, rather than kept and silently ignored. A room name the server
// refuses is the server's to explain (the room notice).

const KNOWN = ['room', 'token', 'seq', 'phase'];

/**
 * Reads `search` (location.search). Returns `{ room, token, seq, phase, problems, cleaned }`:
 * `problems` are sentences naming each parameter not understood and what was done instead;
 * `cleaned` is the search string without them ('' or '?…').
 */
export function readAddress(search) {
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
  const cleaned = kept.toString();
  return {
    room: kept.get('room') || 'lobby',
    token: kept.get('token') || '',
    seq: kept.has('seq') ? Number(kept.get('seq')) : null,
    phase: kept.has('phase') ? Number(kept.get('phase')) : null,
    problems,
    cleaned: cleaned ? `?${cleaned}` : '',
  };
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
