// The history bar under the scene: a slider over the room's held past, a
// replay of it at 1×, 4× or 16×, and Live. It decides which moment the page
// shows (`moment`; null while live) and keeps `?seq=` in the address, so the
// address of a moment can be shared.
import { HistoryError, replayPause } from './history.js';
import { statusAfter, statusBy, timeOfDay } from './describe.js';

/** The address is rewritten at most this often while the slider moves or a replay runs (browsers throttle replaceState). */
const URL_INTERVAL_MS = 250;
/** The held range is asked again when the bar is approached this long after it was last learnt. */
const BOUNDS_MAX_AGE_MS = 30000;
/** Events fetched at a time by a replay. */
const REPLAY_PAGE = 200;
/** How much of a late timer a replay makes up on the next pause, in ms. */
const REPLAY_SLACK_MS = 15;

export class HistoryBar {
  /**
   * elements: {bar, slider, position, hint (what ▶ needs, shown at Live in the position's place), play,
   * speeds (buttons with data-speed), live, problem, marks (elements that repeat "Viewing event N of M")};
   * history: a RoomHistory; initialStatus: the art's first label;
   * logLimit: how many events the log shows; changed(): the moment to show changed.
   */
  constructor({ elements, history, initialStatus, logLimit, changed }) {
    this.elements = elements;
    this.history = history;
    this.initialStatus = initialStatus;
    this.logLimit = logLimit;
    this.changed = changed;

    /** The seq the page looks at, or null while live. */
    this.viewing = null;
    /** What the page shows while not live: {seq, state, status: {text, by}, events (oldest first)}, once loaded. */
    this.moment = null;
    /** Events that arrived live since the page left the present. */
    this.liveCount = 0;
    /**
     * The oldest event held, learnt from the first history answer: the page asks nothing until the
     * bar is approached or used (0 is assumed until then). `latest` is the room's seq, from the
     * connection; the bar shows once it is known.
     */
    this.first = null;
    this.boundsLearntAt = -Infinity;
    this.latest = null;
    this.epoch = null;
    this.playing = false;
    this.speed = 1;
    this.problem = '';

    this.loading = false;
    this.replayToken = 0;
    this.wake = null;
    this.urlTimer = null;
    this.urlPending = false;
    this.wire();
    this.render();
  }

  wire() {
    const { bar, slider, play, speeds, live } = this.elements;
    // About to be used: learn the held range, so the slider starts where the history does.
    const approach = () => {
      if (performance.now() - this.boundsLearntAt > BOUNDS_MAX_AGE_MS) this.refresh();
    };
    bar.addEventListener('pointerenter', approach);
    bar.addEventListener('focusin', approach);
    slider.addEventListener('input', () => {
      this.pause();
      const seq = Number(slider.value);
      if (seq >= Number(slider.max)) this.goLive();
      else this.view(seq);
    });
    play.addEventListener('click', () => {
      // At Live there is nothing to replay yet: the hint says to move the slider, which takes the keys.
      if (this.viewing === null) slider.focus();
      else if (this.playing) this.pause();
      else this.play();
    });
    for (const button of speeds) {
      button.addEventListener('click', () => {
        this.speed = Number(button.dataset.speed);
        this.render();
        this.wake?.(); // A replay waiting for its next event re-times the wait.
      });
    }
    live.addEventListener('click', () => this.goLive());
  }

  // MARK: what the page tells the bar

  /** Learns the held range (`first`, the room's seq). */
  async refresh() {
    this.boundsLearntAt = performance.now();
    try {
      this.learn(await this.history.page(undefined, 1));
    } catch (error) {
      this.problem = `the history could not be read: ${error.message}`;
    }
    this.render();
  }

  /**
   * The live connection is at `seq` now; `counted` when an event arrived, or how many did (a tick),
   * counted on Live while the page shows the past. A new `epoch` means the room's history was
   * replaced: back to the present.
   */
  liveMoved(seq, { counted = false, epoch = null } = {}) {
    if (epoch !== null && this.epoch !== null && epoch !== this.epoch) {
      this.epoch = epoch;
      this.latest = seq;
      this.first = null;
      this.boundsLearntAt = -Infinity;
      this.goLive();
      return;
    }
    this.latest = Math.max(this.latest ?? 0, seq);
    if (counted && this.viewing !== null) this.liveCount += counted === true ? 1 : counted;
    this.render();
  }

  /** Opens the page at `seq` (the address's `?seq=`), even when that is the room's present seq; beyond it, live. */
  open(seq) {
    if (this.latest !== null && seq > this.latest) this.goLive();
    else this.view(seq);
  }

  /** Shows the room as it was right after event `seq`. */
  view(seq) {
    if (this.first !== null) seq = Math.max(this.first - 1, seq);
    if (this.latest !== null) seq = Math.min(this.latest, seq);
    this.stopReplay();
    this.viewing = seq;
    this.problem = '';
    this.writeURL();
    this.render();
    this.load();
  }

