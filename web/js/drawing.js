// The seeds' pictures on a 2D canvas, with the same geometry as the server's
// Cairo renderer (Sources/HappyRender/Views), so page and /frame/*.png agree.
import { drawShapes } from './art.js';

/** faceView drawRect: blue circle, two eyes, Bézier mouth moved by the smile. */
const FACE = { lineWidth: 5, color: '#0000ff', eyeH: 0.3, eyeV: 0.3, eyeRadius: 0.1, mouthH: 0.45, mouthV: 0.4, mouthSmile: 0.25 };

export function faceRadius(width, height, scale) {
  return Math.min(width, height) / 2 * scale;
}

/** Clips to the box (0, 0, width, height), as a view that clips to its bounds; undone by the enclosing restore(). */
function clipToBox(ctx, width, height) {
  ctx.beginPath();
  ctx.rect(0, 0, width, height);
  ctx.clip();
}

/** Draws only inside (0, 0, width, height): from scale ≈ 1.41 the circle lies wholly beyond it. */
export function drawFace(ctx, face, width, height) {
  const midX = width / 2;
  const midY = height / 2;
  const size = faceRadius(width, height, face.scale);
  ctx.save();
  clipToBox(ctx, width, height);
  ctx.lineWidth = FACE.lineWidth;
  ctx.strokeStyle = FACE.color;
  circle(ctx, midX, midY, size);
  const eyeY = midY - size * FACE.eyeV;
  circle(ctx, midX - size * FACE.eyeH, eyeY, size * FACE.eyeRadius);
  circle(ctx, midX + size * FACE.eyeH, eyeY, size * FACE.eyeRadius);

  const startX = midX - size * FACE.mouthH;
  const endX = midX + size * FACE.mouthH;
  const mouthY = midY + size * FACE.mouthV;
  const smile = Math.min(1, Math.max(-1, smileOf(face)));
  const offset = FACE.mouthSmile * size * smile;
  ctx.beginPath();
  ctx.moveTo(startX, mouthY);
  ctx.bezierCurveTo(startX + size * FACE.mouthH * 2 / 3, mouthY + offset,
    endX - size * FACE.mouthH * 2 / 3, mouthY + offset, endX, mouthY);
  ctx.stroke();
  ctx.restore();
}

/** The smileForFaceView: data source: (happiness − 50) / 50. */
export function smileOf(face) {
  return typeof face.smile === 'number' ? face.smile : (face.happiness - 50) / 50;
}

function circle(ctx, x, y, radius) {
  ctx.beginPath();
  ctx.arc(x, y, radius, 0, 2 * Math.PI);
  ctx.stroke();
}

/** HeartView drawRect: the outline stroked, then a cosine wave filled up to the rate, clipped to it. */
const HEART = { margin: 5, amplitude: 5 };

/** The shared wave clock (PROTOCOL.md section 8): step 0...99 at a server time in ms. */
export function waveStep(serverTimeMs) {
  return ((Math.floor(serverTimeMs / 20) % 100) + 100) % 100;
}

/** Draws only inside (0, 0, width, height): an outline wider than twice the margin would reach beyond it. */
export function drawHeart(ctx, heart, step, width, height) {
  const { margin, amplitude } = HEART;
  const lineWidth = heart.lineWidth === 0 ? 1 : heart.lineWidth;
  const r = Math.min((width - margin * 2) / 4, (height - margin * 2) / 4);
  ctx.save();
  clipToBox(ctx, width, height);
  ctx.beginPath();
  ctx.arc(margin + r, margin + r, r, Math.PI, 2 * Math.PI);
  ctx.arc(margin + r * 3, margin + r, r, Math.PI, 2 * Math.PI);
  ctx.quadraticCurveTo(width - margin, height * 0.6, width / 2, height - margin * 2);
  ctx.quadraticCurveTo(margin, height * 0.6, margin, margin + r);
  ctx.lineCap = 'round';
  ctx.lineWidth = lineWidth;
  ctx.strokeStyle = heart.strokeColor;
  ctx.stroke();
  ctx.clip();

  const t = step * Math.PI / 50;
  const startY = (height - 3 * margin + amplitude * 2) * (1 - heart.rate) + margin - amplitude;
  ctx.beginPath();
  ctx.moveTo(margin, startY);
  for (let i = 0; i < width - margin * 2 + lineWidth * 2; i += 1) {
    ctx.lineTo(margin + i - lineWidth, startY + amplitude * Math.cos(Math.PI / 50 * i + t));
  }
  ctx.lineTo(width - margin * 2, height - margin * 2);
  ctx.lineTo(margin, height - margin * 2);
  ctx.fillStyle = heart.fillColor;
  ctx.fill();
  ctx.restore();
}

/**
 * The dragon panel of the delegate lesson: the cyan scene (geometry.width × height)
 * with the dragon and the back/forward buttons, a row with the hide button, and
 * the purple status label.
 */
export class PanelLayout {
  constructor(art, geometry) {
    this.art = art;
    this.geometry = geometry;
  }

