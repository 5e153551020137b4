/**
 * Candidates for the embedding recognizer's degraded-query gap (#34), measured on the open-set benchmark's own
 * protocol (open-set.bench.ts `openSetReport`: same faces, same seeded camera views, rules fitted on one half of
 * the people and reported on the other), one candidate per run:
 *
 *   npx tsx bench/open-set-candidates.ts <candidate>
 *
 *   baseline        faceapi-128 as shipped (reproduces the bench's faceapi-128 rows)
 *   flip            faceapi-128, the descriptor of the face and of its mirror image averaged (enrolled and queries)
 *   upscale         faceapi-128 on the picture enlarged (Lanczos) until the face is 112 px wide, before the nets
 *   side-light      faceapi-128 on degraded views whose left-right light gradient across the face box was divided out
 *   faceplugin      the 512-d `fr_feature.onnx` of npm `faceplugin-face-recognition-js` 0.0.1 (MIT), on the usual
 *                   five-point 112 px crop from face-api's landmarks, BGR (x - 127) / 128 (RGB tried: worse)
 *   faceplugin-flip the same, face and mirror image averaged
 *   fused           faceapi-128 (made unit length) and faceplugin concatenated, equal weight
 *
 * faceplugin's model is not shipped and not a dependency: FACEPLUGIN_MODEL names the file, from the package
 * unpacked by hand (`npm pack faceplugin-face-recognition-js@0.0.1`, `package/model/fr_feature.onnx`). A
 * candidate that is not faceapi-128 is reported in the report's `faceres-1024` section (its limits are fitted there
 * like any other's; its "defaults" row means nothing). Printed: the held-out rows for degraded and clean queries,
 * 1:1 equal error rates, and the share of genuine 1:1 pairs accepted at 0.5 % false accepts by degradation (face
 * size, blur, side light), which says where the misses are. Figures: bench/RESULTS.md, "#34: candidates".
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { NodeEmbeddingEngine } from '../server/engines/faces/embedding-node.js';
import { fitSimilarity, fivePoints, referencePoints, warpSimilarity } from '../shared/embedding/five-point.js';
import { euclideanDistance } from '../shared/embedding/matcher.js';
import { rgbToGray } from '../shared/image/ops.js';
import type { Rect, RgbImage } from '../shared/image/types.js';
import type { DescriptorModel } from '../shared/recognition/rules.js';
import { parseHaarCascade } from '../shared/vision/haar-cascade.js';
import { degradeFace, type Photo } from './camera-degrade.js';
import { unit } from './human-models.js';
import { builtInFaces, openSetReport } from './open-set.bench.js';
import { computeViews, DEFAULT_VIEWS, degradationsOf, VIEW_SEED } from './open-set-features.js';

const CANDIDATES = ['baseline', 'flip', 'upscale', 'side-light', 'faceplugin', 'faceplugin-flip', 'fused'] as const;
type Candidate = (typeof CANDIDATES)[number];
interface Seen {
  photo: Photo;
  box: Rect;
}

function mirrored(p: Seen): Seen {
  const { width, height, data } = p.photo.rgb;
  const out = new Uint8Array(data.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const from = (y * width + (width - 1 - x)) * 3;
      const to = (y * width + x) * 3;
      out[to] = data[from];
      out[to + 1] = data[from + 1];
      out[to + 2] = data[from + 2];
    }
  }
  const rgb: RgbImage = { width, height, channels: 3, data: out };
  return { photo: { rgb, gray: rgbToGray(rgb) }, box: { ...p.box, x: width - p.box.x - p.box.width } };
}

async function upscaled(p: Seen, facePx: number): Promise<Seen> {
  if (p.box.width >= facePx) return p;
  const s = facePx / p.box.width;
  const { width, height, data } = p.photo.rgb;
  const w = Math.round(width * s);
  const h = Math.round(height * s);
  const raw = await sharp(Buffer.from(data), { raw: { width, height, channels: 3 } })
    .resize(w, h, { kernel: 'lanczos3' })
    .raw()
    .toBuffer();
  const rgb: RgbImage = { width: w, height: h, channels: 3, data: new Uint8Array(raw) };
  const b = p.box;
  return {
    photo: { rgb, gray: rgbToGray(rgb) },
    box: { x: Math.round(b.x * s), y: Math.round(b.y * s), width: Math.round(b.width * s), height: Math.round(b.height * s) },
  };
}

/** The light's left-right gradient over the face box (a line fitted to its columns' mean gray) divided out. */
function evenedLight(p: Seen): Seen {
  const { rgb, gray } = p.photo;
  const b = p.box;
  const xs: number[] = [];
  const means: number[] = [];
  for (let x = Math.max(0, b.x); x < Math.min(rgb.width, b.x + b.width); x++) {
    let sum = 0;
    let n = 0;
    for (let y = Math.max(0, b.y); y < Math.min(rgb.height, b.y + b.height); y++, n++) sum += gray.data[y * gray.width + x];
    xs.push(x);
    means.push(sum / n);
  }
  const mx = xs.reduce((a, c) => a + c, 0) / xs.length;
  const my = means.reduce((a, c) => a + c, 0) / means.length;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i] - mx) * (means[i] - my);
    sxx += (xs[i] - mx) ** 2;
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  const out = new Uint8Array(rgb.data.length);
  for (let x = 0; x < rgb.width; x++) {
    const gain = my / Math.max(8, my + slope * (x - mx));
    for (let y = 0; y < rgb.height; y++) {
      for (let c = 0; c < 3; c++) {
        const i = (y * rgb.width + x) * 3 + c;
        out[i] = Math.min(255, Math.round(rgb.data[i] * gain));
      }
    }
  }
  const evened: RgbImage = { ...rgb, data: out };
  return { photo: { rgb: evened, gray: rgbToGray(evened) }, box: b };
}

