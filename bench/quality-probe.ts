/**
 * Where the quality floors belong (#34 section 2, shared/recognition/rules.ts QUALITY_FLOORS): the faces of the
 * people seen in several photos shrunk to 20..50 px (JPEG quality 50), sharp or blurred by 1.5 px, each described by
 * the product's faceapi-128 nets and compared with every other clean face of the set. Per size: the faces' sharpness
 * (photo-check.ts, as the query's quality is measured), how often a multi-photo person's nearest other face is theirs
 * (rank-1), their distance to their own other photos, and other faces' distance to their nearest face. A face too
 * poor to describe lies farther from its own person than strangers lie from theirs: such faces must be
 * `low_quality`, never named.
 */
import path from 'node:path';
import { NodeEmbeddingEngine } from '../server/engines/faces/embedding-node.js';
import { euclideanDistance } from '../shared/embedding/matcher.js';
import { measureFace } from '../shared/recognition/photo-check.js';
import { degradeFace } from './camera-degrade.js';
import type { SourceFace } from './open-set-features.js';
import { median } from './types.js';

const SIZES = [20, 24, 28, 32, 36, 40, 50];
const BLURS = [0, 1.5];

const pctile = (values: readonly number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

export async function qualityProbe(repoRoot: string, faces: readonly SourceFace[]): Promise<string[]> {
  const engine = new NodeEmbeddingEngine({ modelDir: path.join(repoRoot, 'public/models/face-api'), descriptor: 'faceapi-128' });
  const status = await engine.load();
  if (!status.available) return [`quality probe: faceapi-128 unavailable (${status.reason})`];
  try {
    const clean = await Promise.all(faces.map(async (f) => (await engine.describeFaces(f.photo.rgb, [f.box]))[0] ?? null));
    const count = new Map<string, number>();
    for (const f of faces) count.set(f.person, (count.get(f.person) ?? 0) + 1);
    const multi = faces.map((f, i) => ((count.get(f.person) ?? 0) > 1 && !f.strangerOnly ? i : -1)).filter((i) => i >= 0);
    const lines = [
      '',
      `Quality probe (bench/quality-probe.ts): ${multi.length} faces of people seen in several photos and ${faces.length - multi.length} others, each shrunk to the size given (JPEG q50), faceapi-128:`,
      '',
      '| face width | blur | sharpness median (10th percentile) | multi-photo faces whose nearest other face is their own | their distance to their own other photos, median | other faces: distance to their nearest face, median (5th percentile) |',
      '|---|---|---|---|---|---|',
    ];
    for (const px of SIZES) {
      for (const blur of BLURS) {
        const sharpness: number[] = [];
        const own: number[] = [];
        const others: number[] = [];
        let right = 0;
        for (let i = 0; i < faces.length; i++) {
          const d = await degradeFace(faces[i].photo, faces[i].box, { facePx: px, jpeg: 50, blur, sideLight: 1, litFrom: 'left' });
          sharpness.push(measureFace(d.photo.gray, d.box).sharpness);
          const [q] = await engine.describeFaces(d.photo.rgb, [d.box]);
          if (!q) continue;
          let best = Infinity;
          let nearest = -1;
          for (let j = 0; j < faces.length; j++) {
            const c = clean[j];
            if (j === i || !c) continue;
            const e = euclideanDistance(q, c);
            if (e < best) [best, nearest] = [e, j];
          }
          if (multi.includes(i)) {
            if (nearest >= 0 && faces[nearest].person === faces[i].person) right++;
            const mine = multi.filter((j) => j !== i && faces[j].person === faces[i].person && clean[j]);
            own.push(Math.min(...mine.map((j) => euclideanDistance(q, clean[j] as Float32Array))));
          } else others.push(best);
        }
        lines.push(
          `| ${px} px | ${blur ? `${blur} px` : 'none'} | ${median(sharpness).toFixed(4)} (${pctile(sharpness, 0.1).toFixed(4)}) | ${right} of ${multi.length} | ${median(own).toFixed(3)} | ${median(others).toFixed(3)} (${pctile(others, 0.05).toFixed(3)}) |`,
        );
      }
    }
    return lines;
  } finally {
    engine.dispose();
  }
}
