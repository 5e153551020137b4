/**
 * The two descriptor models of the embedding recognizer side by side (`npx tsx bench/descriptor-models.ts`):
 * on the 19 photos of one man in Human's face-match screenshot (identity-sets.ts MAN) against every other
 * thumbnail there as strangers, the genuine (man-man) and impostor (man-stranger) distance distributions, the
 * equal error rate, and the time per face (landmarks + descriptor, one face per call) on this machine.
 * Thumbnail 17,38 is left out of the strangers: it is the demo's query face, the man himself (both models put
 * it at genuine distances).
 *
 * Then, where test/fixtures/open-set/open-set.json is present, the same figures over its labelled faces of the
 * screenshot (several people with two or more photos): genuine = pairs of one person, impostor = pairs of two.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { DescriptorModelId } from '../shared/embedding/descriptor-models.js';
import { euclideanDistance } from '../shared/embedding/matcher.js';
import { rgbToGray } from '../shared/image/ops.js';
import type { Rect, RgbImage } from '../shared/image/types.js';
import { detectMultiScale, parseHaarCascade } from '../shared/vision/haar-cascade.js';
import { NodeEmbeddingEngine } from '../server/engines/faces/embedding-node.js';
import { FACEMATCH, MAN, UNCLEAR } from './identity-sets.js';
import { median } from './types.js';

const QUERY_FACE = '17,38';

function eer(genuine: number[], impostor: number[]): { eer: number; at: number } {
  let best = { eer: 1, at: 0 };
  for (const t of [...genuine, ...impostor].sort((a, b) => a - b)) {
    const frr = genuine.filter((d) => d > t).length / genuine.length;
    const far = impostor.filter((d) => d <= t).length / impostor.length;
    const e = Math.max(frr, far);
    if (e < best.eer) best = { eer: e, at: t };
  }
  return best;
}

const root = process.cwd();
const { data, info } = await sharp(path.join(root, 'test/fixtures/images/faces', FACEMATCH))
  .removeAlpha()
  .raw()
  .toBuffer({ resolveWithObject: true });
const rgb: RgbImage = {
  width: info.width,
  height: info.height,
  channels: 3,
  data: new Uint8Array(data.buffer, data.byteOffset, data.length),
};
const cascade = parseHaarCascade(readFileSync(path.join(root, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
const key = (b: Rect) => `${b.x},${b.y}`;
const thumbs = detectMultiScale(cascade, rgbToGray(rgb), { scaleFactor: 1.1, minNeighbors: 3, minSize: { width: 30, height: 30 } });
const man = MAN.map((k) => thumbs.find((b) => key(b) === k));
if (man.some((b) => !b)) throw new Error("not all of the man's thumbnails were found");
const strangers = thumbs.filter((b) => !MAN.includes(key(b)) && !UNCLEAR.has(key(b)) && key(b) !== QUERY_FACE);
const faces = [...(man as Rect[]), ...strangers];

const variants: [DescriptorModelId, boolean][] = [
  ['faceapi-128', false],
  ['faceres-1024', false],
  ['faceres-1024', true],
];
const engines = variants.map(
  ([descriptor, flip]) => new NodeEmbeddingEngine({ modelDir: path.join(root, 'public/models/face-api'), descriptor, flip }),
);
for (const engine of engines) {
  const status = await engine.load();
  if (!status.available) throw new Error(status.reason);
  await engine.describeFaces(rgb, faces.slice(0, 3)); // warm-up
}
// Time per face, one face per call, the engines taking turns face by face so that load on the machine hits all alike.
const times: number[][] = variants.map(() => []);
for (let round = 0; round < 2; round++) {
  for (const b of faces.slice(0, 30)) {
    for (const [k, engine] of engines.entries()) {
      const t0 = performance.now();
      await engine.describeFaces(rgb, [b]);
      times[k].push(performance.now() - t0);
    }
  }
}
for (const [k, [descriptor, flip]] of variants.entries()) {
  const ds = await engines[k].describeFaces(rgb, faces);
  const n = man.length;
  const genuine: number[] = [];
  const impostor: number[] = [];
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) genuine.push(euclideanDistance(ds[i], ds[j]));
  for (let i = 0; i < n; i++) for (let j = n; j < faces.length; j++) impostor.push(euclideanDistance(ds[i], ds[j]));
  genuine.sort((a, b) => a - b);
  impostor.sort((a, b) => a - b);
  const { eer: e, at } = eer(genuine, impostor);
  const f = (v: number) => v.toFixed(3);
  console.log(
    `${descriptor}${flip ? ' +flip' : ''}: ${n} photos of the man (${genuine.length} pairs), ${strangers.length} strangers (${impostor.length} pairs); ` +
      `genuine ${f(genuine[0])}-${f(genuine.at(-1)!)} (median ${f(median(genuine))}); impostor ${f(impostor[0])}-${f(impostor.at(-1)!)} ` +
      `(1% ${f(impostor[Math.floor(impostor.length * 0.01)])}, median ${f(median(impostor))}); impostors below the largest genuine ` +
      `${impostor.filter((d) => d <= genuine.at(-1)!).length}; EER ${(100 * e).toFixed(2)}% at ${f(at)}; ` +
      `${median(times[k]).toFixed(1)} ms per face (median of ${times[k].length}, landmarks + descriptor)`,
  );
}
const OPEN_SET = path.join(root, 'test/fixtures/open-set/open-set.json');
if (existsSync(OPEN_SET)) {
  const labelled = (JSON.parse(readFileSync(OPEN_SET, 'utf8')) as { faces: { person: string; source: string }[] }).faces
    .filter((f) => f.source.startsWith(`${FACEMATCH} `))
    .map((f) => ({ person: f.person, box: thumbs.find((b) => key(b) === f.source.slice(FACEMATCH.length + 1)) }))
    .filter((f): f is { person: string; box: Rect } => f.box !== undefined);
  const people = new Set(labelled.filter((f, _i, all) => all.filter((g) => g.person === f.person).length > 1).map((f) => f.person));
  for (const [k, [descriptor, flip]] of variants.entries()) {
    const ds = await engines[k].describeFaces(
      rgb,
      labelled.map((f) => f.box),
    );
    const genuine: number[] = [];
    const impostor: number[] = [];
    for (let i = 0; i < labelled.length; i++) {
      for (let j = i + 1; j < labelled.length; j++) {
        const d = euclideanDistance(ds[i], ds[j]);
        if (labelled[i].person === labelled[j].person) genuine.push(d);
        else if (people.has(labelled[i].person) || people.has(labelled[j].person)) impostor.push(d);
      }
    }
    genuine.sort((a, b) => a - b);
    impostor.sort((a, b) => a - b);
    const { eer: e, at } = eer(genuine, impostor);
    const f = (v: number) => v.toFixed(3);
    console.log(
      `${descriptor}${flip ? ' +flip' : ''}, open-set labels: ${people.size} people with several photos among ${labelled.length} faces; ` +
        `genuine ${genuine.length} pairs ${f(genuine[0])}-${f(genuine.at(-1)!)} (median ${f(median(genuine))}); impostor ${impostor.length} pairs ` +
        `${f(impostor[0])}-${f(impostor.at(-1)!)} (1% ${f(impostor[Math.floor(impostor.length * 0.01)])}); EER ${(100 * e).toFixed(2)}% at ${f(at)}`,
    );
  }
}
for (const engine of engines) engine.dispose();
