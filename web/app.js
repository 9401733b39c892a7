// The Happy page: the room's shared scene drawn on three canvases, steered by
// the seeds' gestures and controls, kept live over /ws.
import { loadArt } from './js/art.js';
import { PanelLayout, drawComposite, drawFitted, waveStep } from './js/drawing.js';
import { RoomConnection } from './js/connection.js';
import { CanvasView, faceView, heartView, dragonView } from './js/views.js';
import { attachFaceGestures, happinessStream, scaleStream, latestValueStream, streamInterval } from './js/gestures.js';
import { statusAfter, statusBy, statusAfterTick, eventLine, tickLine, faceDescription, heartDescription, dragonDescription,
  timeOfDay } from './js/describe.js';
import { describeDelivery, describePresenceBatch } from './js/happy-client.js';
import { CrowdTally } from './js/crowd.js';
import { storedName, askName } from './js/name-dialog.js';
import { OwnPointer, PointerOverlay, pointerColor } from './js/pointers.js';
import { RoomHistory } from './js/history.js';
import { HistoryBar } from './js/history-bar.js';
import { readAddress, accessToken } from './js/address.js';
import { ACTIONS } from './js/protocol.js';

const $ = (id) => document.getElementById(id);
const LOG_LIMIT = 40;
const EDIT_GRACE_MS = 800;
/** The people list names at most this many; the count says how many more. */
const PEOPLE_SHOWN = 40;
/** How often the crowd's tally is redrawn while presses age out of its last second, in ms. */
const TALLY_REDRAW_MS = 200;

const address = readAddress(location.search, location.hash);
const room = address.room;
const token = accessToken(address);
// Out of the address bar and the tab's history at once: what the page did not understand, and the token.
if (address.problems.length > 0 || address.tokenGiven) {
  history.replaceState(null, '', `${location.pathname}${address.cleaned}`);
}
const pinnedStep = address.phase;
/** `?seq=N` opens the room as it was right after event N. */
const openedSeq = address.seq;

/** Everything the views draw from: the room now, or a moment of its past that the history bar shows. */
const model = {
  state: {
    face: { happiness: 50, smile: 0, scale: 0.9 },
    heart: { rate: 0.5, fillColor: '#ff0000', strokeColor: '#000000', lineWidth: 1 },
    dragon: { x: 10, y: 10, hidden: false },
  },
  geometry: { width: 375, height: 180, dragonSize: 100, step: 10 },
  layout: null,
  /** The status label: the server's text for the last dragon event, and who caused it. */
  status: { text: "dragon's status", by: null },
  presence: new Map(),
  presenceCount: 0,
  /** Bumped on every change of the people, so the list is rebuilt only then. */
  presenceVersion: 0,
  /** How the room's events arrive (PROTOCOL.md section 12): `each`, or `tick` every tickMs. */
  delivery: 'each',
  tickMs: 50,
  you: null,
  recovered: false,
  connection: { phase: 'connecting', text: 'Connecting…' },
  step: () => (pinnedStep !== null ? pinnedStep : waveStep(connection ? connection.serverNow() : Date.now())),
};

/** The room now, as the connection keeps it; shown unless the history bar shows the past. */
const live = {
  state: model.state,
  status: model.status,
  /** The log's entries, oldest first: {kind, line (an event's, from eventLine) or text}. */
  log: [],
};

let art = null;
let connection = null;
let views = [];
let sceneView = null;
let overlay = null;
let ownPointer = null;
let historyBar = null;
const lastLocalEdit = new Map();
const crowd = new CrowdTally();
/** Messages only mark what changed; the next animation frame shows it, once however many came. */
let liveChanged = false;
/** Log entries not yet on the page, and whether the log follows its newest line (not scrolled back). */
let logQueue = [];
let logFollows = true;

// MARK: start