function meanOf(a: Float32Array, b: Float32Array): Float32Array {
  return Float32Array.from(a, (v, i) => (v + b[i]) / 2);
}

async function main(): Promise<void> {
  const candidate = (process.argv[2] ?? 'baseline') as Candidate;
  if (!CANDIDATES.includes(candidate)) throw new Error(`candidate: one of ${CANDIDATES.join(', ')}`);
  const repoRoot = path.resolve(import.meta.dirname, '..');
  const models = path.join(repoRoot, 'public/models');
  const cascade = parseHaarCascade(readFileSync(path.join(models, 'haarcascade_frontalface_alt2.xml'), 'utf8'));
  const eyeCascade = parseHaarCascade(readFileSync(path.join(models, 'haarcascade_eye.xml'), 'utf8'));
  const faces = await builtInFaces(repoRoot, cascade);
  const views = DEFAULT_VIEWS;
  const set = await computeViews(repoRoot, faces, eyeCascade, { views, seed: VIEW_SEED, descriptors: ['faceapi-128'] });
  set.unavailable['faceres-1024'] = 'not measured in this run';
  // The same pictures computeViews described, in the same order (view 0 clean, then the seeded degradations).
  const pictures: Seen[] = [];
  for (let i = 0; i < faces.length; i++) {
    const list = degradationsOf(i, views, VIEW_SEED);
    for (let v = 0; v < list.length; v++) {
      pictures.push(v === 0 ? { photo: faces[i].photo, box: faces[i].box } : await degradeFace(faces[i].photo, faces[i].box, list[v]));
    }
  }
  const engine = new NodeEmbeddingEngine({ modelDir: path.join(models, 'face-api'), descriptor: 'faceapi-128' });
  await engine.load();
  const faceapi = async (p: Seen) => (await engine.describeFaces(p.photo.rgb, [p.box]))[0];

  let slot: DescriptorModel = 'faceapi-128';
  if (candidate === 'flip' || candidate === 'upscale' || candidate === 'side-light') {
    for (let k = 0; k < pictures.length; k++) {
      const p = pictures[k];
      let d: Float32Array;
      if (candidate === 'flip') d = meanOf(await faceapi(p), await faceapi(mirrored(p)));
      else if (candidate === 'upscale') d = await faceapi(await upscaled(p, 112));
      else d = await faceapi(set.views[k].view > 0 ? evenedLight(p) : p);
      set.views[k].descriptors['faceapi-128'] = d;
    }
  } else if (candidate !== 'baseline') {
    const file = process.env.FACEPLUGIN_MODEL;
    if (!file) throw new Error('FACEPLUGIN_MODEL: the path of fr_feature.onnx from faceplugin-face-recognition-js 0.0.1');
    const ort = await import('onnxruntime-node');
    const session = await ort.InferenceSession.create(file);
    const S = 112;
    const describe = async (p: Seen, mirror: boolean): Promise<Float32Array> => {
      const [f] = await engine.describeFacesDetailed(p.photo.rgb, [p.box]);
      const crop = warpSimilarity(p.photo.rgb, fitSimilarity(fivePoints(f.landmarks), referencePoints(S)), S, mirror);
      const input = new Float32Array(3 * S * S);
      // Planar BGR, (x - 127) / 128.
      for (let i = 0; i < S * S; i++) for (let c = 0; c < 3; c++) input[c * S * S + i] = (crop[i * 3 + (2 - c)] - 127) / 128;
      const out = await session.run({ [session.inputNames[0]]: new ort.Tensor('float32', input, [1, 3, S, S]) });
      return unit(out[session.outputNames[0]].data as Float32Array);
    };
    slot = 'faceres-1024';
    delete set.unavailable['faceres-1024'];
    const times: number[] = [];
    for (let k = 0; k < pictures.length; k++) {
      const t0 = performance.now();
      let d = await describe(pictures[k], false);
      if (candidate === 'faceplugin-flip') d = unit(meanOf(d, await describe(pictures[k], true)));
      times.push(performance.now() - t0);
      if (candidate === 'fused') {
        const a = unit(set.views[k].descriptors['faceapi-128']!);
        const both = new Float32Array(a.length + d.length);
        both.set(a);
        both.set(d, a.length);
        d = Float32Array.from(both, (v) => v / Math.SQRT2);
      }
      // The report's faceres-1024 section looks at distances up to that model's nearMax (1.0), and faceplugin's
      // unit vectors are told apart near 1.2: shrunk to 3/4 length, every distance scales alike and fits.
      else d = Float32Array.from(d, (v) => v * 0.75);
      set.views[k].descriptors['faceres-1024'] = d;
    }
    times.sort((a, b) => a - b);
    console.log(`${candidate}: ${times[times.length >> 1].toFixed(1)} ms per face (landmarks, crop and net; median)`);
  }

  const report = openSetReport(faces, set, views, Number(process.env.OPEN_SET_SEEDS ?? 5));
  const section = report.lines.slice(report.lines.indexOf(`### ${slot}`));
  console.log(`\n${candidate} (in the report's ${slot} section), held out, pooled galleries:`);
  console.log(section.find((l) => l.startsWith('| query'))); // the table's header
  for (const line of section) {
    if (/^\| (degraded|clean) \| pooled \|.*held out/.test(line) || /^1:1 /.test(line) || /fitted on everyone/.test(line))
      console.log(line);
  }

  // Where the misses are: genuine pairs (a degraded view, another clean photo of the same person) accepted at the
  // distance that lets 0.5 % of impostor pairs (a degraded view, a clean photo of someone else) in.
  const clean = set.views.filter((v) => v.view === 0 && v.descriptors[slot]);
  const genuine: { d: number; degradation: string }[] = [];
  const impostor: number[] = [];
  for (const v of set.views) {
    const q = v.descriptors[slot];
    if (v.view === 0 || !q) continue;
    for (const c of clean) {
      if (c.face === v.face) continue;
      const d = euclideanDistance(q, c.descriptors[slot]!);
      if (faces[c.face].person === faces[v.face].person) genuine.push({ d, degradation: v.degradation });
      else impostor.push(d);
    }
  }
  impostor.sort((a, b) => a - b);
  const at = impostor[Math.floor(impostor.length * 0.005)];
  const bins = new Map<string, [number, number]>();
  for (const g of genuine) {
    const px = Number(/(\d+) px/.exec(g.degradation)?.[1] ?? 0);
    const blur = Number(/blur ([\d.]+)/.exec(g.degradation)?.[1] ?? 0);
    const keys = [
      'all',
      `face ${Math.floor(px / 10) * 10}-${Math.floor(px / 10) * 10 + 9} px`,
      blur >= 0.6 ? 'blur >= 0.6 px' : 'blur < 0.6 px',
      /side light/.test(g.degradation) ? 'side light' : 'even light',
    ];
    for (const key of keys) {
      const b = bins.get(key) ?? [0, 0];
      b[0] += g.d < at ? 1 : 0;
      b[1]++;
      bins.set(key, b);
    }
  }
  console.log(
    `\n1:1 genuine pairs accepted at ${at.toFixed(3)} (0.5% of ${impostor.length} impostor pairs accepted): ` +
      [...bins]
        .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
        .map(([k, [a, n]]) => `${k} ${((100 * a) / n).toFixed(0)}% of ${n}`)
        .join('; '),
  );
  engine.dispose();
}

await main();
