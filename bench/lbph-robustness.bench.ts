/**
 * LBPH across photos taken at different moments (issue #16 item 11): a person enrolled from one photo, queried in
 * another. Lookout's normalisation (eye-tilt alignment, shared/vision/eye-alignment.ts) against the plain crop it
 * replaces, both measured in this run on the same faces, with OpenCV's raw nearest neighbour beside them (the
 * nearest training face's label whatever its distance: Lookout's LBPH predict is bit-exact with OpenCV's,
 * shared/lbph/lbph.test.ts, so this is OpenCV's answer).
 *
 * Two sets, both from licensed photos in test/fixtures/images (SOURCES.md):
 * - Captures: 19 people of the test photos, each enrolled from its photo and queried in 8 other captures of that
 *   photo made here (side light, evening light, overexposed, head tilted 10 degrees, tilted -8 and nearer, further
 *   away, tilted 6 and re-lit and re-compressed, turned a little). No licensed set of the same people photographed
 *   twice is available here (test/fixtures/images/SOURCES.md), so these stand in for "another moment".
 * - Real photos: 19 different photos of one man (Human's face-match screenshot), each enrolled in turn beside the
 *   19 other people and queried with the other 18, and 80 thumbnails of other people as impostors.
 * "Recognised" is the right name inside the spec's 4..85 window; "false accepts" are other people given a name.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { rgbToGray } from '../shared/image/ops.js';
import type { GrayImage, Rect } from '../shared/image/types.js';
import { warpAffineGray, type Affine } from '../shared/image/warp.js';
import { lbpHistogram, LBPH_DEFAULTS, predictLbph, type LbphModel } from '../shared/lbph/lbph.js';
import { DEFAULT_LBPH_WINDOW, decide } from '../shared/recognition/confidence.js';
import { alignedFace } from '../shared/vision/eye-alignment.js';
import { detectMultiScale, parseHaarCascade, type HaarCascade } from '../shared/vision/haar-cascade.js';
import { FACEMATCH, MAN, PEOPLE, thumbKey, UNCLEAR } from './identity-sets.js';
import { median, type BenchRow } from './types.js';

const FACES = 'test/fixtures/images/faces';
const DETECT = { scaleFactor: 1.1, minNeighbors: 5, minSize: { width: 30, height: 30 } };

interface Normalisation {
  name: string;
  face: (gray: GrayImage, box: Rect) => GrayImage;
}

async function loadGray(file: string): Promise<GrayImage> {
  const { data, info } = await sharp(path.join(FACES, file)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return rgbToGray({ width: info.width, height: info.height, channels: 3, data: new Uint8Array(data) });
}

const mapGray = (g: GrayImage, f: (v: number, x: number) => number): GrayImage => {
  const out = new Uint8Array(g.data.length);
  for (let i = 0; i < out.length; i++) out[i] = Math.max(0, Math.min(255, Math.round(f(g.data[i], i % g.width))));
  return { width: g.width, height: g.height, data: out };
};
const rotation = (g: GrayImage, degrees: number, scale: number): Affine => {
  const a = (degrees * Math.PI) / 180;
  const [cx, cy] = [g.width / 2, g.height / 2];
  const c = scale * Math.cos(a);
  const s = scale * Math.sin(a);
  // OpenCV's getRotationMatrix2D: positive angles turn counter-clockwise.
  return [c, s, (1 - c) * cx - s * cy, -s, c, s * cx + (1 - c) * cy];
};
async function jpeg(g: GrayImage, quality: number): Promise<GrayImage> {
  const bytes = await sharp(Buffer.from(g.data), { raw: { width: g.width, height: g.height, channels: 1 } })
    .jpeg({ quality })
    .toBuffer();
  const { data, info } = await sharp(bytes).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

interface Capture {
  name: string;
  gray: GrayImage;
  /** Where the photo's pixels went (to find the person's face among the capture's faces). */
  matrix: Affine;
}