async function start() {
  $('room-name').textContent = room;
  document.title = `Happy · ${room}`;
  if (address.problems.length > 0) {
    showError(`Part of this page's address was not understood. ${address.problems.join(' ')}`);
  }
  try {
    art = await loadArt();
  } catch (error) {
    showError(`The scene art could not be loaded: ${error.message}`);
    return;
  }
  live.status = { text: art.panel.initialStatus, by: null };
  model.layout = new PanelLayout(art, model.geometry);
  views = [faceView($('face'), model), heartView($('heart'), model), dragonView($('dragon'), model)];
  overlay = new PointerOverlay({ face: $('face-pointers'), heart: $('heart-pointers'), dragon: $('dragon-pointers') },
    { changed: renderSteering });
  ownPointer = new OwnPointer({ face: $('face'), heart: $('heart'), dragon: $('panel') },
    (view, x, y, activity) => connection?.sendPointer(view, x, y, activity));
  layoutPanel();
  wireControls();
  wireHistory();
  present();
  requestAnimationFrame(frame);

  let name = storedName();
  if (!name) {
    model.connection = { phase: 'connecting', text: 'Choose a name to join' };
    renderConnection();
    name = await askName(null);
  }
  $('you-name').textContent = name;
  connection = new RoomConnection({ room, name, token, handlers });
  wireStreams();
  await connection.start();
}

function frame(now) {
  showPending(now);
  for (const view of views) view.update();
  if (sceneView && !$('frame-compare').hidden) sceneView.update();
  requestAnimationFrame(frame);
}

/** Shows what the live messages changed since the last frame: views, label, people, new log lines, the crowd. */
function showPending(now) {
  const changed = liveChanged;
  liveChanged = false;
  if (changed) presentLive();
  flushLog();
  renderCrowd(now, changed);
}

// MARK: messages from the server

const handlers = {
  welcome(message, { firstVisit }) {
    model.you = message.you;
    model.recovered = message.recovered && !firstVisit;
    if (message.scene && JSON.stringify(message.scene) !== JSON.stringify(model.geometry)) {
      model.geometry = message.scene;
      model.layout = new PanelLayout(art, model.geometry);
      layoutPanel();
    }
    live.state = message.state;
    model.presence = new Map(message.presence.map((p) => [p.id, p]));
    model.presenceCount = message.presenceCount;
    model.presenceVersion += 1;
    model.delivery = connection.delivery;
    model.tickMs = connection.tickMs;
    $('you-name').textContent = message.you.name;
    wireStreams();
    if (!message.recovered && firstVisit) live.status = { text: art.panel.initialStatus, by: null };
    historyBar.liveMoved(message.seq, { epoch: message.epoch });
    present();
  },

  event(event, { replayed }) {
    // The room's latest scene: a replayed event's own state is older than the welcome's.
    live.state = connection.state;
    if (!replayed) crowd.addEvent(event, performance.now());
    const status = statusAfter(event.name, event.state.dragon, art.panel.initialStatus);
    if (status !== undefined) live.status = { text: status, by: statusBy(event) };
    addLog({ line: eventLine(event), kind: replayed ? 'past' : 'event' });
    // The events a first visit replays happened before the page came; the ones a resume replays were missed.
    historyBar.liveMoved(event.seq, { counted: !(replayed && connection.firstVisit) });
    liveChanged = true;
  },

  /** A crowd room's tick: every event since the last one, counted by name, in one line of the log. */
  tick(tick, { fresh, missed }) {
    live.state = connection.state;
    crowd.addTick(tick, performance.now());
    const status = statusAfterTick(tick, art.panel.initialStatus);
    if (status !== undefined) live.status = status;
    if (missed) {
      const which = missed.from === missed.to ? `event #${missed.from}` : `events #${missed.from}–${missed.to}`;
      addLog({ text: `${timeOfDay(Date.now())} ${which} did not arrive (the scene is current)`, kind: 'note' });
    }
    addLog({ line: tickLine(tick), kind: 'tick' });
    if (fresh > 0) historyBar.liveMoved(tick.seq, { counted: fresh });
    liveChanged = true;
  },

  delivery(delivery) {
    model.delivery = delivery.mode;
    model.tickMs = delivery.tickMs;
    addLog({ text: `${timeOfDay(Date.now())} ${describeDelivery(delivery)}`, kind: 'note' });
    liveChanged = true;
  },

  resync(message) {
    live.state = message.state;
    if (Array.isArray(message.presence)) model.presence = new Map(message.presence.map((p) => [p.id, p]));
    model.presenceVersion += 1;
    if (typeof message.presenceCount === 'number') model.presenceCount = message.presenceCount;
    addLog({ text: `${timeOfDay(Date.now())} resync at seq ${message.seq}: the server sent the whole scene`, kind: 'note' });
    historyBar.liveMoved(message.seq, { epoch: typeof message.epoch === 'string' ? message.epoch : null });
    if (historyBar.viewing === null) present();
    else renderPresence();
  },

  presence({ people, count, joined, left, batch, tick }) {
    model.presence = new Map(people.map((p) => [p.id, p]));
    model.presenceCount = count;
    model.presenceVersion += 1;
    if (joined) addLog({ text: `${timeOfDay(Date.now())} ${joined.name} joined`, kind: 'note' });
    if (left) addLog({ text: `${timeOfDay(Date.now())} ${left.name} left`, kind: 'note' });
    if (batch) {
      crowd.sawCrowd(performance.now());
      // A tick's joins and leaves are in the tick's own line.
      if (!tick) addLog({ text: `${timeOfDay(Date.now())} ${describePresenceBatch(batch)}`, kind: 'note' });
    }
    liveChanged = true;
  },

  pointers(change) {
    overlay.update(change);
  },

  serverError(error) {
    showError(`${error.code}: ${error.message}`);
    addLog({ text: `${timeOfDay(Date.now())} error ${error.code}: ${error.message}`, kind: 'error' });
  },

  state(report) {
    model.connection = report;
    renderConnection();
    renderPresence();
  },
};

