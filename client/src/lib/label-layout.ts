/**
 * Where box labels go so that none covers another and none covers a face: two faces side by side, or one box inside
 * another, put their labels on the same spot above the boxes, and the two names became one unreadable smear; a
 * label drawn inside its box (a face at the top edge, as on a phone's camera) hid the face it named. Each label, in
 * order, takes the first of these places that overlaps no label already placed and no box: above its box, below
 * it, then further up and down in label-height steps, never outside the picture; when none is free (a crowded
 * picture), the one that covers least, boxes counting more than labels. Pure, so it is tested without a canvas.
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

/** A label at (left, top), moved sideways inside a `width`-wide canvas (null when it is above or below the picture). */
function inside(left: number, top: number, w: number, h: number, width: number, height: number): Rect | null {
  if (top < 0 || top + h > height) return null;
  const cw = Math.min(w, width);
  return { left: Math.max(0, Math.min(left, width - cw)), top, w: cw, h };
}

/** Steps tried further above and below the box before settling for the least overlap. */
const MAX_STEPS = 8;
/** A label over a box hides what the box shows: worse than one over another label. */
const BOX_WEIGHT = 4;

export function layoutLabels(labels: readonly LabelRequest[], width: number, height: number): Rect[] {
  const boxes: Rect[] = labels.map(({ box }) => ({ left: box.x, top: box.y, w: box.w, h: box.h }));
  const placed: Rect[] = [];
  for (const { box, w, h } of labels) {
    const tops = [box.y - h, box.y + box.h];
    for (let i = 1; i <= MAX_STEPS; i++) tops.push(box.y - h - i * h, box.y + box.h + i * h);
    let best: Rect | null = null;
    let bestCost = Number.POSITIVE_INFINITY;
    for (const top of tops) {
      const r = inside(box.x, top, w, h, width, height);
      if (!r) continue;
      const cost = placed.reduce((sum, p) => sum + overlap(r, p), 0) + BOX_WEIGHT * boxes.reduce((sum, b) => sum + overlap(r, b), 0);
      if (cost < bestCost) {
        best = r;
        bestCost = cost;
      }
      if (cost === 0) break;
    }
    // A box as tall as the picture leaves no room above or below: the label goes at its top, inside the picture.
    placed.push(
      best ?? {
        left: Math.max(0, Math.min(box.x, width - Math.min(w, width))),
        top: Math.max(0, Math.min(box.y, height - h)),
        w: Math.min(w, width),
        h,
      },
    );
  }
  return placed;
}