async function captures(g: GrayImage): Promise<Capture[]> {
  const id: Affine = [1, 0, 0, 0, 1, 0];
  const warp = (m: Affine) => warpAffineGray(g, m, g.width, g.height);
  const side = (img: GrayImage, from: number, to: number) => mapGray(img, (v, x) => v * (from + ((to - from) * x) / img.width));
  const tilt6 = rotation(g, 6, 0.85);
  return [
    { name: 'side light', gray: side(g, 0.45, 1.2), matrix: id },
    { name: 'evening', gray: mapGray(g, (v) => 255 * (v / 255) ** 1.7), matrix: id },
    { name: 'overexposed', gray: mapGray(g, (v) => 1.1 * 255 * (v / 255) ** 0.6 + 10), matrix: id },
    { name: 'tilted 10', gray: warp(rotation(g, 10, 1)), matrix: rotation(g, 10, 1) },
    { name: 'tilted -8, nearer', gray: warp(rotation(g, -8, 1.25)), matrix: rotation(g, -8, 1.25) },
    { name: 'further away', gray: warp(rotation(g, 0, 0.65)), matrix: rotation(g, 0, 0.65) },
    { name: 'tilted 6, relit, jpeg 60', gray: await jpeg(side(warp(tilt6), 1.15, 0.55), 60), matrix: tilt6 },
    { name: 'turned a little', gray: warp([0.9, 0.03, g.width * 0.05, 0, 1, 0]), matrix: [0.9, 0.03, g.width * 0.05, 0, 1, 0] },
  ];
}

/** The capture's face nearest where the person's face went, or null when the cascade lost it. */
function faceIn(boxes: Rect[], m: Affine, b: Rect): Rect | null {
  const cx = b.x + b.width / 2;
  const cy = b.y + b.height / 2;
  const tx = m[0] * cx + m[1] * cy + m[2];
  const ty = m[3] * cx + m[4] * cy + m[5];
  let best: Rect | null = null;
  let bestD = 0.35 * b.width;
  for (const r of boxes) {
    const d = Math.hypot(r.x + r.width / 2 - tx, r.y + r.height / 2 - ty);
    if (d < bestD) [best, bestD] = [r, d];
  }
  return best;
}

const modelOf = (histograms: Float32Array[], labels: number[]): LbphModel => ({
  ...LBPH_DEFAULTS,
  histograms,
  labels: Int32Array.from(labels),
});

interface Tally {
  queries: number;
  recognised: number;
  nearest: number;
  falseAccepts: number;
  impostors: number;
  tiltedDistances: number[];
}

const pct = (n: number, d: number) => (d ? (100 * n) / d : 0);

