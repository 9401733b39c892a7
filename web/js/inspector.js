// The inspector page (/admin): the server's rooms a page at a time, one
// room's connections with their lag, resyncs and rate-limit hits, removing
// connections and deleting a room, through the operator API (PROTOCOL.md
// section 13).
//
// It polls the API once a second instead of observing rooms over /ws: lag,
// resyncs and rate-limit hits exist only in the API, one request covers a
// whole page of rooms, and an observer of its own would show up in the very
// counts the page reads.
//
// The credential (the server's operator key, or with auth.secret an admin
// token) comes in the address's fragment, `/admin#key=KEY`, which browsers
// never send: it is kept in this tab's sessionStorage and taken out of the
// address bar and the tab's history at once, so that a reload keeps access
// and a new tab, a bookmark or a shared screen does not carry it.
import { OperatorAPI } from './operator-api.js';

const $ = (id) => document.getElementById(id);
const POLL_MS = 1000;
const ROOM_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_REASON_BYTES = 120;

/** Where this tab keeps the credential: its session only. */
const CREDENTIAL_STORAGE = 'happy.operatorKey';

/** The page's settings, `#key=KEY&room=R&limit=N`: in the fragment, which /admin never receives. */
const fragment = () => new URLSearchParams(location.hash.slice(1));
const api = new OperatorAPI({ credential: takeKeyFromAddress() ?? storedCredential() });
const limitParameter = fragment().get('limit') || '';
const pageSize = /^\d{1,4}$/.test(limitParameter) ? Math.min(1000, Math.max(1, Number(limitParameter))) : 100;

const view = {
  /** The `after` of each page reached, so that Previous goes back. */
  cursors: [null],
  page: 0,
  rooms: [],
  next: null,
  listed: false,
  selected: roomInAddress(),
  details: null,
  /** Why the chosen room cannot be shown, in words. */
  roomProblem: null,
  /** The 401/403 of the last request, an OperatorError. */
  access: null,
  /** Why the server could not be reached, while it cannot. */
  offline: null,
  updatedAt: null,
  paused: false,
  /** The connection the kick dialog is about. */
  kicking: null,
};

let timer = null;
let generation = 0;
/** Where the keyboard goes once the next answer shows: after a key typed, after the key forgotten. */
let focusRoomsOnAccess = false;
let focusFormOnAccess = false;

// MARK: polling

async function refresh() {
  clearTimeout(timer);
  timer = null;
  const mine = ++generation;
  const { page } = view;
  const selected = view.selected;
  const [list, details] = await Promise.allSettled([
    api.rooms({ limit: pageSize, after: view.cursors[page] }),
    selected ? api.room(selected) : Promise.resolve(null),
  ]);
  // A newer refresh (another page, another room, an action) has started: its answers win.
  if (mine !== generation) return;
  view.access = null;
  view.offline = null;
  if (list.status === 'fulfilled') {
    view.rooms = Array.isArray(list.value.rooms) ? list.value.rooms : [];
    view.next = typeof list.value.next === 'string' ? list.value.next : null;
    view.listed = true;
    view.updatedAt = Date.now();
    // The rooms of this page went away: the page before it.
    if (view.rooms.length === 0 && page > 0) {
      view.page -= 1;
      view.cursors.length = view.page + 1;
      return refresh();
    }
  } else {
    noteFailure(list.reason);
  }
  if (selected) {
    if (details.status === 'fulfilled') {
      view.details = details.value;
      view.roomProblem = null;
    } else {
      const error = details.reason;
      if (error.status === 404) {
        view.details = null;
        view.roomProblem = `Room ${selected} is not in memory on this server: nobody has joined it since the server `
          + 'started, or it emptied and was let go, or it was deleted.';
      } else if (error.isAccess) {
        view.details = null;
        view.roomProblem = `No access to room ${selected}: ${error.message}.`;
        view.access ??= error;
      } else {
        noteFailure(error);
      }
    }
  }
  render();
  moveFocusAfterAccessChange();
  schedule();
}

function moveFocusAfterAccessChange() {
  if (focusRoomsOnAccess && view.access === null) $('rooms-title').focus();
  if (focusFormOnAccess && !$('credential-form').hidden) $('credential-input').focus();
  if (view.access === null || !$('credential-form').hidden) focusRoomsOnAccess = focusFormOnAccess = false;
}

function noteFailure(error) {
  if (error.isAccess) view.access = error;
  else view.offline = error;
}

function schedule() {
  clearTimeout(timer);
  timer = view.paused ? null : setTimeout(refresh, POLL_MS);
}

// MARK: rendering

