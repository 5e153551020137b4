/**
 * Where box labels go so that none covers another: two faces side by side, or one box inside another, put their
 * labels on the same spot above the boxes, and the two names became one unreadable smear. Each label, in order,
 * takes the first of these places that overlaps no label already placed: above its box, inside its box at the top,
 * below its box, then further down in label-height steps; when none is free (a crowded picture), the one that
 * overlaps least. Pure, so it is tested without a canvas.
 */

export interface Rect {
  left: number;
  top: number;
  w: number;
  h: number;
}

export interface LabelRequest {
  /** The box the label names (canvas pixels). */
  box: { x: number; y: number; w: number; h: number };
  /** The label's size. */
  w: number;
  h: number;
}

function overlap(a: Rect, b: Rect): number {
  const x = Math.min(a.left + a.w, b.left + b.w) - Math.max(a.left, b.left);
  const y = Math.min(a.top + a.h, b.top + b.h) - Math.max(a.top, b.top);
  return x > 0 && y > 0 ? x * y : 0;
}

/** A label at (left, top), moved inside a `width` x `height` canvas. */
function inside(left: number, top: number, w: number, h: number, width: number, height: number): Rect {
  const cw = Math.min(w, width);
  return { left: Math.max(0, Math.min(left, width - cw)), top: Math.max(0, Math.min(top, height - h)), w: cw, h };
}

/** Steps tried below the box before settling for the least overlap. */
const MAX_STEPS = 8;

export function layoutLabels(labels: readonly LabelRequest[], width: number, height: number): Rect[] {
  const placed: Rect[] = [];
  for (const { box, w, h } of labels) {
    const tops = [box.y - h, box.y, box.y + box.h];
    for (let i = 1; i <= MAX_STEPS; i++) tops.push(box.y + box.h + i * h);
    let best: Rect | null = null;
    let bestOverlap = Number.POSITIVE_INFINITY;
    for (const top of tops) {
      const r = inside(box.x, top, w, h, width, height);
      const o = placed.reduce((sum, p) => sum + overlap(r, p), 0);
      if (o < bestOverlap) {
        best = r;
        bestOverlap = o;
      }
      if (o === 0) break;
    }
    placed.push(best!);
  }
  return placed;
}
