// Gestures and controls coalesced into intents: at most one intent per
// stream every `interval` ms, so a drag or a pinch stays under the server's
// rate limit (welcome.limits.intentsPerSecond) while nothing is lost.
import { ACTIONS } from './protocol.js';

/** Sends the value accumulated since the last send, at most once per interval. */
export class Coalescer {
  /**
   * take(): returns the intent to send now ({action, fields}) or null, and
   * keeps what is left for later; send(action, fields) sends it.
   */
  constructor(intervalMs, take, send) {
    this.intervalMs = intervalMs;
    this.take = take;
    this.send = send;
    this.lastSent = -Infinity;
    this.timer = null;
  }

  /** Something new is pending: send it now if the interval allows, else once it does. */
  poke() {
    if (this.timer !== null) return;
    const wait = this.lastSent + this.intervalMs - performance.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => { this.timer = null; this.flush(); }, wait);
  }

  flush() {
    const intent = this.take();
    if (intent === null) return;
    this.lastSent = performance.now();
    this.send(intent.action, intent.fields);
    // What could not go in one intent (a delta beyond ±100) goes next time.
    this.poke();
  }
}

/** Interval that keeps one stream at about a third of the connection's rate limit, at most 20/s. */
export function streamInterval(limits) {
  const perSecond = limits && limits.intentsPerSecond > 0 ? limits.intentsPerSecond : 60;
  return Math.max(50, 3000 / perSecond);
}

/** How long after the last wheel step the wheel still counts as a pinch in progress. */
const WHEEL_PINCH_MS = 400;

/**
 * The face's gestures, like the seed's recognisers: a vertical pan changes
 * happiness by −translation.y / 2; a two-finger pinch and the wheel scale it
 * (scale *= gesture.scale); arrow and +/− keys for the keyboard.
 * `activity(kind)`, when given, hears the gesture in progress whenever it
 * changes: `drag` (one finger or the mouse button down), `pinch` (two
 * fingers, or the wheel until it rests), `idle`.
 */
export function attachFaceGestures(canvas, { nudge, pinch, activity = () => {} }) {
  const pointers = new Map();
  let lastY = 0;
  let lastDistance = 0;
  let wheeling = null;
  let reported = 'idle';

  const report = () => {
    const now = pointers.size >= 2 || wheeling !== null ? 'pinch' : pointers.size === 1 ? 'drag' : 'idle';
    if (now === reported) return;
    reported = now;
    activity(now);
  };

  const distance = () => {
    const [a, b] = [...pointers.values()];
    return Math.hypot(a.x - b.x, a.y - b.y);
  };

  canvas.addEventListener('pointerdown', (event) => {
    if (event.pointerType === 'mouse' && event.button !== 0) return;
    canvas.setPointerCapture(event.pointerId);
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.size === 1) lastY = event.clientY;
    if (pointers.size === 2) lastDistance = distance();
    event.preventDefault();
    report();
  });

  canvas.addEventListener('pointermove', (event) => {
    const pointer = pointers.get(event.pointerId);
    if (!pointer) return;
    pointer.x = event.clientX;
    pointer.y = event.clientY;
    if (pointers.size === 1) {
      nudge.add(-(event.clientY - lastY) / 2);
      lastY = event.clientY;
    } else if (pointers.size === 2) {
      const now = distance();
      if (lastDistance > 0 && now > 0) pinch.add(now / lastDistance);
      lastDistance = now;
    }
  });

  const end = (event) => {
    if (!pointers.delete(event.pointerId)) return;
    // The pan resumes from the finger that stays, without a jump.
    if (pointers.size === 1) lastY = [...pointers.values()][0].y;
    nudge.flush();
    pinch.flush();
    report();
  };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);

  canvas.addEventListener('wheel', (event) => {
    event.preventDefault();
    const pixels = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaMode === 2 ? event.deltaY * 400 : event.deltaY;
    pinch.add(Math.exp(-pixels * 0.002));
    clearTimeout(wheeling);
    wheeling = setTimeout(() => { wheeling = null; report(); }, WHEEL_PINCH_MS);
    report();
  }, { passive: false });

  canvas.addEventListener('keydown', (event) => {
    const steps = { ArrowUp: 5, ArrowDown: -5, PageUp: 20, PageDown: -20 };
    if (event.key in steps) {
      nudge.add(steps[event.key]);
      nudge.flush();
    } else if (event.key === '+' || event.key === '=') {
      pinch.add(1.1);
      pinch.flush();
    } else if (event.key === '-' || event.key === '_') {
      pinch.add(1 / 1.1);
      pinch.flush();
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
  });
}

/** Accumulates pan deltas; sends whole units (−100…100), keeping the fraction for later. */
export function happinessStream(intervalMs, send) {
  let pending = 0;
  const coalescer = new Coalescer(intervalMs, () => {
    const whole = Math.max(-100, Math.min(100, Math.trunc(pending)));
    if (whole === 0) return null;
    pending -= whole;
    return { action: ACTIONS.nudgeHappiness.name, fields: { delta: whole } };
  }, send);
  return {
    add(delta) { pending += delta; coalescer.poke(); },
    flush() { coalescer.flush(); },
  };
}

/** Multiplies pinch and wheel factors together; sends the product. */
export function scaleStream(intervalMs, send) {
  let factor = 1;
  const coalescer = new Coalescer(intervalMs, () => {
    if (Math.abs(factor - 1) < 1e-4) return null;
    const value = factor;
    factor = 1;
    return { action: ACTIONS.pinch.name, fields: { factor: value } };
  }, send);
  return {
    add(f) { if (f > 0 && Number.isFinite(f)) { factor *= f; coalescer.poke(); } },
    flush() { coalescer.flush(); },
  };
}

/** Keeps only the latest value (a slider); `fields(value)` makes the intent's fields. */
export function latestValueStream(intervalMs, action, send) {
  let pending = null;
  const coalescer = new Coalescer(intervalMs, () => {
    if (pending === null) return null;
    const fields = pending;
    pending = null;
    return { action, fields };
  }, send);
  return {
    /** Merges `fields` into what is pending (heart.setStyle takes several at once). */
    set(fields) { pending = { ...(pending || {}), ...fields }; coalescer.poke(); },
    flush() { coalescer.flush(); },
    get pending() { return pending !== null; },
  };
}