function render() {
  renderLive();
  renderAccess();
  renderRooms();
  renderRoom();
}

function renderLive() {
  const live = $('live');
  let state = 'live';
  let text = view.updatedAt ? `Live · updated ${clock(view.updatedAt)}` : 'Loading…';
  if (view.paused) {
    state = 'paused';
    text = view.updatedAt ? `Updates paused · as of ${clock(view.updatedAt)}` : 'Updates paused';
  } else if (view.offline) {
    state = 'offline';
    text = `The server does not answer (${view.offline.message}); trying again every second`;
  } else if (view.access) {
    state = 'denied';
    text = `No access (HTTP ${view.access.status})`;
  }
  live.dataset.state = state;
  live.textContent = text;
  document.body.dataset.state = state;
}

function renderAccess() {
  $('forget-key').hidden = api.credential === '';
  const error = view.access;
  $('access').hidden = error === null;
  if (error === null) return;
  $('access-reason').textContent = `The server answered ${error.status}: ${error.message}.`;
  const { help, form } = accessHelp(error);
  $('access-help').replaceChildren(...help.map((part) => {
    if (typeof part === 'string') return part;
    const code = document.createElement('code');
    code.textContent = part.code;
    return code;
  }));
  $('credential-form').hidden = !form;
}

/** How to get in after a 401 or 403, in parts (strings, and `{code}` for what is typed), and whether a key would help. */
function accessHelp(error) {
  const file = { code: 'operator.key' };
  const mint = { code: 'happyserver token --role admin --sub NAME --secret SECRET' };
  if (error.status === 401 && api.credential === '') {
    return { form: true, help: ['Open the inspector at the address the server printed when it started, ',
      { code: 'http://HOST:PORT/admin#key=KEY' }, ', or paste below the key from the file ', file, ' in the server\'s '
      + 'data directory. A server with auth.secret takes an admin token instead, which whoever holds the secret makes '
      + 'with ', mint, '.'] };
  }
  if (error.status === 401) {
    return { form: true, help: ['The key this tab holds is not the server\'s operator key, nor an admin token it '
      + 'accepts (the key is the one in ', file, ' in the server\'s data directory; a token may have expired). Paste '
      + 'the right key or another admin token below.'] };
  }
  if (/role|token/i.test(error.message)) {
    return { form: true, help: ['This token is not enough: the operator API needs a token with the admin role (and, to '
      + 'list the rooms, one for every room; a token for one room opens it with ', { code: '#room=NAME' }, ' after it). '
      + 'Paste another token below; ', mint, ' makes one.'] };
  }
  // Refused for the request's Host or Origin: another key would be refused the same way.
  return { form: false, help: ['The server refuses this request for where it comes from, not for its key: open the '
    + 'inspector at an address that names the server (a name it answers to is listed in publicHosts in its config), '
    + 'not from a page of another site (auth.allowedOrigins lists the sites that may).'] };
}

function renderRooms() {
  // Refused before anything was listed: the access notice is all there is to show.
  $('inspector-main').hidden = view.access !== null && !view.listed && view.details === null;
  const { rooms } = view;
  $('rooms-empty').hidden = !view.listed || rooms.length > 0;
  $('rooms-empty').textContent = view.page > 0 ? 'No rooms on this page.' : 'No rooms in memory on this server.';
  const first = view.page * pageSize + 1;
  $('rooms-range').textContent = rooms.length > 0 ? `${first}–${first + rooms.length - 1}` : '';
  const now = Date.now();
  syncRows($('rooms-body'), rooms.map((room) => ({
    key: room.room,
    selected: room.room === view.selected,
    cells: [
      { node: () => roomButton(room.room) },
      { text: String(room.clients), className: 'number' },
      { text: String(room.observers), className: 'number' },
      { text: String(room.seq), className: 'number' },
      { text: room.delivery },
      { text: room.lastEventTime ? `${age(now - room.lastEventTime)} ago` : 'none' },
    ],
  })));
  for (const button of $('rooms-body').querySelectorAll('button[data-room]')) {
    if (button.dataset.room === view.selected) button.setAttribute('aria-current', 'true');
    else button.removeAttribute('aria-current');
  }
  $('rooms-scroll').hidden = rooms.length === 0;
  $('previous-page').disabled = view.page === 0;
  $('next-page').disabled = view.next === null;
  $('pager').hidden = view.page === 0 && view.next === null;
}

function roomButton(name) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'link';
  button.dataset.room = name;
  button.textContent = name;
  button.addEventListener('click', () => select(name));
  return button;
}