/** Shows the room now, or the moment of its past the history bar is on: views, label and log. */
function present() {
  const past = historyBar && historyBar.viewing !== null ? historyBar.moment : null;
  show(past ?? live);
  logQueue = [];
  renderLog(past ? past.events.map((event) => ({ line: eventLine(event), kind: 'event' })) : live.log);
}

/** What the live messages changed, once per frame: the views and label unless the page shows the past (the log has its own queue). */
function presentLive() {
  if (historyBar.viewing === null) show(live);
  else renderPresence();
}

function show(shown) {
  model.state = shown.state;
  model.status = shown.status;
  setText($('status'), shown.status.by ? `${shown.status.by}: ${shown.status.text}` : shown.status.text);
  renderAll();
}

/** Sets an element's text only when it changed (a crowd changes many numbers each frame, most of them the same). */
function setText(element, text) {
  if (element.textContent !== text) element.textContent = text;
}

// MARK: intents

function send(action, fields = {}) {
  returnToLive();
  if (!connection || connection.sendIntent(action, fields) === null) {
    showError(`Not connected: ${action} was not sent.`);
    return false;
  }
  return true;
}

const streams = {};

/** Gesture streams, paced from the server's rate limit (welcome.limits). */
function wireStreams() {
  const interval = streamInterval(connection.limits);
  if (streams.interval === interval) return;
  streams.interval = interval;
  streams.happiness = happinessStream(interval, send);
  streams.scale = scaleStream(interval, send);
  streams.rate = latestValueStream(interval, ACTIONS.setRate.name, send);
  streams.style = latestValueStream(interval, ACTIONS.setStyle.name, send);
}

