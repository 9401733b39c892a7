// Live pointers on the page (PROTOCOL.md section 10): this page's own pointer,
// told to the room while the mouse or a finger is over a view, and the
// others' pointers, drawn on a layer of their own above each view so the
// views' canvases are never redrawn for them.

/** A pointer that has not moved for this long fades out. */
export const FADE_AFTER_MS = 3000;
/** Someone whose pointer moved this recently is steering, even when idle. */
export const STEERING_MS = 2000;
/** How often faded pointers and steering marks are brought up to date. */
const TICK_MS = 250;

const VIEW_NAMES = ['face', 'heart', 'dragon'];

/** A colour of its own for each client, the same on every screen: a hue from a hash of its id. */
export function pointerColor(id) {
  let hash = 0x811c9dc5; // FNV-1a,
  for (const character of String(id)) {
    hash ^= character.codePointAt(0);
    hash = Math.imul(hash, 0x01000193);
  }
  // then mixed, so that ids one character apart (c7, c8) get hues far apart.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return `hsl(${(hash >>> 0) % 360} 72% 40%)`;
}

/**
 * This page's pointer: where the mouse or a finger is over one of the views'
 * boxes, as 0..1 across and down that box, and the gesture in progress.
 * `send(view, x, y, activity)` hears every change; `send(null)` when the
 * pointer left the views.
 */
export class OwnPointer {
  /** @param {{face: Element, heart: Element, dragon: Element}} boxes */
  constructor(boxes, send) {
    this.send = send;
    this.gesture = 'idle';
    this.pressing = false;
    /** Pointers over a view: pointerId → {view, x, y}. Two fingers on the face point between them. */
    this.over = new Map();
    /** What was last sent, with `at` (Date.now()) for the tests: {view, x, y, activity, at} or null. */
    this.current = null;
    for (const view of VIEW_NAMES) {
      const box = boxes[view];
      const place = (event) => this.place(event, view, box);
      box.addEventListener('pointerenter', place);
      box.addEventListener('pointerdown', place);
      box.addEventListener('pointermove', place);
      const leave = (event) => {
        if (this.over.delete(event.pointerId)) this.update();
      };
      box.addEventListener('pointerleave', leave);
      box.addEventListener('pointercancel', leave);
    }
  }

  /** The face's gesture in progress: `drag`, `pinch` or `idle`. */
  setGesture(kind) {
    if (kind === this.gesture) return;
    this.gesture = kind;
    this.update();
  }

  /** Whether a dragon button is held down. */
  setPressing(pressing) {
    if (pressing === this.pressing) return;
    this.pressing = pressing;
    this.update();
  }

  get activity() {
    return this.pressing ? 'press' : this.gesture;
  }

  place(event, view, box) {
    const rect = box.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) return;
    // A captured pointer (a drag on the face) keeps moving past the box's edges: it stays on them.
    const x = Math.min(1, Math.max(0, (event.clientX - rect.left) / rect.width));
    const y = Math.min(1, Math.max(0, (event.clientY - rect.top) / rect.height));
    this.over.set(event.pointerId, { view, x, y });
    this.update();
  }

  update() {
    const spots = [...this.over.values()];
    const view = spots.length > 0 ? spots[spots.length - 1].view : null;
    if (view === null) {
      if (this.current === null) return;
      this.current = null;
      this.send(null);
      return;
    }
    const here = spots.filter((spot) => spot.view === view);
    const x = here.reduce((sum, spot) => sum + spot.x, 0) / here.length;
    const y = here.reduce((sum, spot) => sum + spot.y, 0) / here.length;
    const activity = this.activity;
    const last = this.current;
    if (last && last.view === view && last.x === x && last.y === y && last.activity === activity) return;
    this.current = { view, x, y, activity, at: Date.now() };
    this.send(view, x, y, activity);
  }
}

/**
 * The others' pointers over the views: an arrow in the client's colour with
 * its name beside it and its activity around the tip (a ring while dragging,
 * two dots while pinching, a filled circle while pressing). A pointer fades
 * after FADE_AFTER_MS without moving and is removed when it is gone.
 * `changed()` is called whenever who is steering may have changed.
 */
