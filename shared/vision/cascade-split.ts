/**
 * The Haar cascade's pyramid split across threads, with exactly detectMultiScale's result.
 *
 * detectMultiScale scans pyramid levels one after another, and each level depends only on the source image
 * and its scale; the candidates of all levels, in level order, are then grouped. So the levels can be
 * shared out: each part runs detectMultiScale with `minNeighbors: 0` (raw candidates) and `minSize` /
 * `maxSize` bounds that select a run of consecutive levels (the scale steps are the same in every call);
 * the parts' candidates, concatenated in level order, are grouped and clipped as detectMultiScale does.
 *
 * One wrinkle: detectMultiScale clips its output to the image, and a raw window at the right or bottom
 * edge can reach past it by a pixel or so. For a square cascade (every cascade Lookout ships) a window
 * clipped on one side only is restored from its other side; a window touching both the right and the
 * bottom edge cannot be, and `mergeParts` then returns null: the caller runs the plain detectMultiScale
 * for that image. Either way the answer is identical to detectMultiScale's.
 *
 * detectSplit runs such a plan with whatever helpers the host has: the browser's cascade threads
 * (client/src/engine/cascade-pool.ts), the server's idle vision workers (server/engines/faces/vision-worker.ts).
 */
import { cvRound } from '../image/ops.js';
import type { GrayImage, Rect } from '../image/types.js';
import { detectMultiScale, groupRectangles, stripeCount, type DetectOptions, type HaarCascade } from './haar-cascade.js';

const fround = Math.fround;

interface Level {
  /** Window size at this level, in image pixels. */
  window: number;
  /** Window positions across the level (OpenCV's working width). */
  workW: number;
  /** Relative cost: the windows the level scans. */
  cost: number;
}

/** The pyramid detectMultiScale would scan: its levels' window sizes (square cascades only) and costs. */
function levels(cascade: HaarCascade, width: number, height: number, options: DetectOptions): Level[] {
  const scaleFactor = options.scaleFactor ?? 1.1;
  const minSize = options.minSize ?? { width: 30, height: 30 };
  let maxW = options.maxSize?.width ?? 0;
  let maxH = options.maxSize?.height ?? 0;
  if (maxW === 0 || maxH === 0) {
    maxW = width;
    maxH = height;
  }
  const W0 = cascade.windowWidth;
  const H0 = cascade.windowHeight;
  const out: Level[] = [];
  if (!(scaleFactor > 1) || width <= 0 || height <= 0) return out;
  // The same scale steps as detectMultiScale: factor stays double, each level keeps it as float.
  for (let factor = 1; ; factor *= scaleFactor) {
    const ww = cvRound(W0 * factor);
    const wh = cvRound(H0 * factor);
    if (ww > maxW || wh > maxH || ww > width || wh > height) break;
    if (ww < minSize.width || wh < minSize.height) continue;
    const sc = fround(factor);
    const lw = cvRound(fround(width / sc));
    const lh = cvRound(fround(height / sc));
    const step = sc >= 2 ? 1 : 2;
    const cost = (Math.max(lw + 1 - W0, 0) / step) * (Math.max(lh + 1 - H0, 0) / step);
    out.push({ window: ww, workW: Math.max(lw + 1 - W0, 0), cost });
  }
  return out;
}

/**
 * Options for up to `parts` calls of detectMultiScale that between them scan every level once, each a run of
 * consecutive levels of about equal cost, in level order. Fewer parts when there are fewer levels; null when
 * the cascade is not square (no split; run detectMultiScale as it is).
 */
