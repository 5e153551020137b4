/**
 * Where box labels go so that none covers another and none covers a face: two faces side by side, or one box inside
 * another, put their labels on the same spot above the boxes, and the two names became one unreadable smear; a
 * label drawn inside its box (a face at the top edge, as on a phone's camera) hid the face it named. Each label, in
 * order, takes the first of its places (candidates()) that overlaps no label already placed and no box, never
 * outside the picture; when none is free (a crowded picture), the one that covers least, boxes counting more than
 * labels. A place may be narrower than the label asked for: the text is then shortened with an ellipsis
 * (overlay.ts). Pure, so it is tested without a canvas.
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
/** A shortened label keeps at least this many label heights of width (a name's first letters and the ellipsis). */
const MIN_WIDTH_IN_HEIGHTS = 2;

type Place = { left: number; top: number; w: number };

/** Touching the box: above, below; starting at the box's left edge, centred, ending at its right edge. */
function near(box: LabelRequest['box'], w: number, h: number): Place[] {
  return [box.y - h, box.y + box.h].flatMap((top) => [box.x, box.x + (box.w - w) / 2, box.x + box.w - w].map((left) => ({ left, top, w })));
}

/** Also further up and down in label-height steps: the last resort of a crowded picture. */
function farther(box: LabelRequest['box'], w: number, h: number): Place[] {
  const tops: number[] = [];
  for (let i = 1; i <= MAX_STEPS; i++) tops.push(box.y - h - i * h, box.y + box.h + i * h);
  return tops.map((top) => ({ left: box.x, top, w }));
}

/** The width a label is shortened to when its full width has no room beside its face. */
function shortWidth(box: LabelRequest['box'], w: number, h: number): number {
  return Math.min(w, Math.max(box.w, MIN_WIDTH_IN_HEIGHTS * h));
}

interface Layout {
  rects: Rect[];
  /** Whether every label found a place that covers nothing. */
  free: boolean;
}

/** Each label in order at the first free one of its places, else the one that covers least. */
function place(
  labels: readonly LabelRequest[],
  width: number,
  height: number,
  places: (label: LabelRequest) => Place[],
  cost: (r: Rect, placed: readonly Rect[]) => number,
): Layout {
  const rects: Rect[] = [];
  let free = true;
  for (const label of labels) {
    const { box, w, h } = label;
    let best: Rect | null = null;
    let bestCost = Number.POSITIVE_INFINITY;
    for (const c of places(label)) {
      const r = inside(c.left, c.top, c.w, h, width, height);
      if (!r) continue;
      const k = cost(r, rects);
      if (k < bestCost) {
        best = r;
        bestCost = k;
      }
      if (k === 0) break;
    }
    if (bestCost > 0) free = false;
    // A box as tall as the picture leaves no room above or below: the label goes at its top, inside the picture.
    rects.push(
      best ?? {
        left: Math.max(0, Math.min(box.x, width - Math.min(w, width))),
        top: Math.max(0, Math.min(box.y, height - h)),
        w: Math.min(w, width),
        h,
      },
    );
  }
  return { rects, free };
}

/**
 * Labels touching their faces at full width where that covers nothing; else all shortened to their faces' width and
 * each widened again where there is room (one label taking its full width first would leave its neighbours none);
 * only when that still covers something, further up and down and, in the end, the place that covers least. A label
 * that leaves its face for a free spot between two rows of a group photo lands over the next row's faces or is read
 * as theirs; a shortened one (drawn with an ellipsis; the full words are in the results list) stays with its face.
 */
export function layoutLabels(labels: readonly LabelRequest[], width: number, height: number): Rect[] {
  const boxes: Rect[] = labels.map(({ box }) => ({ left: box.x, top: box.y, w: box.w, h: box.h }));
  const cost = (r: Rect, placed: readonly Rect[]) =>
    placed.reduce((sum, p) => sum + overlap(r, p), 0) + BOX_WEIGHT * boxes.reduce((sum, b) => sum + overlap(r, b), 0);

  const full = place(labels, width, height, ({ box, w, h }) => near(box, w, h), cost);
  if (full.free) return full.rects;

  const short = place(labels, width, height, ({ box, w, h }) => near(box, shortWidth(box, w, h), h), cost);
  if (short.free) {
    const rects = short.rects;
    for (const [i, { box, w, h }] of labels.entries()) {
      if (rects[i].w >= Math.min(w, width)) continue;
      const others = rects.filter((_, j) => j !== i);
      for (const c of near(box, w, h)) {
        const r = inside(c.left, c.top, c.w, h, width, height);
        if (r && cost(r, others) === 0) {
          rects[i] = r;
          break;
        }
      }
    }
    return rects;
  }

  return place(
    labels,
    width,
    height,
    ({ box, w, h }) => {
      const s = shortWidth(box, w, h);
      return [...near(box, w, h), ...near(box, s, h), ...farther(box, w, h), ...farther(box, s, h)];
    },
    cost,
  ).rects;
}