function renderRoom() {
  const name = view.selected;
  $('room-title').textContent = name ? `Room ${name}` : 'Choose a room';
  $('room-hint').hidden = name !== null;
  $('room-hint').textContent = view.listed && view.rooms.length === 0 && view.page === 0
    ? 'A room shows here once someone joins it.' : 'Choose a room in the list to see its connections.';
  $('room-problem').hidden = view.roomProblem === null;
  $('room-problem').textContent = view.roomProblem ?? '';
  const details = name ? view.details : null;
  $('room-details').hidden = details === null;
  if (details === null) return;
  const now = Date.now();
  $('room-seq').textContent = String(details.seq);
  $('room-epoch').textContent = details.epoch ?? 'none yet';
  $('room-delivery').textContent = details.delivery === 'ticks' ? 'ticks (a crowd room)' : 'each event';
  $('room-last').textContent = details.lastEventTime ? `${clock(details.lastEventTime)} (${age(now - details.lastEventTime)} ago)` : 'none';
  $('room-people').textContent = String(details.clients);
  $('room-observers').textContent = String(details.observers);
  const connections = sortedConnections(details.connections ?? []);
  $('connections-empty').hidden = connections.length > 0;
  $('connections-scroll').hidden = connections.length === 0;
  const named = countNames(connections);
  syncRows($('connections-body'), connections.map((c) => ({
    key: c.id,
    cells: [
      { node: () => nameAndId(), update: (cell) => updateNameAndId(cell, c) },
      { text: `${c.observer ? 'observer' : 'person'}${c.role === 'player' ? '' : ` · ${c.role}`}` },
      { text: c.address, className: 'mono' },
      { text: age(now - c.connectedAt), className: 'number' },
      { text: bytes(c.queuedBytes), className: `number${c.queuedBytes > 0 ? ' notable' : ''}` },
      { text: String(c.resyncs), className: `number${c.resyncs > 0 ? ' notable' : ''}` },
      { text: String(c.rateLimited), className: `number${c.rateLimited > 0 ? ' notable' : ''}` },
      { node: () => kickButton(), unlabelled: true, update: (cell) => updateKickButton(cell, c, named) },
    ],
  })));
}

/** People first, then observers, each by when they came: an order that holds while the list updates. */
function sortedConnections(connections) {
  return [...connections].sort((a, b) => (a.observer - b.observer) || (a.connectedAt - b.connectedAt)
    || a.id.localeCompare(b.id));
}

function countNames(connections) {
  const counts = new Map();
  for (const c of connections) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  return counts;
}

function nameAndId() {
  const name = document.createElement('span');
  const id = document.createElement('span');
  id.className = 'connection-id mono';
  return [name, ' ', id];
}

function updateNameAndId(cell, connection) {
  const [name, , id] = cell.childNodes;
  if (name.textContent !== connection.name) name.textContent = connection.name;
  if (id.textContent !== connection.id) id.textContent = connection.id;
}

function kickButton() {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'kick';
  const label = document.createElement('span');
  label.textContent = 'Remove';
  const who = document.createElement('span');
  who.className = 'visually-hidden';
  button.append(label, who);
  button.addEventListener('click', () => openKick(button.connection, button.sameName));
  return button;
}

function updateKickButton(cell, connection, named) {
  const button = cell.firstElementChild;
  button.connection = connection;
  button.sameName = named.get(connection.name) ?? 1;
  button.lastElementChild.textContent = ` ${connection.name} (${connection.id})`;
}

/**
 * Brings a table body's rows in line with `rows` ({key, selected?, cells: [{text, className?, node?, update?,
 * unlabelled?}]})
 * without replacing the rows and buttons that stay, so the keyboard focus and a screen reader's place survive
 * the updates.
 */
function syncRows(body, rows) {
  const existing = new Map([...body.rows].map((row) => [row.dataset.key, row]));
  const wanted = new Set(rows.map((row) => row.key));
  for (const [key, row] of existing) if (!wanted.has(key)) row.remove();
  let previous = null;
  for (const { key, cells, selected } of rows) {
    let row = existing.get(key);
    if (!row) {
      row = document.createElement('tr');
      row.dataset.key = key;
      row.setAttribute('role', 'row');
      const headers = [...body.closest('table').tHead.rows[0].cells].map((th) => th.textContent.trim());
      cells.forEach((cell, index) => {
        const element = document.createElement(index === 0 ? 'th' : 'td');
        if (index === 0) element.scope = 'row';
        element.setAttribute('role', index === 0 ? 'rowheader' : 'cell');
        // The column's name before each value where a phone shows the rows as cards.
        element.dataset.label = cell.unlabelled ? '' : headers[index] ?? '';
        if (cell.node) element.append(...[cell.node()].flat());
        row.append(element);
      });
    }
    cells.forEach((cell, index) => {
      const element = row.cells[index];
      if (cell.update) cell.update(element);
      else if (!cell.node && element.textContent !== cell.text) element.textContent = cell.text;
      const className = cell.className ?? '';
      if (element.className !== className) element.className = className;
    });
    row.classList.toggle('selected', Boolean(selected));
    // Moved only when out of place: moving a row takes the focus out of it.
    const expected = previous ? previous.nextElementSibling : body.firstElementChild;
    if (expected !== row) body.insertBefore(row, expected);
    previous = row;
  }
}