export async function benchLbphRobustness(): Promise<BenchRow[]> {
  const models = path.join(process.cwd(), 'public/models');
  const faceCascade = parseHaarCascade(readFileSync(path.join(models, 'haarcascade_frontalface_alt2.xml'), 'utf8'));
  const eyeCascade: HaarCascade = parseHaarCascade(readFileSync(path.join(models, 'haarcascade_eye.xml'), 'utf8'));
  const norms: Normalisation[] = [
    { name: 'plain crop', face: (g, b) => alignedFace(g, b, null) },
    { name: 'eye-tilt aligned', face: (g, b) => alignedFace(g, b, eyeCascade) },
  ];

  // Captures: every person's photo and its captures, with the person's face in each (null: not found).
  const photos = new Map<string, GrayImage>();
  for (const [file] of PEOPLE) if (!photos.has(file)) photos.set(file, await loadGray(file));
  const queries: { person: number; capture: string; gray: GrayImage; box: Rect }[] = [];
  const captured = new Map<string, { caps: Capture[]; boxes: Rect[][] }>();
  for (const [file, g] of photos) {
    const caps = await captures(g);
    captured.set(file, { caps, boxes: caps.map((c) => detectMultiScale(faceCascade, c.gray, DETECT)) });
  }
  PEOPLE.forEach(([file, box], person) => {
    const { caps, boxes } = captured.get(file)!;
    caps.forEach((c, i) => {
      const found = faceIn(boxes[i], c.matrix, box);
      if (found) queries.push({ person, capture: c.name, gray: c.gray, box: found });
    });
  });

  // Real photos: the screenshot's thumbnails.
  const shot = await loadGray(FACEMATCH);
  const thumbs = detectMultiScale(faceCascade, shot, { ...DETECT, minNeighbors: 3 }).filter((b) => b.y > 280);
  const man = thumbs.filter((b) => MAN.includes(thumbKey(b)));
  const others = thumbs.filter((b) => !MAN.includes(thumbKey(b)) && !UNCLEAR.has(thumbKey(b)));

  const rows: BenchRow[] = [];
  const results = new Map<string, { captures: Tally; real: Tally }>();
  for (const norm of norms) {
    const hist = (g: GrayImage, b: Rect) => lbpHistogram(norm.face(g, b));
    const enrolled = PEOPLE.map(([file, box]) => hist(photos.get(file)!, box));
    const all = modelOf(
      enrolled,
      enrolled.map((_, i) => i),
    );
    const c: Tally = { queries: 0, recognised: 0, nearest: 0, falseAccepts: 0, impostors: 0, tiltedDistances: [] };
    for (const q of queries) {
      const h = hist(q.gray, q.box);
      const p = predictLbph(all, h);
      c.queries++;
      if (p.label === q.person) c.nearest++;
      if (p.label === q.person && decide(p.distance, DEFAULT_LBPH_WINDOW).known) c.recognised++;
      if (q.capture.startsWith('tilted') && p.label === q.person) c.tiltedDistances.push(p.distance);
      // The same face against everyone else: anyone named is a false accept.
      const others = enrolled.map((e, i) => [e, i] as const).filter(([, i]) => i !== q.person);
      const leaveOut = predictLbph(
        modelOf(
          others.map(([e]) => e),
          others.map(([, i]) => i),
        ),
        h,
      );
      c.impostors++;
      if (decide(leaveOut.distance, DEFAULT_LBPH_WINDOW).known) c.falseAccepts++;
    }

    const manH = man.map((b) => hist(shot, b));
    const otherH = others.map((b) => hist(shot, b));
    const r: Tally = { queries: 0, recognised: 0, nearest: 0, falseAccepts: 0, impostors: 0, tiltedDistances: [] };
    const him = PEOPLE.length;
    manH.forEach((enrol, k) => {
      const model = modelOf([...enrolled, enrol], [...enrolled.map((_, i) => i), him]);
      manH.forEach((q, j) => {
        if (j === k) return;
        const p = predictLbph(model, q);
        r.queries++;
        if (p.label === him) r.nearest++;
        if (p.label === him && decide(p.distance, DEFAULT_LBPH_WINDOW).known) r.recognised++;
      });
      for (const q of otherH) {
        const p = predictLbph(model, q);
        r.impostors++;
        if (p.label === him && decide(p.distance, DEFAULT_LBPH_WINDOW).known) r.falseAccepts++;
      }
    });
    results.set(norm.name, { captures: c, real: r });
  }

  const before = results.get('plain crop')!;
  const after = results.get('eye-tilt aligned')!;
  const row = (name: string, unit: string, a: number, b: number, goal?: string): BenchRow => ({
    name,
    unit,
    lookout: a,
    reference: b,
    referenceName: 'plain crop (before)',
    ratio: b ? a / b : 0,
    ...(goal ? { goal } : {}),
  });
  const c0 = before.captures;
  const c1 = after.captures;
  const r0 = before.real;
  const r1 = after.real;
  rows.push(
    row(
      `LBPH captures (${PEOPLE.length} people, ${c1.queries} captures): recognised`,
      '%',
      pct(c1.recognised, c1.queries),
      pct(c0.recognised, c0.queries),
      'ratio >= 1',
    ),
    {
      name: `LBPH captures: OpenCV's raw nearest neighbour (no window), plain crop`,
      unit: '%',
      lookout: pct(c0.nearest, c0.queries),
    },
    row('LBPH captures, tilted heads: median genuine distance', '', median(c1.tiltedDistances), median(c0.tiltedDistances), 'lower'),
    row(
      'LBPH captures: other people named (false accepts)',
      '%',
      pct(c1.falseAccepts, c1.impostors),
      pct(c0.falseAccepts, c0.impostors),
      'no more',
    ),
    row(
      `LBPH real photos (1 man, ${man.length} photos, ${r1.queries} pairs): recognised`,
      '%',
      pct(r1.recognised, r1.queries),
      pct(r0.recognised, r0.queries),
      'ratio >= 1',
    ),
    { name: `LBPH real photos: OpenCV's raw nearest neighbour (no window), plain crop`, unit: '%', lookout: pct(r0.nearest, r0.queries) },
    row(
      `LBPH real photos: other people named as him (${r1.impostors} pairs)`,
      '%',
      pct(r1.falseAccepts, r1.impostors),
      pct(r0.falseAccepts, r0.impostors),
      'no more',
    ),
  );
  return rows;
}
