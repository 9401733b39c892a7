// Words for what the page shows: the dragon status label (the seed's
// delegate texts, as the server's DragonStatus writes them), event lines (as
// happyclient prints them) and the canvases' accessible descriptions. What each
// event says comes from the protocol's table (protocol.js).
import { smileOf } from './drawing.js';
import { describeTick } from './happy-client.js';
import { EVENTS, EVENTS_BY_NAME, PATH_WORDS } from './protocol.js';

/** `20` for 20, `12.5` for 12.5, as the server prints numbers in the label. */
export function number(value) {
  return String(value);
}

/**
 * The status label after a dragon event, or undefined when the event is not
 * the dragon's; `initial` after a reset.
 */
export function statusAfter(eventName, dragon, initial) {
  const event = EVENTS_BY_NAME[eventName];
  switch (event?.label) {
    case 'position': return `${event.word}, (x,y) = (${number(dragon.x)}, ${number(dragon.y)})`;
    case 'visibility': return dragon.hidden ? 'hide' : 'show';
    case 'initial': return initial;
    default: return undefined;
  }
}

/** Numbers with at most three decimals and no trailing zeros, as happyclient prints them. */
function valueText(value) {
  if (typeof value === 'number') return String(Math.round(value * 1000) / 1000);
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * What an event changed, in plain words, as its entry in the protocol's table says (`summary`):
 * `happiness 50 → 80`, `heart fill #ff0000 → #00ff00, width 1 → 3`, `dragon (10, 10) → (20, 10)`,
 * `dragon (10, 10), blocked at the edge`, `dragon hidden`, `room reset: …`.
 * happyclient says the same (Sources/HappyClientCLI/Output/EventLines.swift).
 */
export function eventSummary(event) {
  const { state } = event;
  const changes = event.changes.filter((change) => change.path !== 'face.smile');
  const change = ({ path, from, to }) => `${PATH_WORDS[path] ?? path} ${valueText(from)} → ${valueText(to)}`;
  switch (EVENTS_BY_NAME[event.name]?.summary) {
    case 'dragonPosition': {
      const to = `(${number(state.dragon.x)}, ${number(state.dragon.y)})`;
      if (changes.length === 0) return `dragon ${to}, blocked at the edge`;
      const from = (path, now) => valueText(changes.find((c) => c.path === path)?.from ?? now);
      return `dragon (${from('dragon.x', state.dragon.x)}, ${from('dragon.y', state.dragon.y)}) → ${to}`;
    }
    case 'dragonVisibility':
      return `dragon ${state.dragon.hidden ? 'hidden' : 'shown'}`;
    case 'roomReset':
      return `room reset: ${sceneSummary(state)}`;
    case 'heartStyle':
      return `heart ${changes.map(change).join(', ')}`;
    default:
      if (changes.length === 0) return 'no change';
      return changes.map(change).join(', ');
  }
}

/** `happiness 50, scale 0.9, heart rate 0.5, dragon (10, 10) shown` */
function sceneSummary({ face, heart, dragon }) {
  return `happiness ${face.happiness}, scale ${valueText(face.scale)}, heart rate ${valueText(heart.rate)}, `
    + `dragon (${number(dragon.x)}, ${number(dragon.y)}) ${dragon.hidden ? 'hidden' : 'shown'}`;
}

/**
 * Who caused an event: its sender's name, or for a voted one (it has no sender)
 * `the crowd (41 forward, 19 back)`.
 */
export function eventSender(event) {
  if (event.votes) return `the crowd (${event.votes.forward} forward, ${event.votes.back} back)`;
  return event.sender?.name ?? '';
}

/** Who the status label names after a dragon event: its sender, `the crowd` for a vote, nobody after a reset. */
export function statusBy(event) {
  if (EVENTS_BY_NAME[event.name]?.label === 'initial') return null;
  return event.votes ? 'the crowd' : event.sender?.name ?? null;
}

/**
 * One plain line per event, as happyclient's `watch` and `history` print it, in three parts:
 * `{when: '13:25:53 #6', what: 'alice  happiness 50 → 80', delegate: 'faceView:didChangeHappiness:'}`;
 * `text` is the whole line, the parts joined by two spaces after `what`.
 */
export function eventLine(event) {
  const when = `${timeOfDay(event.time)} #${event.seq}`;
  const what = `${eventSender(event)}  ${eventSummary(event)}`;
  return { when, what, delegate: event.name, text: `${when} ${what}  ${event.name}` };
}

/**
 * One line for a whole tick, as happyclient's `watch` prints it:
 * `{when: '12:04:05 #131–190', what: 'alice and 36 others: 41 forward, 19 back; +3 joined, 1 left (5234 here)'}`
 * (a tick of joins and leaves only has no range); `text` is the whole line.
 */
export function tickLine(tick) {
  const summary = describeTick(tick);
  const range = tick.seq >= tick.from ? (tick.from === tick.seq ? `#${tick.seq}` : `#${tick.from}–${tick.seq}`) : '';
  const when = range ? `${timeOfDay(tick.time)} ${range}` : timeOfDay(tick.time);
  const what = range ? summary.slice(range.length + 1) : summary;
  return { when, what, delegate: null, text: `${when} ${what}` };
}

/** The events after which the dragon's status label changes. */
const DRAGON_EVENTS = Object.values(EVENTS).filter((event) => event.label !== null).map((event) => event.name);

/**
 * The dragon event whose label a tick leaves on the panel. A tick counts its events by name, not
 * in order: with one kind of dragon event that is the one; with several, forward or back as the
 * dragon's net move says, else the most frequent. happyclient's `play` decides alike
 * (Sources/HappyClientCLI/Play/CrowdTally.swift, `TickLabel`).
 */
export function tickDragonEvent(tick) {
  const kinds = Object.entries(tick.names || {}).filter(([name, count]) => DRAGON_EVENTS.includes(name) && count > 0);
  if (kinds.length === 0) return undefined;
  if (kinds.length === 1) return kinds[0][0];
  const move = (tick.changes || []).find((change) => change.path === 'dragon.x');
  const dx = move ? move.to - move.from : 0;
  const has = (name) => kinds.some(([kind]) => kind === name);
  const { forwardButtonClicked: forward, backButtonClicked: back } = EVENTS;
  if (dx > 0 && has(forward.name)) return forward.name;
  if (dx < 0 && has(back.name)) return back.name;
  return kinds.reduce((best, kind) => (kind[1] > best[1] ? kind : best))[0];
}

/** The status label after a tick, `{text, by}` (by: its one sender, else `the crowd`), or undefined when it has no dragon event. */
export function statusAfterTick(tick, initial) {
  const name = tickDragonEvent(tick);
  if (name === undefined) return undefined;
  const text = statusAfter(name, tick.state.dragon, initial);
  if (EVENTS_BY_NAME[name].label === 'initial') return { text, by: null };
  const single = !tick.votes && tick.senderCount <= 1 && tick.senders?.[0];
  return { text, by: single ? tick.senders[0].name : 'the crowd' };
}

export function faceDescription(face) {
  const smile = smileOf(face);
  const mood = smile > 0.2 ? 'smiling' : smile < -0.2 ? 'frowning' : 'neutral';
  return `Face, ${mood}: happiness ${face.happiness} of 100, scale ${face.scale.toFixed(2)}`;
}

export function heartDescription(heart) {
  return `Heart filled to ${Math.round(heart.rate * 100)}%, fill ${heart.fillColor}, `
    + `outline ${heart.strokeColor}, line width ${heart.lineWidth}`;
}

export function dragonDescription(dragon, geometry) {
  const where = dragon.hidden ? 'hidden' : `at (${number(dragon.x)}, ${number(dragon.y)})`;
  return `Dragon ${where} in a ${geometry.width} by ${geometry.height} scene`;
}

/** `13:25:53`: the local time of day, on a 24-hour clock as happyclient prints it. */
export function timeOfDay(ms) {
  const date = new Date(ms);
  const two = (value) => String(value).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}