export class PointerOverlay {
  /** @param {{face: Element, heart: Element, dragon: Element}} layers */
  constructor(layers, { changed = () => {} } = {}) {
    this.layers = layers;
    this.changed = changed;
    /** id → {pointer, element, movedAt (performance.now()), receivedAt (Date.now()), faded} */
    this.shown = new Map();
    this.timer = null;
  }

  /** A `pointers` change from the client: `pointers` is every visible pointer. */
  update({ pointers, gone }) {
    const visible = new Map(pointers.filter((pointer) => this.layers[pointer.view]).map((pointer) => [pointer.id, pointer]));
    for (const id of gone) visible.delete(id);
    for (const [id, entry] of this.shown) {
      if (!visible.has(id)) {
        entry.element.remove();
        this.shown.delete(id);
      }
    }
    for (const pointer of visible.values()) this.show(pointer);
    if (this.shown.size > 0 && this.timer === null) this.timer = setInterval(() => this.tick(), TICK_MS);
    if (this.shown.size === 0) this.stopTimer();
    this.changed();
  }

  show(pointer) {
    let entry = this.shown.get(pointer.id);
    if (!entry) {
      entry = { pointer: null, element: makeMarker(pointer.id), movedAt: 0, receivedAt: 0, faded: false };
      this.shown.set(pointer.id, entry);
    }
    const before = entry.pointer;
    if (before && before.view === pointer.view && before.x === pointer.x && before.y === pointer.y
        && before.activity === pointer.activity && before.name === pointer.name) return;
    entry.pointer = pointer;
    entry.movedAt = performance.now();
    entry.receivedAt = Date.now();
    const { element } = entry;
    const layer = this.layers[pointer.view];
    if (element.parentElement !== layer) layer.append(element);
    element.style.left = `${pointer.x * 100}%`;
    element.style.top = `${pointer.y * 100}%`;
    // Near the right or bottom edge the name goes on the other side, inside the view.
    element.classList.toggle('flip', pointer.x > 0.65);
    element.classList.toggle('raise', pointer.y > 0.85);
    element.dataset.activity = pointer.activity;
    element.dataset.view = pointer.view;
    const label = element.querySelector('.pointer-name');
    if (label.textContent !== pointer.name) label.textContent = pointer.name;
    this.setFaded(entry, false);
  }

  setFaded(entry, faded) {
    if (entry.faded === faded) return;
    entry.faded = faded;
    entry.element.classList.toggle('faded', faded);
  }

  tick() {
    const now = performance.now();
    for (const entry of this.shown.values()) this.setFaded(entry, now - entry.movedAt >= FADE_AFTER_MS);
    this.changed();
  }

  stopTimer() {
    clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * What the person with this id is steering right now, `{view, activity}`, or null: a pointer
   * with a gesture in progress, or one that moved in the last STEERING_MS.
   */
  steering(id) {
    const entry = this.shown.get(id);
    if (!entry) return null;
    const { view, activity } = entry.pointer;
    if (activity !== 'idle' || performance.now() - entry.movedAt < STEERING_MS) return { view, activity };
    return null;
  }

  /** The pointers drawn now, for the tests: id, name, view, x, y, activity, faded, steering, receivedAt. */
  list() {
    return [...this.shown.entries()].map(([id, entry]) => {
      const { name, view, x, y, activity } = entry.pointer;
      return { id, name, view, x, y, activity, faded: entry.faded, steering: this.steering(id) !== null,
               receivedAt: entry.receivedAt };
    });
  }
}

const ARROW_PATH = 'M1 1 V16.5 L5 12.8 L8 19.2 L10.8 18 L7.9 11.7 H13.2 Z';

function makeMarker(id) {
  const element = document.createElement('div');
  element.className = 'pointer';
  element.dataset.id = id;
  element.style.setProperty('--pointer-color', pointerColor(id));
  const activity = document.createElement('span');
  activity.className = 'pointer-activity';
  const svgNS = 'http://www.w3.org/2000/svg';
  const arrow = document.createElementNS(svgNS, 'svg');
  arrow.setAttribute('class', 'pointer-arrow');
  arrow.setAttribute('viewBox', '0 0 15 21');
  const path = document.createElementNS(svgNS, 'path');
  path.setAttribute('d', ARROW_PATH);
  arrow.append(path);
  const name = document.createElement('span');
  name.className = 'pointer-name';
  element.append(activity, arrow, name);
  return element;
}