  get width() { return this.geometry.width; }
  get height() { return this.geometry.height + this.art.panel.rowHeight + this.art.panel.labelHeight; }
  get rowTop() { return this.geometry.height; }
  get labelTop() { return this.geometry.height + this.art.panel.rowHeight; }

  buttonRect(button) {
    const top = button.area === 'scene' ? 0 : this.rowTop;
    let left = button.x;
    if (button.align === 'center') left = (this.width - button.width) / 2;
    else if (button.align === 'right') left = this.width - button.x - button.width;
    return { x: left, y: top + button.y, width: button.width, height: button.height };
  }

  labelRect() {
    return { x: 0, y: this.labelTop, width: this.width, height: this.art.panel.labelHeight };
  }

  /** Draws the panel, only inside its box; `status` null leaves the label's text to the page's own label element. */
  draw(ctx, dragon, status) {
    const { panel } = this.art;
    const { width, geometry } = this;
    ctx.save();
    clipToBox(ctx, width, this.height);
    ctx.fillStyle = panel.sceneColor;
    ctx.fillRect(0, 0, width, geometry.height);
    ctx.fillStyle = panel.rowColor;
    ctx.fillRect(0, this.rowTop, width, panel.rowHeight);
    ctx.fillStyle = panel.labelColor;
    ctx.fillRect(0, this.labelTop, width, panel.labelHeight);

    for (const button of panel.buttons) this.drawButton(ctx, button, dragon.hidden);

    if (!dragon.hidden) {
      // Like a UIImageView in a view that clips: the dragon stays in the scene.
      ctx.save();
      ctx.beginPath();
      ctx.rect(0, 0, width, geometry.height);
      ctx.clip();
      ctx.translate(dragon.x, dragon.y);
      const scale = geometry.dragonSize / this.art.dragonBox;
      ctx.scale(scale, scale);
      drawShapes(ctx, this.art.dragon);
      ctx.restore();
    }

    if (status !== null) {
      ctx.fillStyle = panel.textColor;
      centredText(ctx, status, width / 2, this.labelTop + panel.labelHeight / 2, panel.fontSize);
    }
    ctx.restore();
  }

  drawButton(ctx, button, hidden) {
    const box = this.buttonRect(button);
    ctx.save();
    ctx.translate(box.x, box.y);
    ctx.beginPath();
    roundedRectangle(ctx, box.width, box.height, button.radius);
    ctx.fillStyle = button.fill;
    ctx.fill();
    drawShapes(ctx, button.shapes);
    if (hidden) drawShapes(ctx, button.hiddenShapes);
    ctx.restore();
  }
}

function roundedRectangle(ctx, width, height, radius) {
  const r = Math.max(0, Math.min(radius, width / 2, height / 2));
  if (r === 0) {
    ctx.rect(0, 0, width, height);
    return;
  }
  ctx.arc(width - r, r, r, -Math.PI / 2, 0);
  ctx.arc(width - r, height - r, r, 0, Math.PI / 2);
  ctx.arc(r, height - r, r, Math.PI / 2, Math.PI);
  ctx.arc(r, r, r, Math.PI, 3 * Math.PI / 2);
  ctx.closePath();
}

/** One line centred on its ink box, as the server's Cairo text extents centre it. */
function centredText(ctx, text, x, y, size) {
  ctx.font = `${size}px sans-serif`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'alphabetic';
  const m = ctx.measureText(text);
  const inkWidth = m.actualBoundingBoxLeft + m.actualBoundingBoxRight;
  const inkHeight = m.actualBoundingBoxAscent + m.actualBoundingBoxDescent;
  ctx.fillText(text, x - inkWidth / 2 + m.actualBoundingBoxLeft, y - inkHeight / 2 + m.actualBoundingBoxAscent);
}

/** Scales a contentWidth × contentHeight drawing to fit `box`, keeping its aspect, centred and clipped. */
export function drawFitted(ctx, contentWidth, contentHeight, box, body) {
  const scale = Math.min(box.width / contentWidth, box.height / contentHeight);
  ctx.save();
  ctx.translate(box.x + (box.width - contentWidth * scale) / 2, box.y + (box.height - contentHeight * scale) / 2);
  ctx.scale(scale, scale);
  ctx.beginPath();
  ctx.rect(0, 0, contentWidth, contentHeight);
  ctx.clip();
  body();
  ctx.restore();
}

/**
 * The composite `scene` view of the server (FrameRenderer.drawComposite), in art.scene coordinates;
 * each view stays inside its own box.
 */
export function drawComposite(ctx, art, layout, state, status, step) {
  const scene = art.scene;
  ctx.fillStyle = scene.background;
  ctx.fillRect(0, 0, scene.width, scene.height);
  ctx.save();
  ctx.translate(scene.face.x, scene.face.y);
  drawFace(ctx, state.face, scene.face.width, scene.face.height);
  ctx.restore();
  ctx.save();
  ctx.translate(scene.heart.x, scene.heart.y);
  drawHeart(ctx, state.heart, step, scene.heart.width, scene.heart.height);
  ctx.restore();
  drawFitted(ctx, layout.width, layout.height, scene.dragon, () => layout.draw(ctx, state.dragon, status));
}
