/**
 * The converted graph (shared/objects/nanodet-onnx.ts) on onnxruntime-node against the shipped tfjs graph on
 * tfjs's WASM backend, through the same shared pre- and post-processing: the same objects on every image of
 * test/fixtures/images/objects (same classes, boxes within 1 px, scores within 1e-3), and raw outputs equal to
 * float rounding.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RgbImage } from '../../../shared/image/types.js';
import {
  createNanoDetRunner,
  preprocessNanoDet,
  tfjsForward,
  type GraphModelLike,
  type NanoDetForward,
  type NanoDetRunner,
  type RawOutput,
  type TfLike,
} from '../../../shared/objects/nanodet.js';
import { nanoDetToOnnx } from '../../../shared/objects/nanodet-onnx.js';
import type { DetectedObject } from '../../../shared/objects/types.js';
import { tfjsWasm } from '../../model-server/tfjs-wasm.js';
import { NodeObjectDetector, readTfjsGraph } from './object-detector-node.js';

const root = process.cwd();
const MODEL_DIR = path.join(root, 'public/models');
const IMAGES = path.join(root, 'test/fixtures/images/objects');

async function load(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(file).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

const text = (found: DetectedObject[]) => found.map((o) => `${o.class_name} ${o.confidence} [${o.x},${o.y},${o.w},${o.h}]`).join('; ');

describe('NanoDet converted to ONNX (onnxruntime-node) vs the shipped tfjs graph (tfjs WASM)', () => {
  const onnx = new NodeObjectDetector({ modelDir: MODEL_DIR });
  let tfjs: NanoDetRunner;
  let tfjsRaw: NanoDetForward;
  let files: string[];

  beforeAll(async () => {
    const status = await onnx.load();
    expect(status, status.reason).toMatchObject({ available: true, runtime: 'onnxruntime-node' });
    const tf = await tfjsWasm();
    const artifacts = await readTfjsGraph(MODEL_DIR);
    const bytes = artifacts.weightData as Uint8Array;
    const model = await tf.loadGraphModel({
      load: async () => ({
        modelTopology: artifacts.modelTopology as object,
        signature: artifacts.signature as object | undefined,
        weightSpecs: artifacts.weightSpecs as never,
        weightData: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
      }),
    });
    tfjsRaw = tfjsForward(tf as unknown as TfLike, model as unknown as GraphModelLike);
    tfjs = createNanoDetRunner(tfjsRaw);
    files = (await readdir(IMAGES)).filter((f) => /\.(png|jpe?g)$/i.test(f)).sort();
    expect(files.length).toBeGreaterThanOrEqual(6);
  }, 120_000);
  afterAll(() => onnx.dispose());

  it('converts every op: one input, six outputs, no Transpose left but the head outputs', async () => {
    const converted = nanoDetToOnnx(await readTfjsGraph(MODEL_DIR));
    expect(converted.input).toEqual({ name: 'input_1', shape: [1, 3, 416, 416] });
    expect(converted.outputs.map((o) => o.shape)).toEqual([
      [1, 2704, 80],
      [1, 676, 80],
      [1, 169, 80],
      [1, 2704, 44],
      [1, 676, 44],
      [1, 169, 44],
    ]);
    expect(converted.stats.transposes).toBe(6);
    // Deterministic: the same files give the same bytes.
    const again = nanoDetToOnnx(await readTfjsGraph(MODEL_DIR)).bytes;
    expect(Buffer.compare(Buffer.from(again), Buffer.from(converted.bytes))).toBe(0); // not toEqual: 15 MB, byte by byte
  });

  it('finds the same objects on every test image, at the default threshold and at 0.2', async () => {
    for (const file of files) {
      const img = await load(path.join(IMAGES, file));
      for (const confidence of [0.4, 0.2]) {
        const want = await tfjs.detect(img, { confidence });
        const got = await onnx.detect(img, { confidence });
        const where = `${file} at ${confidence}: onnx ${text(got)} | tfjs ${text(want)}`;
        expect(
          got.map((o) => o.class_name),
          where,
        ).toEqual(want.map((o) => o.class_name));
        got.forEach((o, i) => {
          for (const k of ['x', 'y', 'w', 'h'] as const) expect(Math.abs(o[k] - want[i][k]), `${where}: ${k}`).toBeLessThanOrEqual(1);
          expect(Math.abs(o.confidence - want[i].confidence), where).toBeLessThanOrEqual(1e-3);
        });
        if (confidence === 0.4) expect(got.length, file).toBeGreaterThan(0);
      }
    }
  }, 120_000);

  it('gives the raw outputs of the tfjs graph to float rounding', async () => {
    const converted = nanoDetToOnnx(await readTfjsGraph(MODEL_DIR));
    const { InferenceSession, Tensor } = await import('onnxruntime-node');
    const session = await InferenceSession.create(converted.bytes, { intraOpNumThreads: 1 });
    try {
      const input = preprocessNanoDet(await load(path.join(IMAGES, files[0]))).data;
      const ours = await session.run({ input_1: new Tensor('float32', input, [1, 3, 416, 416]) });
      const theirs = await tfjsRaw(input, [1, 3, 416, 416]);
      const key = (o: RawOutput) => o.shape.join('x');
      const byShape = new Map(theirs.map((o) => [key(o), o.data]));
      for (const out of Object.values(ours)) {
        const want = byShape.get(out.dims.join('x'))!;
        const got = out.data as Float32Array;
        expect(got.length).toBe(want.length);
        let worst = 0;
        for (let k = 0; k < got.length; k++) worst = Math.max(worst, Math.abs(got[k] - want[k]));
        expect(worst, `output ${out.dims.join('x')}`).toBeLessThan(1e-4); // 1.5e-5 seen: float rounding order
      }
    } finally {
      await session.release();
    }
  });

  it('refuses an op it does not know, naming it', async () => {
    const artifacts = await readTfjsGraph(MODEL_DIR);
    const topology = artifacts.modelTopology as { node: { name: string; op: string }[] };
    const nodes = topology.node.map((n) => (n.op === 'Sigmoid' ? { ...n, op: 'Softsign' } : n));
    expect(() => nanoDetToOnnx({ ...artifacts, modelTopology: { ...topology, node: nodes } })).toThrow(/Softsign/);
  });
});
