/**
 * The embedding worker with EMBEDDING_DESCRIPTOR=faceres-1024, as the server starts it (a WorkerPool thread): it
 * reports its descriptor model, refuses a trained model of the other descriptor model with a reason that says to
 * train again (and then answers as untrained, never matching across models), and names faces with a model of
 * its own descriptors.
 */
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { trainEmbedding } from '../../../shared/embedding/matcher.js';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import { namesFromLabelIds } from '../../../shared/recognition/face-results.js';
import { defaultRule } from '../../../shared/recognition/rules.js';
import { WorkerPool } from '../workers/worker-pool.js';
import type { EmbeddingOps } from './embedding-protocol.js';

const root = process.cwd();
const GRACE: Rect = { x: 145, y: 99, width: 239, height: 239 };

async function photo(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(path.join(root, 'test/fixtures/images/faces', file))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

const pool = new WorkerPool<EmbeddingOps>({
  name: 'embedding',
  script: 'faces/embedding-worker',
  data: { modelDir: path.join(root, 'public/models/face-api'), descriptor: 'faceres-1024' },
  size: 1,
});
afterAll(() => pool.close());

describe('embedding worker with faceres-1024', () => {
  it('refuses a faceapi-128 model with a reason to train again, and recognizes with its own', async () => {
    const status = await pool.run('status', undefined);
    expect(status).toMatchObject({ available: true, descriptorModel: 'faceres-1024' });

    const rgb = await photo('grace_hopper.jpg');
    const rule = defaultRule('embedding', 'faceres-1024');
    const names = namesFromLabelIds({ grace: 0 });
    const old = trainEmbedding([{ label: 0, descriptor: new Float32Array(128).fill(0.05) }]);
    const refused = await pool.run('setModel', { model: old, names });
    expect(refused.installed).toBe(false);
    expect(refused.reason).toMatch(/made with faceapi-128 descriptors, but this recognizer computes faceres-1024.*train again/);
    const untrained = await pool.run('recognize', { rgb, boxes: [GRACE], rule });
    expect(untrained.trained).toBe(false);
    expect(untrained.faces[0].label).toBe('unknown');

    const [descriptor] = await pool.run('describe', { rgb, boxes: [GRACE] });
    expect(descriptor).toHaveLength(1024);
    const own = await pool.run('setModel', { model: trainEmbedding([{ label: 0, descriptor }], 1024), names });
    expect(own).toEqual({ installed: true });
    const named = await pool.run('recognize', { rgb, boxes: [GRACE], rule });
    expect(named.trained).toBe(true);
    expect(named.faces[0].label).toBe('grace');
  }, 120_000);

  it("#36 1: describes faces for grouping with face-api's 128-d net, the same values a faceapi-128 worker gives", async () => {
    const rgb = await photo('grace_hopper.jpg');
    const [forGrouping] = (await pool.run('describeForGrouping', { rgb, boxes: [GRACE] }))!;
    expect(forGrouping).toHaveLength(128);
    const faceapi = new WorkerPool<EmbeddingOps>({
      name: 'embedding',
      script: 'faces/embedding-worker',
      data: { modelDir: path.join(root, 'public/models/face-api') },
      size: 1,
    });
    try {
      const [own] = await faceapi.run('describe', { rgb, boxes: [GRACE] });
      expect(Array.from(forGrouping)).toEqual(Array.from(own));
      // A faceapi-128 worker's own descriptors are the grouping ones: it computes nothing more.
      expect(await faceapi.run('describeForGrouping', { rgb, boxes: [GRACE] })).toBeNull();
    } finally {
      await faceapi.close();
    }
  }, 120_000);
});