function wireControls() {
  attachFaceGestures($('face'), {
    nudge: { add: (d) => streams.happiness?.add(d), flush: () => streams.happiness?.flush() },
    pinch: { add: (f) => streams.scale?.add(f), flush: () => streams.scale?.flush() },
    activity: (kind) => ownPointer.setGesture(kind),
  });
  // A dragon button held down shows as `press` on this page's pointer.
  $('panel-buttons').addEventListener('pointerdown', (event) => {
    if (event.target.closest('.panel-button')) ownPointer.setPressing(true);
  });
  for (const type of ['pointerup', 'pointercancel', 'blur']) window.addEventListener(type, () => ownPointer.setPressing(false));

  const edited = (input) => lastLocalEdit.set(input.id, performance.now());
  $('rate').addEventListener('input', (event) => {
    edited(event.target);
    $('rate-value').textContent = Number(event.target.value).toFixed(2);
    streams.rate?.set({ value: Number(event.target.value) });
  });
  $('rate').addEventListener('change', () => streams.rate?.flush());
  for (const [id, field] of [['fill-color', 'fillColor'], ['stroke-color', 'strokeColor']]) {
    $(id).addEventListener('input', (event) => {
      edited(event.target);
      streams.style?.set({ [field]: event.target.value });
    });
    $(id).addEventListener('change', () => streams.style?.flush());
  }
  $('line-width').addEventListener('input', (event) => {
    edited(event.target);
    $('line-width-value').textContent = event.target.value;
    streams.style?.set({ lineWidth: Number(event.target.value) });
  });
  $('line-width').addEventListener('change', () => streams.style?.flush());

  document.addEventListener('keydown', shortcut);
  // Whether the log follows its newest line, known from the reader's scrolling rather than measured on each new line.
  $('log').addEventListener('scroll', () => {
    const log = $('log');
    logFollows = log.scrollHeight - log.scrollTop - log.clientHeight < 8;
  }, { passive: true });
  $('change-name').addEventListener('click', changeName);
  $('reconnect').addEventListener('click', () => connection?.reconnectNow());
  $('other-room-form').addEventListener('submit', openOtherRoom);
  $('notice-rename').addEventListener('click', changeName);
  $('notice-rejoin').addEventListener('click', () => connection?.reconnectNow());
  $('error-close').addEventListener('click', hideError);
  $('show-frame').addEventListener('change', toggleFrame);
}

/** ← back, → forward, H hide: the dragon's buttons from the keyboard, unless typing or adjusting a control. */
function shortcut(event) {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.closest('input, textarea, select, [contenteditable], dialog')) return;
  const { dragonBack: back, dragonForward: forward, toggleHidden: hide } = ACTIONS;
  const actions = { ArrowLeft: back.name, ArrowRight: forward.name, h: hide.name, H: hide.name };
  const action = actions[event.key];
  if (!action) return;
  event.preventDefault();
  send(action);
}

async function changeName() {
  const name = await askName(connection ? connection.name : storedName());
  if (name && connection && name !== connection.name) {
    $('you-name').textContent = name;
    connection.rename(name);
  }
}

// MARK: the dragon panel's buttons and label over its canvas

const BUTTON_LABELS = { back: 'Move the dragon back', forward: 'Move the dragon forward', hide: 'Hide the dragon' };
const BUTTON_KEYS = { back: 'ArrowLeft', forward: 'ArrowRight', hide: 'H' };

/** Real buttons over the canvas's drawn ones, in percentages of the panel, so they scale with it. */
function layoutPanel() {
  const layout = model.layout;
  const panel = $('panel');
  panel.style.aspectRatio = `${layout.width} / ${layout.height}`;
  panel.style.setProperty('--panel-width', layout.width);
  const percent = (value, whole) => `${(value / whole) * 100}%`;
  const holder = $('panel-buttons');
  holder.replaceChildren();
  for (const button of art.panel.buttons) {
    const rect = layout.buttonRect(button);
    const element = document.createElement('button');
    element.type = 'button';
    element.className = 'panel-button';
    element.id = `dragon-${button.name}`;
    element.dataset.action = button.action;
    element.setAttribute('aria-label', BUTTON_LABELS[button.name] || button.name);
    if (BUTTON_KEYS[button.name]) element.setAttribute('aria-keyshortcuts', BUTTON_KEYS[button.name]);
    Object.assign(element.style, {
      left: percent(rect.x, layout.width), top: percent(rect.y, layout.height),
      width: percent(rect.width, layout.width), height: percent(rect.height, layout.height),
      borderRadius: percent(button.radius, button.width),
    });
    element.addEventListener('click', () => send(button.action));
    holder.append(element);
  }
  const label = layout.labelRect();
  Object.assign($('status').style, {
    top: percent(label.y, layout.height), height: percent(label.height, layout.height),
    color: art.panel.textColor, fontSize: `calc(${art.panel.fontSize} / ${layout.width} * 100cqw)`,
  });
}

// MARK: rendering the DOM around the canvases