export function splitPyramid(
  cascade: HaarCascade,
  width: number,
  height: number,
  options: DetectOptions,
  parts: number,
): DetectOptions[] | null {
  if (cascade.windowWidth !== cascade.windowHeight) return null;
  const all = levels(cascade, width, height, options);
  // Levels with equal window sizes cannot be told apart by minSize/maxSize: they stay in one part.
  const groups: Level[] = [];
  for (const lv of all) {
    const last = groups[groups.length - 1];
    if (last && last.window === lv.window) last.cost += lv.cost;
    else groups.push({ ...lv });
  }
  const n = Math.max(1, Math.min(Math.floor(parts), groups.length));
  const total = groups.reduce((s, g) => s + g.cost, 0);
  const bounds: { from: number; to: number }[] = [];
  let start = 0;
  let acc = 0;
  for (let i = 0; i < groups.length && bounds.length < n - 1; i++) {
    acc += groups[i].cost;
    const left = groups.length - (i + 1); // groups after this one
    const partsLeft = n - 1 - bounds.length;
    if (acc >= (total * (bounds.length + 1)) / n || left === partsLeft) {
      bounds.push({ from: groups[start].window, to: groups[i].window });
      start = i + 1;
    }
  }
  if (start < groups.length) bounds.push({ from: groups[start].window, to: groups[groups.length - 1].window });
  // Every part scans the rows the whole pyramid would: OpenCV's stripes follow its first level (detect.ts).
  const base: DetectOptions = { ...options, minNeighbors: 0, stripes: options.stripes ?? stripeCount(all[0]?.workW ?? 0) };
  return bounds.map(({ from, to }, i) => ({
    ...base,
    minSize: { width: from, height: from },
    // The last part keeps the caller's own upper bound (none means the image size).
    ...(i === bounds.length - 1 ? {} : { maxSize: { width: to, height: to } }),
  }));
}

/**
 * Groups and clips the parts' raw candidates (in part order) as detectMultiScale does, or returns null when a
 * candidate's true size cannot be known (see the file comment): then use detectMultiScale itself.
 */
export function mergeParts(parts: readonly (readonly Rect[])[], width: number, height: number, minNeighbors = 5): Rect[] | null {
  const candidates: Rect[] = [];
  for (const part of parts) {
    for (const r of part) {
      const right = r.x + r.width === width;
      const bottom = r.y + r.height === height;
      if (right && bottom) return null;
      // Square windows: a side cut short by the edge is as long as the other.
      if (right && r.width < r.height) candidates.push({ x: r.x, y: r.y, width: r.height, height: r.height });
      else if (bottom && r.height < r.width) candidates.push({ x: r.x, y: r.y, width: r.width, height: r.width });
      else candidates.push({ x: r.x, y: r.y, width: r.width, height: r.height });
    }
  }
  const grouped = groupRectangles(candidates, minNeighbors, 0.2);
  // detectMultiScale's clipObjects: intersect with the image, drop empty results.
  const out: Rect[] = [];
  for (const r of grouped) {
    const x1 = Math.max(r.x, 0);
    const y1 = Math.max(r.y, 0);
    const w = Math.min(r.x + r.width, width) - x1;
    const h = Math.min(r.y + r.height, height) - y1;
    if (r.width > 0 && r.height > 0 && w > 0 && h > 0) out.push({ x: x1, y: y1, width: w, height: h });
  }
  return out;
}

/**
 * Scans the levels `part` selects of `gray` on another thread and returns its raw windows, or null when it
 * cannot (no thread free, or it failed): the caller then scans that part itself. The runner sends its own copy
 * of the pixels; `gray` stays the caller's.
 */
export type PartRunner = (gray: GrayImage, part: DetectOptions) => Promise<Rect[] | null>;

/**
 * detectMultiScale's boxes with the pyramid shared between this thread and `helpers` (one part each, the first
 * and largest levels here): identical to detectMultiScale(cascade, gray, options) whatever the helpers do.
 */
export async function detectSplit(
  cascade: HaarCascade,
  gray: GrayImage,
  options: DetectOptions,
  helpers: readonly PartRunner[],
): Promise<Rect[]> {
  const single = () => detectMultiScale(cascade, gray, options);
  if (helpers.length === 0) return single();
  const plan = splitPyramid(cascade, gray.width, gray.height, options, helpers.length + 1);
  if (!plan || plan.length < 2) return single();
  const remote = plan.slice(1).map((part, i) => helpers[i](gray, part).catch(() => null));
  const parts = [detectMultiScale(cascade, gray, plan[0])];
  for (const [i, answer] of remote.entries()) parts.push((await answer) ?? detectMultiScale(cascade, gray, plan[i + 1]));
  // Null: a window at the bottom-right corner whose size cannot be restored; one plain run decides.
  return mergeParts(parts, gray.width, gray.height, options.minNeighbors ?? 5) ?? single();
}
