/**
 * The one-pass embedding ranking (#27 section 3) on real face-api descriptors: every face the product's Haar
 * cascade finds in Human's face-match screenshot (many thumbnails of one social circle, so real near neighbours and
 * one man in 19 photos) and the group photos. Galleries of those descriptors, grouped into people in several ways,
 * must rank every face exactly as the ranking before #27 did (bench/ranking-before.ts): same people, same order,
 * same distances to the bit. The LBPH one is checked on the LBPH fixtures' real crops in shared/lbph/lbph.test.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { rankEmbeddingBefore } from '../../bench/ranking-before.js';
import { NodeEmbeddingEngine } from '../../server/engines/faces/embedding-node.js';
import { type EmbeddingModel, rankEmbedding } from '../../shared/embedding/matcher.js';
import { rgbToGray } from '../../shared/image/ops.js';
import type { RgbImage } from '../../shared/image/types.js';
import { detectMultiScale, parseHaarCascade } from '../../shared/vision/haar-cascade.js';
import { seededRandom } from '../helpers/seeded-random.js';

const root = process.cwd();
const FACES = path.join(root, 'test/fixtures/images/faces');
let descriptors: Float32Array[] = [];

async function photo(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(path.join(FACES, file)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

beforeAll(async () => {
  const engine = new NodeEmbeddingEngine({ modelDir: path.join(root, 'public/models/face-api') });
  const status = await engine.load();
  expect(status.available, status.available ? '' : status.reason).toBe(true);
  const cascade = parseHaarCascade(readFileSync(path.join(root, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
  for (const file of ['human-facematch.jpg', 'sample1.jpg', 'sample5.jpg', 'grace_hopper.jpg', 'astronaut.png']) {
    const rgb = await photo(file);
    const boxes = detectMultiScale(cascade, rgbToGray(rgb), { scaleFactor: 1.1, minNeighbors: 5, minSize: { width: 30, height: 30 } });
    const found = await engine.describeFaces(rgb, boxes);
    for (const d of found) if (d) descriptors.push(Float32Array.from(d));
  }
  descriptors = descriptors.filter((d) => d.length === 128);
}, 180_000);

describe('rankEmbedding on real face-api descriptors', () => {
  it('ranks every face as before #27, bit for bit, in galleries grouped several ways', () => {
    expect(descriptors.length).toBeGreaterThan(64);
    const n = descriptors.length;
    const random = seededRandom(2027);
    let compared = 0;
    for (const per of [1, 2, 3]) {
      // Each real face a sample; `per` consecutive faces (neighbours in the screenshot) make one person.
      const model: EmbeddingModel = { dim: 128, descriptors: new Float32Array(n * 128), labels: new Int32Array(n) };
      descriptors.forEach((d, i) => {
        model.descriptors.set(d, i * 128);
        model.labels[i] = Math.floor(i / per) * 3 + per;
      });
      for (let i = 0; i < n; i++) {
        // The face itself (a copy of a training image, distance 0) and the face a little changed, as a new capture.
        const moved = Array.from(descriptors[i], (v) => v + (random() * 2 - 1) * 0.01);
        for (const query of [descriptors[i], moved]) {
          for (const k of [1, 3, 5]) {
            expect(rankEmbedding(model, query, k)).toEqual(rankEmbeddingBefore(model, query, k));
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(3 * descriptors.length * 2 * 3);
  });
});
