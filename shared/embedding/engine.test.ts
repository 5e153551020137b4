import { describe, expect, it } from 'vitest';
import { createEmbeddingEngine, type FaceApiModule, type TfTensorLike } from './engine.js';

/** A stand-in for face-api: landmarks at fixed relative spots of each crop, descriptors from the crop's size. */
function fakeFaceApi() {
  const live = new Set<object>();
  let env: unknown = null;
  const tensor = (shape: number[]): TfTensorLike => {
    const t = { shape, dispose: () => live.delete(t) };
    live.add(t);
    return t;
  };
  const manifest = JSON.stringify([{ paths: ['w.bin'], weights: [{ name: 'w', shape: [1], dtype: 'float32' }] }]);
  const faceapi: FaceApiModule = {
    tf: {
      tensor3d: (_v, shape) => tensor(shape),
      io: { decodeWeights: () => ({ w: tensor([1]) }) },
    },
    FaceLandmark68Net: class {
      loadFromWeightMap() {}
      dispose() {}
      async detectLandmarks(input: TfTensorLike[]) {
        return input.map((t) => {
          const [h, w] = t.shape;
          // eyes at 30% / 70% across, 40% down; mouth 75% down
          const positions = Array.from({ length: 68 }, (_, i) =>
            i >= 36 && i < 42 ? { x: 0.3 * w, y: 0.4 * h } : i >= 42 && i < 48 ? { x: 0.7 * w, y: 0.4 * h } : { x: 0.5 * w, y: 0.75 * h },
          );
          return { positions };
        });
      }
    },
    FaceRecognitionNet: class {
      loadFromWeightMap() {}
      dispose() {}
      async computeFaceDescriptor(input: TfTensorLike[]) {
        return input.map((t) => new Float32Array(128).fill(t.shape[0] * 1000 + t.shape[1]));
      }
    },
    env: {
      getEnv: () => {
        if (!env) throw new Error('getEnv - environment is not defined');
        return env;
      },
      setEnv: (e: never) => {
        env = e;
      },
    },
  };
  const reads: string[] = [];
  const readModelFile = async (name: string) => {
    reads.push(name);
    return name.endsWith('.json') ? new TextEncoder().encode(manifest) : new Uint8Array(4);
  };
  return { faceapi, readModelFile, live, reads, env: () => env };
}

describe('createEmbeddingEngine', () => {
  const image = { width: 200, height: 100, channels: 3 as const, data: new Uint8Array(200 * 100 * 3) };

  it('loads both nets once, crops each box, aligns from the landmarks, and frees every tensor', async () => {
    const fake = fakeFaceApi();
    const engine = createEmbeddingEngine(fake);
    expect(engine.loaded).toBe(false);
    await Promise.all([engine.load(), engine.load()]);
    expect(engine.loaded).toBe(true);
    expect(fake.reads.sort()).toEqual([
      'face_landmark_68_model-weights_manifest.json',
      'face_recognition_model-weights_manifest.json',
      'w.bin',
      'w.bin',
    ]);
    const before = fake.live.size; // the weights
    const faces = await engine.describe(image, [
      { x: 10, y: 10, width: 40, height: 40 },
      { x: 180, y: 80, width: 40, height: 40 }, // clipped to 20 x 20
    ]);
    expect(fake.live.size).toBe(before);
    expect(faces).toHaveLength(2);
    expect(faces[0].landmarks[2 * 36]).toBeCloseTo(22);
    // Eye-mouth distance sqrt(8^2 + 14^2) = 16.12 -> side 35; centre (30, 30.67) -> corner (12.5, 15.6).
    expect(faces[0].alignedBox).toEqual({ x: 12, y: 15, width: 35, height: 35 });
    expect(faces[0].descriptor[0]).toBe(35 * 1000 + 35);
    expect(faces[1].box).toEqual({ x: 180, y: 80, width: 40, height: 40 });
    expect(faces[1].alignedBox.x + faces[1].alignedBox.width).toBeLessThanOrEqual(200);
    // face-api had no environment (as in a Web Worker): the engine gave it inert stand-ins.
    expect(fake.env()).toMatchObject({ Canvas: expect.any(Function) });
  });

  it('rejects a box outside the image clearly', async () => {
    const engine = createEmbeddingEngine(fakeFaceApi());
    await expect(engine.describe(image, [{ x: 300, y: 0, width: 10, height: 10 }])).rejects.toThrow(/empty or outside the 200x100 image/);
  });

  it('reports a failed load, and may retry it', async () => {
    const fake = fakeFaceApi();
    let fail = true;
    const engine = createEmbeddingEngine({
      faceapi: fake.faceapi,
      readModelFile: (n) => (fail ? Promise.reject(new Error('offline')) : fake.readModelFile(n)),
    });
    await expect(engine.load()).rejects.toThrow(/cannot read .*offline/);
    fail = false;
    await engine.load();
    expect(engine.loaded).toBe(true);
  });
});