function renderAll() {
  const { face, heart, dragon } = model.state;
  $('face').setAttribute('aria-label', faceDescription(face));
  $('heart').setAttribute('aria-label', heartDescription(heart));
  $('dragon').setAttribute('aria-label', dragonDescription(dragon, model.geometry));
  $('happiness-value').textContent = String(face.happiness);
  $('scale-value').textContent = face.scale.toFixed(2);
  syncControl('rate', heart.rate, (v) => { $('rate-value').textContent = v.toFixed(2); });
  syncControl('fill-color', heart.fillColor);
  syncControl('stroke-color', heart.strokeColor);
  syncControl('line-width', heart.lineWidth, (v) => { $('line-width-value').textContent = String(v); });
  const hide = $('dragon-hide');
  if (hide) {
    hide.setAttribute('aria-label', dragon.hidden ? 'Show the dragon' : 'Hide the dragon');
    hide.setAttribute('aria-pressed', String(dragon.hidden));
  }
  renderPresence();
  scheduleFrameImage();
}

/** Shows the room's value in a control, unless this person is moving it right now. */
function syncControl(id, value, show) {
  const input = $(id);
  const sinceEdit = performance.now() - (lastLocalEdit.get(id) ?? -Infinity);
  if (sinceEdit < EDIT_GRACE_MS) return;
  input.value = String(value);
  if (show) show(value);
}

/** "steering face (drag)" for each person steering a view now, by id. */
function steeringNow() {
  const steering = new Map();
  for (const person of model.presence.values()) {
    const now = overlay?.steering(person.id);
    if (now) steering.set(person.id, `steering ${now.view}${now.activity === 'idle' ? '' : ` (${now.activity})`}`);
  }
  return steering;
}

let renderedSteering = '';
let renderedPeople = '';
/** Redraws the people list when who steers what changed. */
function renderSteering() {
  const steering = JSON.stringify([...steeringNow()]);
  if (steering !== renderedSteering) renderPresence();
}

/** The people to name: this page's person first when they are too many to name all. */
function peopleShown() {
  const people = [...model.presence.values()];
  if (people.length <= PEOPLE_SHOWN) return people;
  const me = model.you ? people.find((person) => person.id === model.you.id) : undefined;
  const others = people.filter((person) => person !== me).slice(0, me ? PEOPLE_SHOWN - 1 : PEOPLE_SHOWN);
  return me ? [me, ...others] : others;
}

function renderPresence() {
  const steering = steeringNow();
  renderedSteering = JSON.stringify([...steering]);
  // Offline, the list is who was here when the connection dropped.
  const connected = model.connection.phase === 'connected';
  setText($('people-words'), connected ? 'Here now' : model.you ? 'Last seen here' : 'Here');
  setText($('presence-count'), String(model.presenceCount));
  renderRoomNotice();
  const key = `${model.presenceVersion}|${model.presenceCount}|${model.you?.id}|${renderedSteering}`;
  if (key === renderedPeople) return;
  renderedPeople = key;
  const list = $('presence');
  const shown = peopleShown();
  const items = shown.map((person) => {
    const item = document.createElement('li');
    item.textContent = person.name;
    if (model.you && person.id === model.you.id) {
      item.classList.add('me');
      item.append(' (you)');
    }
    const doing = steering.get(person.id);
    if (doing) {
      item.classList.add('steering');
      item.style.setProperty('--pointer-color', pointerColor(person.id));
      item.append(` — ${doing}`);
    }
    return item;
  });
  const unseen = model.presenceCount - shown.length;
  if (unseen > 0) {
    const more = document.createElement('li');
    more.textContent = `and ${unseen} more`;
    items.push(more);
  }
  list.replaceChildren(...items);
}

// MARK: the crowd

let crowdShown = null;
let crowdDrawnAt = -Infinity;
/**
 * In a crowd room: the dragon's presses in the last second beside its buttons, how many are here,
 * the most recent senders, and a note on tick delivery. Redrawn each frame something came, and
 * a few times a second while presses age out of the tally.
 */
