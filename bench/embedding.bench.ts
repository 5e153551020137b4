/**
 * Embedding recognition per face (68 landmarks + aligned crop + 128-d descriptor + nearest-neighbour match),
 * Lookout's engine vs face-api's own `withFaceLandmarks().withFaceDescriptor()` + `FaceMatcher` on the same
 * face box, both on the tfjs WASM backend in this Node process, alternating run by run. Both start from raw
 * RGB pixels: the reference's time includes making its image tensor, as a face-api user in Node must.
 * Run from the repository root (test images come from test/fixtures/images).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import sharp from 'sharp';
import { predictEmbedding, trainEmbedding } from '../shared/embedding/matcher.js';
import { rgbToGray } from '../shared/image/ops.js';
import type { Rect, RgbImage } from '../shared/image/types.js';
import { detectMultiScale, parseHaarCascade } from '../shared/vision/haar-cascade.js';
import { NodeEmbeddingEngine } from '../server/engines/faces/embedding-node.js';
import { exactFaceApiDetection } from './face-api-reference.js';
import { median, type BenchRow } from './types.js';

const WARMUP = 5;
const RUNS = 25;

async function loadRgb(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

export async function benchEmbedding(): Promise<BenchRow[]> {
  const root = process.cwd();
  const faces = path.resolve(root, 'test/fixtures/images/faces');
  const modelDir = path.join(root, 'public/models/face-api');
  const engine = new NodeEmbeddingEngine({ modelDir });
  const status = await engine.load();
  if (!status.available) {
    return [{ name: `embedding recognition per face: unavailable (${status.reason})`, unit: 'ms', lookout: NaN }];
  }

  const cascade = parseHaarCascade(readFileSync(path.join(root, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
  const haar = (rgb: RgbImage): Rect[] =>
    detectMultiScale(cascade, rgbToGray(rgb), { scaleFactor: 1.1, minNeighbors: 5, minSize: { width: 30, height: 30 } });

  // Enrolled faces for the match step: the three single-face photos.
  const enrolled = [];
  for (const [label, file] of ['grace_hopper.jpg', 'astronaut.png', 'messi5.jpg'].entries()) {
    const rgb = await loadRgb(path.join(faces, file));
    const [d] = await engine.describeFaces(rgb, haar(rgb).slice(0, 1));
    enrolled.push({ label, descriptor: d });
  }
  const model = trainEmbedding(enrolled);

  // face-api's own pipeline, on the same tfjs instance and backend the engine set up in this thread.
  const faceapi = createRequire(import.meta.url)('@vladmandic/face-api/dist/face-api.node-wasm.js');
  await faceapi.nets.faceLandmark68Net.loadFromDisk(modelDir);
  await faceapi.nets.faceRecognitionNet.loadFromDisk(modelDir);
  const matcher = new faceapi.FaceMatcher(enrolled.map((e) => new faceapi.LabeledFaceDescriptors(String(e.label), [e.descriptor])));
  const detection = (box: Rect, width: number, height: number) => ({ detection: exactFaceApiDetection(faceapi, box, width, height) });

  const rows: BenchRow[] = [];
  const cases: [string, string, number][] = [
    ['1 face (grace_hopper 512x600)', 'grace_hopper.jpg', 1],
    ['5 faces batched (sample5 1920x1280)', 'sample5.jpg', 5],
  ];
  for (const [label, file, count] of cases) {
    const rgb = await loadRgb(path.join(faces, file));
    const boxes = haar(rgb)
      .sort((a, b) => b.width - a.width)
      .slice(0, count);
    const ours = async () => {
      const ds = await engine.describeFaces(rgb, boxes);
      return ds.map((d) => predictEmbedding(model, d).distance);
    };
    const reference = async () => {
      const img = faceapi.tf.tensor3d(rgb.data, [rgb.height, rgb.width, 3], 'int32');
      try {
        const parents = Promise.resolve(boxes.map((b) => detection(b, rgb.width, rgb.height)));
        const results = await new faceapi.DetectAllFaceLandmarksTask(parents, img, false).withFaceDescriptors();
        return results.map((r: { descriptor: Float32Array }) => matcher.findBestMatch(r.descriptor).distance as number);
      } finally {
        img.dispose();
      }
    };
    for (let i = 0; i < WARMUP; i++) {
      await ours();
      await reference();
    }
    const tOurs: number[] = [];
    const tRef: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      let t0 = performance.now();
      await ours();
      tOurs.push((performance.now() - t0) / boxes.length);
      t0 = performance.now();
      await reference();
      tRef.push((performance.now() - t0) / boxes.length);
    }
    const lookout = median(tOurs);
    const ref = median(tRef);
    rows.push({
      name: `embedding recognition per face, ${label}: landmarks + align + descriptor + match, tfjs ${status.backend}`,
      unit: 'ms',
      lookout,
      reference: ref,
      referenceName: `face-api ${status.versions?.faceapi} withFaceLandmarks().withFaceDescriptor() + FaceMatcher`,
      ratio: lookout / ref,
    });
  }
  engine.dispose();
  return rows;
}