  /** Back to the present: the live scene, and the events that came meanwhile in the log. */
  goLive() {
    const wasViewing = this.viewing !== null;
    this.stopReplay();
    this.viewing = null;
    this.moment = null;
    this.liveCount = 0;
    this.problem = '';
    this.writeURL();
    this.render();
    if (wasViewing) this.changed();
  }

  report() {
    return {
      viewing: this.viewing,
      shown: this.viewing === null ? null : this.moment?.seq ?? null,
      liveCount: this.liveCount,
      first: this.first,
      latest: this.latest,
      playing: this.playing,
      speed: this.speed,
      problem: this.problem,
    };
  }

  // MARK: loading a moment

  /** Loads the moment at `viewing`, one request at a time; a drag ends on the newest position. */
  async load() {
    if (this.loading) return;
    this.loading = true;
    try {
      let loaded = null;
      while (this.viewing !== null && this.viewing !== loaded && !this.playing) {
        const seq = this.viewing;
        loaded = seq;
        try {
          const moment = await this.momentAt(seq);
          // Shown also when the slider moved on meanwhile, so a slow drag still shows where it passes.
          if (this.viewing !== null && !this.playing) this.show(moment);
        } catch (error) {
          await this.recover(error, seq);
        }
      }
    } finally {
      this.loading = false;
    }
  }

  /** The room right after `seq`, with the dragon's label then and the events of the log up to it. */
  async momentAt(seq) {
    const since = Math.max(0, seq - this.logLimit);
    const [at, page] = await Promise.all([
      this.history.stateAt(seq),
      this.history.page(since, Math.max(1, seq - since)),
    ]);
    this.learn(page);
    const events = page.events.filter((event) => event.seq <= seq);
    const text = at.dragonStatus || this.initialStatus;
    return { seq, state: at.state, status: { text, by: causeOf(events, text, this.initialStatus) }, events };
  }

  /** A seq no longer held moves to the oldest held; one beyond the room's goes live; other failures go live and say why. */
  async recover(error, seq) {
    const outOfRange = error instanceof HistoryError && (error.code === 'gone' || error.code === 'invalid_value');
    if (outOfRange) await this.refresh();
    if (this.viewing !== seq) return;
    if (outOfRange && error.code === 'gone' && this.first !== null && seq < this.first - 1) {
      this.viewing = this.first - 1;
      this.writeURL();
      this.render();
    } else if (outOfRange && error.code === 'invalid_value' && this.latest !== null && seq > this.latest) {
      this.goLive();
    } else {
      this.goLive();
      this.problem = `seq ${seq} could not be shown: ${error.message}`;
      this.render();
    }
  }

  learn(page) {
    if (this.epoch !== null && page.epoch !== this.epoch) this.latest = page.seq;
    this.epoch = page.epoch;
    this.first = page.first;
    this.latest = Math.max(this.latest ?? 0, page.seq);
    this.boundsLearntAt = performance.now();
  }

  show(moment) {
    this.moment = moment;
    this.render();
    this.changed();
  }

  // MARK: replay

  /** Replays from the slider's position with the events' own gaps (a second at most), sped up; live at the end. */
  async play() {
    if (this.viewing === null || this.playing) return;
    const token = ++this.replayToken;
    this.playing = true;
    this.problem = '';
    this.render();
    const current = () => token === this.replayToken;
    try {
      let moment = this.moment;
      if (!moment || moment.seq !== this.viewing) {
        moment = await this.momentAt(this.viewing);
        if (!current()) return;
        this.show(moment);
      }
      const last = moment.events[moment.events.length - 1];
      let previousTime = last && last.seq === moment.seq ? last.time : null;
      let clock = performance.now();
      let queue = [];
      for (;;) {
        if (queue.length === 0) {
          const page = await this.history.page(moment.seq, REPLAY_PAGE);
          if (!current()) return;
          // The time spent fetching is not made up by shortening the next pause.
          clock = Math.max(clock, performance.now());
          this.learn(page);
          queue = page.events.filter((event) => event.seq > moment.seq);
          if (queue.length === 0) {
            this.goLive();
            return;
          }
        }
        const event = queue.shift();
        // Against a running clock, so small timer delays do not add up over a long replay.
        let speed = this.speed;
        clock = Math.max(clock, performance.now() - REPLAY_SLACK_MS) + replayPause(previousTime, event.time, speed);
        do {
          await this.nap(clock - performance.now());
          if (!current()) return;
          if (this.speed !== speed) {
            // What is left of the wait, at the new speed.
            const now = performance.now();
            clock = now + Math.max(0, clock - now) * speed / this.speed;
            speed = this.speed;
          }
        } while (clock - performance.now() > 1);
        previousTime = event.time;
        moment = this.after(moment, event);
        this.viewing = moment.seq;
        this.writeURL();
        this.show(moment);
      }
    } catch (error) {
      if (!current()) return;
      this.playing = false;
      this.problem = `the replay stopped: ${error.message}`;
      this.render();
    }
  }