function renderCrowd(now, changed) {
  const active = crowd.isCrowd(now, model.delivery);
  if (active !== crowdShown) {
    crowdShown = active;
    $('crowd-tally').hidden = !active;
    changed = true;
  }
  const note = model.delivery === 'tick'
    ? `A crowd: the room's events come together, one tick every ${model.tickMs} ms.` : '';
  if ($('crowd-note').hidden !== (note === '')) $('crowd-note').hidden = note === '';
  setText($('crowd-note'), note);
  if (!active || (now - crowdDrawnAt < TALLY_REDRAW_MS && !changed)) return;
  crowdDrawnAt = now;
  const { forward, back } = crowd.counts(now);
  setText($('tally-forward'), String(forward));
  setText($('tally-back'), String(back));
  const total = forward + back;
  const share = total === 0 ? '50%' : `${(back / total) * 100}%`;
  if ($('tally-bar').style.getPropertyValue('--back-share') !== share) $('tally-bar').style.setProperty('--back-share', share);
  if ($('tally-bar').dataset.empty !== String(total === 0)) $('tally-bar').dataset.empty = String(total === 0);
  setText($('crowd-here'), `${model.presenceCount} here`);
  setText($('crowd-recent'), crowd.recent.length === 0 ? 'nobody yet' : crowd.recent.map((person) => person.name).join(', '));
}

let countdown = null;
function renderConnection() {
  const report = model.connection;
  const element = $('connection');
  element.dataset.phase = report.phase;
  const render = () => {
    let text = report.text;
    if (report.retryAt) text += ` — ${report.detail} ${Math.max(0, Math.ceil((report.retryAt - Date.now()) / 1000))} s`;
    else if (report.detail) text += ` — ${report.detail}`;
    element.textContent = text;
  };
  clearInterval(countdown);
  render();
  if (report.retryAt) countdown = setInterval(render, 250);
  // The views and the people list are dimmed unless connected (style.css): they may be out of date.
  document.body.dataset.connection = report.phase;
  // A refusal at admission (a close code) would come again: the room notice offers what can work instead.
  $('reconnect').hidden = !(report.phase === 'reconnecting' || (report.phase === 'refused' && report.code === undefined));
  // An operator's removal is not undone by itself: the room notice offers to join again, by choice.
}

/**
 * What the room notice says: why a refused connection cannot work as it is and what can, or that the
 * room is new (no events, nobody else: most likely a mistyped name); null for nothing to say.
 */
function roomNotice() {
  const { phase, code, reason = '' } = model.connection;
  if (phase === 'removed') {
    const what = code === 4004 ? 'An operator deleted this room: it starts again empty if you join it.'
      : 'An operator removed you from this room.';
    return { text: `${what} Join again, open another room, or go to the lobby.`, rejoin: true, room: true,
      lobby: room !== 'lobby' };
  }
  if (phase === 'refused' && code !== undefined) {
    if (/token/i.test(reason)) return { text: 'The address needs a valid access token (#token=…).' };
    if (/room/i.test(reason)) return { text: 'Open another room, or go to the lobby.', room: true, lobby: true };
    if (/name/i.test(reason)) return { text: 'Choose another name to join.', rename: true };
    return { text: 'Open another room, or go to the lobby.', room: true, lobby: true };
  }
  if (phase === 'connected' && connection?.seq === 0 && model.presenceCount <= 1) {
    return { text: `Room ${room} is new: nobody here, no history. Mistyped? Open another room, or go to the lobby.`,
      room: true, lobby: room !== 'lobby' };
  }
  return null;
}

function renderRoomNotice() {
  const notice = roomNotice();
  $('room-notice').hidden = notice === null;
  if (notice === null) return;
  $('room-notice-text').textContent = notice.text;
  $('other-room-form').hidden = !notice.room;
  $('lobby-link').hidden = !notice.lobby;
  $('notice-rename').hidden = !notice.rename;
  $('notice-rejoin').hidden = !notice.rejoin;
}

/** Opens the room typed in the notice; the token goes with the tab (sessionStorage), not in the address. */
function openOtherRoom(event) {
  event.preventDefault();
  const form = $('other-room-form');
  if (!form.reportValidity()) return;
  location.href = `/?${new URLSearchParams({ room: $('other-room').value })}`;
}

