// The scene art shared with the server's Cairo renderer (web/assets/scene-art.json,
// its "about" field documents the format), with each shape turned into a Path2D.

export const ART_URL = 'assets/scene-art.json';

export async function loadArt(url = ART_URL) {
  const response = await fetch(url, { cache: 'no-cache' });
  if (!response.ok) throw new Error(`scene art: HTTP ${response.status} for ${url}`);
  const json = await response.json();
  if (json.format !== undefined && json.format !== 1) throw new Error('scene art: only format 1 is understood');
  return prepareArt(json);
}

export function prepareArt(json) {
  const panel = json.panel;
  return {
    dragonBox: json.dragon.box,
    dragon: json.dragon.shapes.map(prepareShape),
    panel: {
      ...panel,
      buttons: panel.buttons.map((button) => ({
        ...button,
        shapes: button.shapes.map(prepareShape),
        hiddenShapes: (button.hiddenShapes || []).map(prepareShape),
      })),
    },
    scene: json.scene,
  };
}

function prepareShape(shape) {
  return {
    path: outline(shape),
    fill: shape.fill || null,
    stroke: shape.stroke || null,
    lineWidth: shape.lineWidth === undefined ? 1 : shape.lineWidth,
  };
}

function outline(shape) {
  if (typeof shape.path === 'string') return new Path2D(shape.path);
  const path = new Path2D();
  if (Array.isArray(shape.polygon)) {
    const p = shape.polygon;
    path.moveTo(p[0], p[1]);
    for (let i = 2; i < p.length; i += 2) path.lineTo(p[i], p[i + 1]);
    path.closePath();
  } else if (Array.isArray(shape.ellipse)) {
    const [cx, cy, rx, ry] = shape.ellipse;
    path.ellipse(cx, cy, rx, ry, 0, 0, 2 * Math.PI);
    path.closePath();
  } else {
    throw new Error('scene art: a shape needs "path", "polygon" or "ellipse"');
  }
  return path;
}

/** Fills, then strokes (round joins and caps), each shape in the current coordinates. */
export function drawShapes(ctx, shapes) {
  for (const shape of shapes) {
    if (shape.fill) {
      ctx.fillStyle = shape.fill;
      ctx.fill(shape.path);
    }
    if (shape.stroke) {
      ctx.lineJoin = 'round';
      ctx.lineCap = 'round';
      ctx.lineWidth = shape.lineWidth;
      ctx.strokeStyle = shape.stroke;
      ctx.stroke(shape.path);
    }
  }
}
