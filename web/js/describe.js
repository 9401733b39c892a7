// Words for what the page shows: the dragon status label (the seed's
// delegate texts, as the server's DragonStatus writes them), event log lines
// and the canvases' accessible descriptions.
import { smileOf } from './drawing.js';

/** `20` for 20, `12.5` for 12.5, as the server prints numbers in the label. */
export function number(value) {
  return String(value);
}

/**
 * The status label after a dragon event, or undefined when the event is not
 * the dragon's; `initial` after a reset.
 */
export function statusAfter(eventName, dragon, initial) {
  switch (eventName) {
    case 'forwardButtonClicked:': return `forward, (x,y) = (${number(dragon.x)}, ${number(dragon.y)})`;
    case 'backButtonClicked:': return `back, (x,y) = (${number(dragon.x)}, ${number(dragon.y)})`;
    case 'dragonView:didChangeHidden:': return dragon.hidden ? 'hide' : 'show';
    case 'room:didReset:': return initial;
    default: return undefined;
  }
}

function shortValue(value) {
  if (typeof value === 'number') return String(Math.round(value * 1000) / 1000);
  return String(value);
}

/** `alice: faceView:didChangeHappiness: face.happiness 50 → 80`. */
export function logLine(event) {
  const changes = event.changes
    .filter((change) => change.path !== 'face.smile')
    .map((change) => `${change.path} ${shortValue(change.from)} → ${shortValue(change.to)}`);
  const what = changes.length > 0 ? changes.join(', ') : 'no change (at the edge)';
  return `${event.sender.name}: ${event.name} ${what}`;
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

export function timeOfDay(ms) {
  return new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}
