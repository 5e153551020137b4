/**
 * cv::groupRectangles of OpenCV 4.6: the raw detections clustered (cv::partition with SimilarRects), averaged in
 * float with OpenCV's rounding, and filtered by neighbour count and nesting. Used by detectMultiScale and by the
 * split scan's merge (cascade-split.ts). Part of haar-cascade.ts, which re-exports it.
 */
import { cvRound } from '../../image/ops.js';
import type { Rect } from '../../image/types.js';

const fround = Math.fround;

/**
 * cv::groupRectangles(rectList, groupThreshold, eps): cluster with SimilarRects(eps) (cv::partition), average each
 * cluster, drop clusters with <= groupThreshold members and small clusters inside bigger ones.
 * groupThreshold <= 0 returns the input unchanged (a copy).
 */
export function groupRectangles(rects: readonly Rect[], groupThreshold: number, eps = 0.2): Rect[] {
  if (groupThreshold <= 0 || rects.length === 0) return rects.map((r) => ({ ...r }));
  const n = rects.length;
  // cv::partition: connected components of the similarity graph, classes numbered by first member.
  const parent = new Int32Array(n).map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  };
  for (let i = 0; i < n; i++) {
    const a = rects[i];
    for (let j = i + 1; j < n; j++) {
      const b = rects[j];
      const delta = eps * (Math.min(a.width, b.width) + Math.min(a.height, b.height)) * 0.5;
      if (
        Math.abs(a.x - b.x) <= delta &&
        Math.abs(a.y - b.y) <= delta &&
        Math.abs(a.x + a.width - b.x - b.width) <= delta &&
        Math.abs(a.y + a.height - b.y - b.height) <= delta
      ) {
        const ra = find(i);
        const rb = find(j);
        if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
      }
    }
  }
  const classOfRoot = new Int32Array(n).fill(-1);
  const labels = new Int32Array(n);
  let nclasses = 0;
  for (let i = 0; i < n; i++) {
    const r = find(i);
    if (classOfRoot[r] < 0) classOfRoot[r] = nclasses++;
    labels[i] = classOfRoot[r];
  }
  const sx = new Float64Array(nclasses);
  const sy = new Float64Array(nclasses);
  const sw = new Float64Array(nclasses);
  const sh = new Float64Array(nclasses);
  const count = new Int32Array(nclasses);
  for (let i = 0; i < n; i++) {
    const c = labels[i];
    sx[c] += rects[i].x;
    sy[c] += rects[i].y;
    sw[c] += rects[i].width;
    sh[c] += rects[i].height;
    count[c]++;
  }
  // Average: int sum times float(1/n) in float, then saturate_cast<int> (round half to even).
  const avg: Rect[] = [];
  for (let c = 0; c < nclasses; c++) {
    const s = fround(1 / count[c]);
    avg.push({
      x: cvRound(fround(fround(sx[c]) * s)),
      y: cvRound(fround(fround(sy[c]) * s)),
      width: cvRound(fround(fround(sw[c]) * s)),
      height: cvRound(fround(fround(sh[c]) * s)),
    });
  }
  const out: Rect[] = [];
  for (let i = 0; i < nclasses; i++) {
    const r1 = avg[i];
    const n1 = count[i];
    if (n1 <= groupThreshold) continue;
    let inside = false;
    for (let j = 0; j < nclasses; j++) {
      const n2 = count[j];
      if (j === i || n2 <= groupThreshold) continue;
      const r2 = avg[j];
      const dx = cvRound(r2.width * eps);
      const dy = cvRound(r2.height * eps);
      if (
        r1.x >= r2.x - dx &&
        r1.y >= r2.y - dy &&
        r1.x + r1.width <= r2.x + r2.width + dx &&
        r1.y + r1.height <= r2.y + r2.height + dy &&
        (n2 > Math.max(3, n1) || n1 < 3)
      ) {
        inside = true;
        break;
      }
    }
    if (!inside) out.push(r1);
  }
  return out;
}
