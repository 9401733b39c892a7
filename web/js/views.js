// The page's three canvases. Each is sized to its CSS box times the device
// pixel ratio (crisp on any screen) and redrawn only when what it shows, its
// size or the pixel ratio changed; the heart's wave step is part of what it
// shows, so it animates with the shared clock.
import { drawFace, drawHeart, drawFitted } from './drawing.js';

/** Calls `changed` whenever devicePixelRatio changes (zoom, a move to another screen). */
function watchPixelRatio(changed) {
  const query = matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
  query.addEventListener('change', () => {
    changed();
    watchPixelRatio(changed);
  }, { once: true });
}

export class CanvasView {
  /** describe(): a string of everything the picture depends on; paint(ctx, width, height) in CSS pixels. */
  constructor(canvas, { describe, paint }) {
    this.canvas = canvas;
    this.describe = describe;
    this.paint = paint;
    this.css = { width: 0, height: 0 };
    this.device = { width: 0, height: 0 };
    this.drawn = null;
    this.paints = 0;
    const observer = new ResizeObserver(([entry]) => this.resized(entry));
    try {
      observer.observe(canvas, { box: 'device-pixel-content-box' });
    } catch {
      observer.observe(canvas);
    }
    watchPixelRatio(() => this.remeasure());
  }

  resized(entry) {
    const exact = entry.devicePixelContentBoxSize && entry.devicePixelContentBoxSize[0];
    this.measure(entry.contentRect.width, entry.contentRect.height, exact);
  }

  remeasure() {
    this.measure(this.canvas.clientWidth, this.canvas.clientHeight, null);
  }

  /** Device pixels of the box: the exact ones when the browser gives them and they agree with the ratio. */
  measure(cssWidth, cssHeight, exact) {
    const ratio = window.devicePixelRatio || 1;
    const width = Math.round(cssWidth * ratio);
    const height = Math.round(cssHeight * ratio);
    const agrees = exact && Math.abs(exact.inlineSize - width) <= 1 && Math.abs(exact.blockSize - height) <= 1;
    this.css = { width: cssWidth, height: cssHeight };
    this.device = agrees ? { width: exact.inlineSize, height: exact.blockSize } : { width, height };
  }

  /** Redraws when something it shows changed; returns whether it did. */
  update() {
    const { width, height } = this.device;
    if (width === 0 || height === 0) return false;
    const key = `${width}x${height}|${this.describe()}`;
    if (key === this.drawn) return false;
    this.drawn = key;
    if (this.canvas.width !== width) this.canvas.width = width;
    if (this.canvas.height !== height) this.canvas.height = height;
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.setTransform(width / this.css.width, 0, 0, height / this.css.height, 0, 0);
    this.paint(ctx, this.css.width, this.css.height);
    this.paints += 1;
    return true;
  }
}

/** The face fills its canvas, as the seed view fills its bounds. */
export function faceView(canvas, model) {
  return new CanvasView(canvas, {
    describe: () => { const f = model.state.face; return `${f.happiness}|${f.scale}`; },
    paint: (ctx, width, height) => drawFace(ctx, model.state.face, width, height),
  });
}

/** The heart fills its canvas; the wave step comes from the shared clock (or ?phase=). */
export function heartView(canvas, model) {
  return new CanvasView(canvas, {
    describe: () => { const h = model.state.heart; return `${h.rate}|${h.fillColor}|${h.strokeColor}|${h.lineWidth}|${model.step()}`; },
    paint: (ctx, width, height) => drawHeart(ctx, model.state.heart, model.step(), width, height),
  });
}

/** The dragon panel, scaled to fit; its status text is the label element laid over it. */
export function dragonView(canvas, model) {
  return new CanvasView(canvas, {
    describe: () => { const d = model.state.dragon; return `${d.x}|${d.y}|${d.hidden}|${model.layout.width}x${model.layout.height}`; },
    paint: (ctx, width, height) => {
      const layout = model.layout;
      drawFitted(ctx, layout.width, layout.height, { x: 0, y: 0, width, height },
        () => layout.draw(ctx, model.state.dragon, null));
    },
  });
}