/** An entry for the live log, at its end; shown on the next frame unless the page shows the past. */
function addLog(entry) {
  live.log.push(entry);
  if (live.log.length > LOG_LIMIT) live.log.shift();
  if (historyBar && historyBar.viewing !== null) return;
  logQueue.push(entry);
  if (logQueue.length > LOG_LIMIT) logQueue.shift();
}

/** The entries that came since the last frame, at the log's end; it follows them unless the reader scrolled back. */
function flushLog() {
  if (logQueue.length === 0) return;
  const log = $('log');
  log.append(...logQueue.map(logItem));
  logQueue = [];
  while (log.children.length > LOG_LIMIT) log.firstElementChild.remove();
  if (logFollows) log.scrollTop = log.scrollHeight;
}

/** Entries oldest first, the newest in view. */
function renderLog(entries) {
  const log = $('log');
  log.replaceChildren(...entries.map(logItem));
  log.scrollTop = log.scrollHeight;
  logFollows = true;
}

/**
 * An event's line in three parts, as happyclient prints it: the time and seq, the sender and what changed,
 * then the delegate name, which wraps as a whole on a narrow screen.
 */
function logItem({ kind, line, text }) {
  const item = document.createElement('li');
  item.className = kind;
  if (!line) {
    item.textContent = text;
    return item;
  }
  const part = (className, content) => {
    const span = document.createElement('span');
    span.className = className;
    span.textContent = content;
    return span;
  };
  // A position such as (20, 10) is not broken over two lines either, nor a tick's count and its word (41 forward).
  const what = part('log-what', '');
  const whole = line.delegate ? /(\([^()]*\))/ : /(\([^()]*\)|(?<!\S)\+?\d+ [a-z/]+)/;
  for (const [index, piece] of line.what.split(whole).entries()) {
    what.append(index % 2 === 1 ? part('nowrap', piece) : piece);
  }
  item.append(part('log-when', line.when), ' ', what);
  // A tick's line has no delegate name: it stands for many events.
  if (line.delegate) item.append('  ', part('log-delegate', line.delegate));
  return item;
}

let errorTimer = null;
function showError(text) {
  $('error-text').textContent = text;
  $('error').hidden = false;
  clearTimeout(errorTimer);
  errorTimer = setTimeout(hideError, 12000);
}

function hideError() {
  $('error').hidden = true;
}

// MARK: the server's frame beside the page's own drawing

function toggleFrame() {
  const on = $('show-frame').checked;
  $('frame-compare').hidden = !on;
  if (on && !sceneView) {
    const canvas = $('scene');
    canvas.style.aspectRatio = `${art.scene.width} / ${art.scene.height}`;
    $('frame-image').style.aspectRatio = `${art.scene.width} / ${art.scene.height}`;
    sceneView = new CanvasView(canvas, {
      describe: () => `${JSON.stringify(model.state)}|${model.status.text}|${model.step()}`,
      // In the canvas's own pixels, fitted as the server fits a frame of that size, so that the two
      // compare pixel for pixel (its CSS box is rarely a whole number of device pixels high).
      paint: (ctx) => {
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        drawFitted(ctx, art.scene.width, art.scene.height, { x: 0, y: 0, width: canvas.width, height: canvas.height },
          () => drawComposite(ctx, art, model.layout, model.state, model.status.text, model.step()));
      },
    });
  }
  scheduleFrameImage();
}

let frameTimer = null;
/** The server's frame of what the page shows: the room now, or the moment the history bar is on. */
function scheduleFrameImage() {
  if (!$('show-frame').checked) return;
  clearTimeout(frameTimer);
  frameTimer = setTimeout(() => {
    const image = $('frame-image');
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(16, Math.min(2048, Math.round((image.clientWidth || art.scene.width) * ratio)));
    const height = Math.max(16, Math.round(width * art.scene.height / art.scene.width));
    const past = historyBar && historyBar.viewing !== null ? historyBar.moment : null;
    const query = { w: String(width), h: String(height) };
    if (past) query.seq = String(past.seq);
    else query.v = String(connection?.seq ?? 0);
    if (pinnedStep !== null) query.phase = String(pinnedStep);
    image.src = httpURL('/frame/scene.png', query);
  }, 150);
}

