/** Intersection over union and greedy per-class non-maximum suppression, for any detector's boxes. */

export interface BoxLike {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** IoU of two boxes (x, y, w, h); 0 when either is empty. */
export function iou(a: BoxLike, b: BoxLike): number {
  const ix = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const iy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  if (ix <= 0 || iy <= 0) return 0;
  const inter = ix * iy;
  const union = a.w * a.h + b.w * b.h - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * Greedy NMS within each class: boxes are taken by descending confidence and a box is dropped when its IoU
 * with an already kept box of the same class is above `iouThreshold`. So no two kept boxes of one class
 * overlap by more than the threshold. Returns the kept items sorted by descending confidence.
 */
export function nmsPerClass<T extends BoxLike & { class_id: number; confidence: number }>(
  items: readonly T[],
  iouThreshold: number,
  maxDetections = Infinity,
): T[] {
  const sorted = [...items].sort((a, b) => b.confidence - a.confidence);
  const keptByClass = new Map<number, T[]>();
  const kept: T[] = [];
  for (const item of sorted) {
    if (kept.length >= maxDetections) break;
    let same = keptByClass.get(item.class_id);
    if (same?.some((k) => iou(k, item) > iouThreshold)) continue;
    if (!same) {
      same = [];
      keptByClass.set(item.class_id, same);
    }
    same.push(item);
    kept.push(item);
  }
  return kept;
}
