// The protocol's actions and events (docs/PROTOCOL.md sections 3 and 4), for the page and
// /js/happy-client.js. Written from HappyCore's action table (Sources/HappyCore/Scene/ActionTable.swift)
// by `make protocol-js`: change the table, not this file (a Swift test compares the two).

/**
 * The actions a client may send, under the names of HappyCore's `Action.Kind`: `name` on the
 * wire, what it does (`summary`), its `parameters` (top-level fields of the intent: `type`
 * integer, number, positiveNumber, boolean or color; `required`; `min` and `max` when the value
 * must be within them, refused outside), whether it needs at least one of them
 * (`needsOneParameter`), the `event` it causes and whether it needs the `admin` role.
 */
export const ACTIONS = deepFreeze({
  setHappiness: {
    name: "face.setHappiness",
    summary: "set the face's happiness, clamped to 0 to 100",
    parameters: [
      { name: "value", type: "integer", required: true },
    ],
    needsOneParameter: false,
    event: "faceView:didChangeHappiness:",
    admin: false,
  },
  nudgeHappiness: {
    name: "face.nudgeHappiness",
    summary: "the pan gesture: add delta to the face's happiness, clamped",
    parameters: [
      { name: "delta", type: "integer", required: true, min: -100, max: 100 },
    ],
    needsOneParameter: false,
    event: "faceView:didChangeHappiness:",
    admin: false,
  },
  setScale: {
    name: "face.setScale",
    summary: "set the face's scale, clamped to the server's range",
    parameters: [
      { name: "value", type: "positiveNumber", required: true },
    ],
    needsOneParameter: false,
    event: "faceView:didChangeScale:",
    admin: false,
  },
  pinch: {
    name: "face.pinch",
    summary: "the pinch gesture: multiply the face's scale by factor, clamped",
    parameters: [
      { name: "factor", type: "positiveNumber", required: true },
    ],
    needsOneParameter: false,
    event: "faceView:didChangeScale:",
    admin: false,
  },
  setRate: {
    name: "heart.setRate",
    summary: "set the heart's fill level, clamped to 0 to 1",
    parameters: [
      { name: "value", type: "number", required: true },
    ],
    needsOneParameter: false,
    event: "heartView:didChangeRate:",
    admin: false,
  },
  setStyle: {
    name: "heart.setStyle",
    summary: "set the heart's fill and outline colours and its outline width (0 means 1)",
    parameters: [
      { name: "fillColor", type: "color", required: false },
      { name: "strokeColor", type: "color", required: false },
      { name: "lineWidth", type: "number", required: false, min: 0, max: 20 },
    ],
    needsOneParameter: true,
    event: "heartView:didChangeStyle:",
    admin: false,
  },
  dragonForward: {
    name: "dragon.forward",
    summary: "the forward button: the dragon one step right, unless at the edge",
    parameters: [],
    needsOneParameter: false,
    event: "forwardButtonClicked:",
    admin: false,
  },
  dragonBack: {
    name: "dragon.back",
    summary: "the back button: the dragon one step left, unless at the edge",
    parameters: [],
    needsOneParameter: false,
    event: "backButtonClicked:",
    admin: false,
  },
  setHidden: {
    name: "dragon.setHidden",
    summary: "hide the dragon (true) or show it (false)",
    parameters: [
      { name: "value", type: "boolean", required: true },
    ],
    needsOneParameter: false,
    event: "dragonView:didChangeHidden:",
    admin: false,
  },
  toggleHidden: {
    name: "dragon.toggleHidden",
    summary: "the hide button: hide the dragon, or show it again",
    parameters: [],
    needsOneParameter: false,
    event: "dragonView:didChangeHidden:",
    admin: false,
  },
  reset: {
    name: "room.reset",
    summary: "the room back to the server's defaults (admin only when auth is on)",
    parameters: [],
    needsOneParameter: false,
    event: "room:didReset:",
    admin: true,
  },
});

/**
 * The events the server broadcasts, under the names of HappyCore's `EventName`: `name` on the
 * wire, the `word` a tick's counts use, the `summary` an event line gives (`value`: each changed
 * value in words, an answer naming the one at `path`; `heartStyle`, `dragonPosition`,
 * `dragonVisibility`, `roomReset`) and what the dragon's status `label` says after it
 * (`position`: the word and where the dragon is, `visibility`, `initial`; null: unchanged).
 */
export const EVENTS = deepFreeze({
  didChangeHappiness: {
    name: "faceView:didChangeHappiness:",
    word: "happiness",
    summary: "value",
    path: "face.happiness",
    label: null,
  },
  didChangeScale: {
    name: "faceView:didChangeScale:",
    word: "scale",
    summary: "value",
    path: "face.scale",
    label: null,
  },
  didChangeRate: {
    name: "heartView:didChangeRate:",
    word: "rate",
    summary: "value",
    path: "heart.rate",
    label: null,
  },
  didChangeStyle: {
    name: "heartView:didChangeStyle:",
    word: "style",
    summary: "heartStyle",
    path: null,
    label: null,
  },
  forwardButtonClicked: {
    name: "forwardButtonClicked:",
    word: "forward",
    summary: "dragonPosition",
    path: null,
    label: "position",
  },
  backButtonClicked: {
    name: "backButtonClicked:",
    word: "back",
    summary: "dragonPosition",
    path: null,
    label: "position",
  },
  didChangeHidden: {
    name: "dragonView:didChangeHidden:",
    word: "hide/show",
    summary: "dragonVisibility",
    path: null,
    label: "visibility",
  },
  didReset: {
    name: "room:didReset:",
    word: "reset",
    summary: "roomReset",
    path: null,
    label: "initial",
  },
});

/** The words event lines use for the scene's values, by path; a path not here is named as it is. */
export const PATH_WORDS = deepFreeze({
  "face.happiness": "happiness",
  "face.scale": "scale",
  "heart.rate": "heart rate",
  "heart.fillColor": "fill",
  "heart.strokeColor": "stroke",
  "heart.lineWidth": "width",
});

/** The actions by their name on the wire. */
export const ACTIONS_BY_NAME = byName(ACTIONS);

/** The events by their name on the wire. */
export const EVENTS_BY_NAME = byName(EVENTS);

function byName(table) {
  return Object.freeze(Object.fromEntries(Object.values(table).map((entry) => [entry.name, entry])));
}

function deepFreeze(value) {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
