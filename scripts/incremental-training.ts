/**
 * #27 §1 measurement: the cost of `POST /api/train` after adding one person (3 photos) to a gallery of N photos
 * (3 per person, generated from the licensed test faces with small random changes: size, brightness, JPEG
 * quality; identities repeat under other labels, which is fine for timing), with the per-image features reused
 * ("after") and without them ("before": the image store keeps no features, so every image is decoded, detected
 * and described again, as before #27). Also after deleting one person. The real service in this process
 * (createService, the `npm start` defaults unless the environment says otherwise), trainings called directly.
 *
 *   npx tsx scripts/incremental-training.ts 90 300
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { createService } from '../server/app.js';
import { loadSettings } from '../server/config/settings.js';
import { createLogger } from '../server/logger.js';
import { seededRandom } from '../test/helpers/seeded-random.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FACES = ['grace_hopper.jpg', 'astronaut.png', 'messi5.jpg'].map((f) => path.join(ROOT, 'test/fixtures/images/faces', f));

/** One generated photo of base face `i % faces`, changed a little at random. */
async function photo(faces: Buffer[], i: number, random: () => number): Promise<Buffer> {
  const base = faces[i % faces.length];
  const meta = await sharp(base).metadata();
  const scale = 0.85 + random() * 0.3;
  return sharp(base)
    .resize(Math.round(meta.width! * scale), Math.round(meta.height! * scale))
    .modulate({ brightness: 0.85 + random() * 0.3 })
    .jpeg({ quality: 85 + Math.floor(random() * 10) })
    .toBuffer();
}

async function measure(photos: number): Promise<Record<string, unknown>> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-incremental-'));
  const env = { OBJECT_DETECTION_ENABLED: 'false', LOG_LEVEL: 'warn', ...process.env, DATA_DIR: dataDir };
  const settings = loadSettings(env as Record<string, string>, ROOT);
  const service = await createService(settings, createLogger(settings.logLevel));
  const { images, faces } = service.ctx;
  const features = images.features;
  const random = seededRandom(photos);
  const sources = await Promise.all(FACES.map((f) => fs.readFile(f)));
  let n = 0;
  const addPerson = async (label: string) => {
    for (let k = 0; k < 3; k++) await images.save(label, await photo(sources, n++, random), 'jpeg');
  };
  try {
    for (let p = 0; p < photos / 3; p++) await addPerson(`person-${String(p).padStart(4, '0')}`);
    const timed = async (what: string, keep: boolean) => {
      // "before": the same service with no feature store, so training decodes every image as it did before #27.
      (images as { features: unknown }).features = keep ? features : null;
      const t0 = performance.now();
      const answer = await faces.train();
      const seconds = (performance.now() - t0) / 1000;
      console.log(`${photos} photos, ${what}: ${seconds.toFixed(1)} s, features ${JSON.stringify(answer.features)}`);
      return Number(seconds.toFixed(2));
    };
    const full = await timed('first training (features computed and written)', true);
    await addPerson('added-after');
    const addAfter = await timed('after adding 1 person, features reused', true);
    await addPerson('added-before');
    const addBefore = await timed('after adding 1 person, no features (before #27)', false);
    // The person the "before" run added had no features kept: deleting them leaves a gallery whose features all exist.
    (images as { features: unknown }).features = features;
    await images.remove('added-before');
    const deleteAfter = await timed('after deleting 1 person, features reused', true);
    return {
      photos,
      recognizers: faces.embeddingAvailability.available ? 'lbph + embedding' : 'lbph',
      full_s: full,
      add_before_s: addBefore,
      add_after_s: addAfter,
      delete_after_s: deleteAfter,
    };
  } finally {
    await service.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

const sizes = process.argv.slice(2).map(Number);
const rows = [];
for (const size of sizes.length ? sizes : [90, 300]) rows.push(await measure(size));
console.table(rows);