// MARK: actions

function select(name) {
  if (view.selected !== name) {
    view.selected = name;
    view.details = null;
    view.roomProblem = null;
    rewriteAddress();
  }
  render();
  refresh();
}

/**
 * Takes `key=` out of the fragment: kept in this tab's sessionStorage, and removed from the address bar and the
 * tab's history entry (replaced, not added to); the fragment's other settings stay. The key, or null when none.
 */
function takeKeyFromAddress() {
  const settings = fragment();
  if (!settings.has('key')) return null;
  const key = settings.get('key').trim();
  settings.delete('key');
  history.replaceState(null, '', addressWith(settings));
  if (key) storeCredential(key);
  return key || null;
}

function storedCredential() {
  try {
    return sessionStorage.getItem(CREDENTIAL_STORAGE) ?? '';
  } catch {
    return ''; // Storage turned off: the key lasts as long as the page.
  }
}

function storeCredential(value) {
  try {
    if (value) sessionStorage.setItem(CREDENTIAL_STORAGE, value);
    else sessionStorage.removeItem(CREDENTIAL_STORAGE);
  } catch {
    // As above: kept in the page alone.
  }
}

/** The page's address with these fragment settings. */
function addressWith(settings) {
  return `${location.pathname}${location.search}${settings.size ? `#${settings}` : ''}`;
}

function roomInAddress() {
  const room = fragment().get('room') || '';
  return ROOM_NAME.test(room) ? room : null;
}

function rewriteAddress() {
  const settings = fragment();
  if (view.selected) settings.set('room', view.selected);
  else settings.delete('room');
  history.replaceState(null, '', addressWith(settings));
}

/** The address edited by hand: another key, another room, or another page size (which starts over). */
function followAddress() {
  const key = takeKeyFromAddress();
  if ((fragment().get('limit') || '') !== limitParameter) return location.reload();
  if (key !== null && key !== api.credential) useCredential(key);
  const room = roomInAddress();
  if (room !== view.selected) {
    view.selected = room;
    view.details = null;
    view.roomProblem = null;
    render();
    refresh();
  }
}

function turnPage(step) {
  if (step > 0) {
    if (view.next === null) return;
    view.cursors[view.page + 1] = view.next;
  }
  view.page = Math.max(0, view.page + step);
  view.cursors.length = view.page + 1;
  refresh();
}

function openKick(connection, sameName) {
  view.kicking = connection;
  const room = view.selected;
  $('kick-title').textContent = `Remove ${connection.name} from ${room}`;
  $('kick-by-id').textContent = `This connection only (${connection.id})`;
  $('kick-by-name').textContent = `Everyone named ${connection.name} (${sameName} connection${sameName === 1 ? '' : 's'} now)`;
  $('kick-form').elements['kick-target'].value = 'id';
  $('kick-reason').value = '';
  $('kick-problem').textContent = '';
  previewKick();
  $('kick-dialog').showModal();
}

function previewKick() {
  const reason = $('kick-reason').value.trim();
  $('kick-preview').textContent = `removed from the room by an operator${reason ? `: ${reason}` : ''}`;
}

async function confirmKick(event) {
  event.preventDefault();
  const connection = view.kicking;
  const room = view.selected;
  if (!connection || !room) return $('kick-dialog').close();
  const byName = $('kick-form').elements['kick-target'].value === 'name';
  const reason = $('kick-reason').value.trim();
  if (new TextEncoder().encode(reason).length > MAX_REASON_BYTES) {
    $('kick-problem').textContent = `The reason is too long: at most ${MAX_REASON_BYTES} bytes.`;
    return;
  }
  const target = byName ? { name: connection.name } : { id: connection.id };
  const confirm = $('kick-confirm');
  confirm.disabled = true;
  try {
    const { kicked } = await api.kick(room, target, reason);
    $('kick-dialog').close();
    const who = byName ? `named ${connection.name}` : `${connection.name} (${connection.id})`;
    tell(kicked > 0 ? `Removed ${kicked} connection${kicked === 1 ? '' : 's'} ${who} from ${room}.`
      : `Nobody was removed: no connection ${who} is in ${room} any more.`);
    $('room-title').focus();
    refresh();
  } catch (error) {
    $('kick-problem').textContent = `Not removed: ${error.message}`;
  } finally {
    confirm.disabled = false;
  }
}