  /** Waits `ms` (yielding even for 0), or less when woken by a change of speed or a pause. */
  nap(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      const self = this;
      function done() {
        clearTimeout(timer);
        if (self.wake === done) self.wake = null;
        resolve();
      }
      this.wake = done;
    });
  }

  pause() {
    if (!this.playing) return;
    this.stopReplay();
    this.render();
    // The moment under the slider may not have come yet when the replay started.
    if (this.viewing !== null && this.moment?.seq !== this.viewing) this.load();
  }

  stopReplay() {
    this.replayToken += 1;
    this.playing = false;
    this.wake?.();
  }

  /** The moment after `event`, from the moment before it: the event carries the whole scene. */
  after(moment, event) {
    const text = statusAfter(event.name, event.state.dragon, this.initialStatus);
    const status = text === undefined ? moment.status
      : { text, by: statusBy(event) };
    const events = [...moment.events, event].slice(-this.logLimit);
    return { seq: event.seq, state: event.state, status, events };
  }

  // MARK: the address and the bar itself

  /** `?seq=N` while looking at the past, none while live; at most every URL_INTERVAL_MS, the last one always. */
  writeURL() {
    if (this.urlTimer !== null) {
      this.urlPending = true;
      return;
    }
    this.replaceURL();
    this.urlTimer = setTimeout(() => {
      this.urlTimer = null;
      if (this.urlPending) {
        this.urlPending = false;
        this.writeURL();
      }
    }, URL_INTERVAL_MS);
  }

  replaceURL() {
    const url = new URL(window.location.href);
    if (this.viewing === null) url.searchParams.delete('seq');
    else url.searchParams.set('seq', String(this.viewing));
    if (url.href !== window.location.href) window.history.replaceState(window.history.state, '', url);
  }

  /**
   * "event 6 of 48 · 13:25:53" (the time once that event is loaded), "before event 1 of 48" at the
   * start, or null while live.
   */
  get positionText() {
    if (this.viewing === null) return null;
    const of = `of ${this.latest ?? '?'}`;
    if (this.viewing === 0) return `before event 1 ${of}`;
    const event = this.moment?.seq === this.viewing ? this.moment.events.at(-1) : null;
    const time = event?.seq === this.viewing ? ` · ${timeOfDay(event.time)}` : '';
    return `event ${this.viewing} ${of}${time}`;
  }

  render() {
    const { bar, slider, position, hint, play, speeds, live, problem, marks } = this.elements;
    bar.hidden = this.latest === null;
    const oldest = Math.max(0, (this.first ?? 1) - 1);
    const newest = Math.max(oldest, this.latest ?? 0);
    slider.min = String(oldest);
    slider.max = String(newest);
    slider.value = String(this.viewing ?? newest);
    slider.disabled = newest <= oldest;
    const text = this.positionText;
    slider.setAttribute('aria-valuetext', text ?? `Live, event ${newest}`);
    // The position and the hint share one place of a fixed width, so the slider keeps its width.
    position.hidden = text === null;
    position.textContent = text ?? '';
    hint.hidden = text !== null;
    hint.textContent = newest > oldest ? 'Move the slider back to replay' : 'No events yet to replay';
    for (const mark of marks) {
      mark.hidden = text === null;
      mark.textContent = text === null ? '' : `Viewing ${text}`;
    }
    problem.hidden = this.problem === '';
    problem.textContent = this.problem;
    play.dataset.playing = String(this.playing);
    play.setAttribute('aria-label', this.playing ? 'Pause the replay' : 'Replay from here');
    play.title = this.viewing === null ? hint.textContent : play.getAttribute('aria-label');
    play.setAttribute('aria-disabled', String(this.viewing === null));
    for (const button of speeds) button.setAttribute('aria-pressed', String(Number(button.dataset.speed) === this.speed));
    live.textContent = this.liveCount > 0 ? `Live (${this.liveCount})` : 'Live';
    live.setAttribute('aria-pressed', String(this.viewing === null));
    document.body.classList.toggle('viewing-past', this.viewing !== null);
  }
}

/** Who set the label `text`: the sender of the last dragon event in `events`, when it gave that text. */
function causeOf(events, text, initial) {
  for (let i = events.length - 1; i >= 0; i -= 1) {
    const event = events[i];
    const after = statusAfter(event.name, event.state.dragon, initial);
    if (after === undefined) continue;
    return after === text ? statusBy(event) : null;
  }
  return null;
}
