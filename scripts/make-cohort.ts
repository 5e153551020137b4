/**
 * Writes the background cohort the embedding recognizer's per-person limits are measured against (#34,
 * shared/recognition/cohort.ts): public/models/cohort/<descriptor model>.f32, little-endian float32 rows.
 *
 *   npx tsx scripts/make-cohort.ts
 *
 * The faces: the thumbnails of people seen once in Human's face-match screenshot (test/fixtures/images,
 * human-facematch.jpg, MIT; bench/identity-sets.ts), described by the product's own engine. Left out: the people
 * seen in several photos (the benchmarks enrol them), the unclear and maybe-same thumbnails, and every thumbnail
 * within SAME_PERSON of a face of the repository's other photos (the group photos' people and the single portraits
 * that the tests and the demo enrol): a person who is also in the cohort would hold their own limit down.
 * Re-run after changing the face-match sets or a descriptor net; record the new sha256 in public/models/MODELS.md.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { FACEMATCH, MAYBE_KNOWN, MAYBE_SAME, MULTI_PHOTO, PEOPLE, thumbKey, UNCLEAR } from '../bench/identity-sets.js';
import { NodeEmbeddingEngine } from '../server/engines/faces/embedding-node.js';
import { euclideanDistance } from '../shared/embedding/matcher.js';
import { rgbToGray } from '../shared/image/ops.js';
import type { RgbImage } from '../shared/image/types.js';
import { encodeCohort } from '../shared/recognition/cohort.js';
import type { DescriptorModel } from '../shared/recognition/rules.js';
import { detectMultiScale, parseHaarCascade } from '../shared/vision/haar-cascade.js';

const root = process.cwd();
const FACES = path.join(root, 'test/fixtures/images/faces');
/** Per descriptor model: nearer than this to a face of the other photos, a thumbnail may be that person. */
const SAME_PERSON: Record<DescriptorModel, number> = { 'faceapi-128': 0.55, 'faceres-1024': 0.85 };

async function load(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(path.join(FACES, file)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

const cascade = parseHaarCascade(readFileSync(path.join(root, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
const shot = await load(FACEMATCH);
const multi = new Set(Object.values(MULTI_PHOTO).flat());
const thumbs = detectMultiScale(cascade, rgbToGray(shot), { scaleFactor: 1.1, minNeighbors: 3, minSize: { width: 30, height: 30 } })
  .filter((b) => b.y > 280)
  .filter((b) => {
    const key = thumbKey(b);
    return !multi.has(key) && !UNCLEAR.has(key) && !MAYBE_KNOWN.has(key) && !MAYBE_SAME.has(key);
  });

for (const descriptor of ['faceapi-128', 'faceres-1024'] as const) {
  const engine = new NodeEmbeddingEngine({ modelDir: path.join(root, 'public/models/face-api'), descriptor });
  const status = await engine.load();
  if (!status.available) throw new Error(`${descriptor}: ${status.reason}`);
  const others: Float32Array[] = [];
  for (const [file, box] of PEOPLE) others.push(...(await engine.describeFaces(await load(file), [box])));
  const kept: Float32Array[] = [];
  for (const box of thumbs) {
    const [d] = await engine.describeFaces(shot, [box]);
    if (!d) continue;
    if (others.some((o) => euclideanDistance(o, d) < SAME_PERSON[descriptor])) continue;
    kept.push(d);
  }
  engine.dispose();
  const dim = kept[0].length;
  const descriptors = new Float32Array(kept.length * dim);
  for (const [i, d] of kept.entries()) descriptors.set(d, i * dim);
  const bytes = encodeCohort({ descriptorModel: descriptor, dim, descriptors });
  const dir = path.join(root, 'public/models/cohort');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${descriptor}.f32`), bytes);
  const sha = createHash('sha256').update(bytes).digest('hex');
  console.log(`${descriptor}: ${kept.length} of ${thumbs.length} thumbnails, ${bytes.length} bytes, sha256 ${sha}`);
}