function openDelete() {
  const room = view.selected;
  const details = view.details;
  if (!room || !details) return;
  const count = details.connections?.length ?? 0;
  $('delete-title').textContent = `Delete room ${room}?`;
  $('delete-text').textContent = `Its ${count} connection${count === 1 ? ' is' : 's are'} closed and told the room was `
    + `deleted, and its state and history (${details.seq} event${details.seq === 1 ? '' : 's'}) are erased. `
    + 'It starts again at seq 0 with a new epoch. This cannot be undone.';
  $('delete-problem').textContent = '';
  $('delete-confirm').textContent = `Delete ${room}`;
  $('delete-dialog').showModal();
  $('delete-cancel').focus();
}

async function confirmDelete(event) {
  event.preventDefault();
  const room = view.selected;
  if (!room) return $('delete-dialog').close();
  const confirm = $('delete-confirm');
  confirm.disabled = true;
  try {
    const { closed } = await api.deleteRoom(room);
    $('delete-dialog').close();
    tell(`Deleted room ${room}: ${closed} connection${closed === 1 ? '' : 's'} closed, its state and history erased.`);
    view.selected = null;
    view.details = null;
    view.roomProblem = null;
    rewriteAddress();
    render();
    $('rooms-title').focus();
    refresh();
  } catch (error) {
    $('delete-problem').textContent = `Not deleted: ${error.message}`;
  } finally {
    confirm.disabled = false;
  }
}

/** The outcome of the last action, announced once. */
function tell(text) {
  $('outcome').textContent = text;
}

function togglePause() {
  view.paused = !view.paused;
  $('pause').setAttribute('aria-pressed', String(view.paused));
  renderLive();
  if (view.paused) schedule();
  else refresh();
}

/** The key or token typed in the access form: kept like one from the address, which stays as it is. */
function useTypedCredential(event) {
  event.preventDefault();
  const input = $('credential-input');
  const value = input.value.trim();
  if (!value) return;
  input.value = '';
  storeCredential(value);
  // Once it works the form goes away: the keyboard goes on from the rooms.
  focusRoomsOnAccess = true;
  useCredential(value);
}

function useCredential(value) {
  api.credential = value;
  refresh();
}

/** Forgets the credential in this tab, and what it showed: the page asks for a key again. */
function forgetCredential() {
  storeCredential('');
  api.credential = '';
  Object.assign(view, { rooms: [], next: null, listed: false, details: null, roomProblem: null, page: 0, cursors: [null] });
  tell('');
  focusFormOnAccess = true;
  refresh();
}

// MARK: words

function clock(ms) {
  const date = new Date(ms);
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** `45 s`, `12 min`, `3 h`, `2 d`, as happyclient prints them. */
function age(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86400)} d`;
}

function bytes(count) {
  if (count < 1000) return `${count} B`;
  if (count < 1e6) return `${Math.round(count / 100) / 10} KB`;
  return `${Math.round(count / 1e5) / 10} MB`;
}

// MARK: start

$('pause').addEventListener('click', togglePause);
$('previous-page').addEventListener('click', () => turnPage(-1));
$('next-page').addEventListener('click', () => turnPage(1));
$('forget-key').addEventListener('click', forgetCredential);
$('credential-form').addEventListener('submit', useTypedCredential);
$('kick-form').addEventListener('submit', confirmKick);
$('kick-reason').addEventListener('input', previewKick);
$('kick-cancel').addEventListener('click', () => $('kick-dialog').close());
$('delete-room').addEventListener('click', openDelete);
$('delete-form').addEventListener('submit', confirmDelete);
$('delete-cancel').addEventListener('click', () => $('delete-dialog').close());
window.addEventListener('hashchange', followAddress);
render();
refresh();

// The browser tests read the page through this (Tests/Browser/test_inspector.py).
window.inspector = {
  info() {
    return {
      live: $('live').dataset.state,
      rooms: view.rooms.map((room) => room.room),
      page: view.page,
      next: view.next,
      selected: view.selected,
      connections: view.details ? sortedConnections(view.details.connections ?? []) : [],
      roomProblem: view.roomProblem,
      access: view.access ? { status: view.access.status, message: view.access.message } : null,
      hasCredential: api.credential !== '',
      outcome: $('outcome').textContent,
    };
  },
};