/** The address of one of the server's routes for this room, with the page's token (no page sends a Referer). */
function httpURL(path, extra = {}) {
  const query = new URLSearchParams({ room, ...extra });
  if (token) query.set('token', token);
  return `${path}?${query}`;
}

// MARK: the history bar

function wireHistory() {
  historyBar = new HistoryBar({
    elements: {
      bar: $('history'), slider: $('history-slider'), position: $('history-position'), hint: $('history-hint'),
      play: $('history-play'),
      speeds: [...document.querySelectorAll('#history-speeds [data-speed]')], live: $('history-live'),
      problem: $('history-problem'), marks: [$('log-mark')],
    },
    history: new RoomHistory(httpURL),
    initialStatus: art.panel.initialStatus,
    logLimit: LOG_LIMIT,
    changed: present,
  });
  // Any gesture on the views acts on the present: the page returns to it first.
  const views = document.querySelector('.views');
  const onViews = (event) => {
    if (event.target.closest('.view-box, .panel, .controls')) returnToLive();
  };
  for (const type of ['pointerdown', 'wheel', 'input']) views.addEventListener(type, onViews, { capture: true });
  if (openedSeq !== null) historyBar.open(openedSeq);
}

function returnToLive() {
  if (historyBar && historyBar.viewing !== null) historyBar.goLive();
}

// MARK: test hooks
//
// Used by the browser tests (Tests/Browser); harmless for people.
// happy.snapshot(width, height): a PNG data URL of the composite scene drawn
//   like the server's /frame/scene.png at that size (same layout rectangles,
//   the server's status text), from the current state and wave step (pinned
//   by ?phase=NN, as the frame's `phase`).
// happy.info(): the page's state: connection phase and text, recovered,
//   epoch, seq, scene state, status label, you, presence names, how often
//   each view was painted, the estimated server time and the wave step;
//   the others' pointers drawn over the views ({id, name, view, x, y,
//   activity, faded, steering, receivedAt: Date.now() when it last moved
//   here}), and this page's own pointer as last sent ({view, x, y,
//   activity, at: Date.now()}, or null); and the history bar: history.viewing
//   (the seq looked at, null while live), shown (the seq of the moment drawn),
//   liveCount (events arrived since leaving the present), first, latest,
//   playing, speed and problem; and the crowd: whether it is shown, the
//   delivery and tickMs, the tally of the last second ({forward, back}) and
//   the recent senders' names.
window.happy = {
  snapshot(width = art.scene.width, height = art.scene.height) {
    const canvas = document.createElement('canvas');
    canvas.width = width;
    canvas.height = height;
    const ctx = canvas.getContext('2d');
    drawFitted(ctx, art.scene.width, art.scene.height, { x: 0, y: 0, width, height },
      () => drawComposite(ctx, art, model.layout, model.state, model.status.text, model.step()));
    return canvas.toDataURL('image/png');
  },
  info() {
    // What came since the last frame is shown first, so that the report and the page agree.
    showPending(performance.now());
    const serverNow = connection ? connection.serverNow() : Date.now();
    return {
      connection: model.connection.phase,
      connectionText: $('connection').textContent,
      recovered: model.recovered,
      epoch: connection?.epoch ?? null,
      seq: connection?.seq ?? null,
      state: model.state,
      status: $('status').textContent,
      you: model.you,
      presence: [...model.presence.values()].map((p) => p.name),
      presenceCount: model.presenceCount,
      paints: views.map((view) => view.paints),
      serverNow,
      step: pinnedStep !== null ? pinnedStep : waveStep(serverNow),
      pointers: overlay ? overlay.list() : [],
      ownPointer: ownPointer ? ownPointer.current : null,
      history: historyBar ? historyBar.report() : null,
      crowd: {
        shown: crowdShown === true,
        delivery: model.delivery,
        tickMs: model.tickMs,
        tally: crowd.counts(performance.now()),
        recent: crowd.recent.map((person) => person.name),
      },
    };
  },
};

start();
