/**
 * The in-browser engines against the real server: the same shared/ code in a Web Worker must give the same
 * answers as the server for the same image, on every tfjs backend, without calling the server's engines.
 *
 * How results are compared:
 * - Faces (cascade + LBPH): exactly equal, boxes, labels, confidence and distance. The pixels are identical
 *   (the page decodes the file as the server does, and the test checks that first: PNG always; JPEG too here,
 *   as Chromium and sharp both decode with libjpeg-turbo; a JPEG is also sent as the server's own decoded
 *   pixels, which removes the decoder from the comparison altogether) and the code is the same.
 * - Faces (embedding): boxes and labels exactly equal; the distance within 0.02 (the descriptor net runs on a
 *   different tfjs backend than the server's WASM, so floats round differently).
 * - Objects: the same class names; boxes within 3 px and scores within 0.02 (both run the same ONNX conversion
 *   of the NanoDet graph, onnxruntime-node and onnxruntime-web: they agree exactly today, the margins allow
 *   another backend's float rounding).
 * - YOLO (no real weights exist here): a tiny ONNX model whose boxes move with the mean of its input, run by
 *   onnxruntime-web in the page and by the server's onnxruntime-node host: the same objects.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, expect, test, type Page } from './helpers/fixtures.js';
import sharp from 'sharp';
import { YoloOnnxDetector } from '../server/engines/objects/yolo-onnx-node.js';
import type { ObjectDetectionResponse, RecognizeResponse } from '../shared/api/index.js';
import { buildConstantOutputModel, yoloOutput, type YoloCandidate } from '../test/helpers/onnx-builder.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, fakeCameraArgs } from './helpers/browser.js';
import {
  boxesAndLabels,
  detectObjectsOnServer,
  openEnginePage,
  recognizeOnServer,
  runBench,
  serveTrainedModelsIfMissing,
  setServerRecognizer,
  testImage,
  trainingCaptures,
  trainOnServer,
  waitForEmbedding,
  watchEngineApiCalls,
  type Backend,
  type EngineObjects,
} from './helpers/engine-page.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { screenshot, startLookout, type Lookout } from './helpers/lookout.js';

const y4m = await makeFakeCamera('faces/astronaut.png');
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(y4m) } });
test.describe.configure({ mode: 'serial' });

/** Trained people: each photo's training captures are variants of it, never the photo itself. */
const PEOPLE = { eileen: 'faces/astronaut.png', grace: 'faces/grace_hopper.jpg' };
const FACE_PHOTOS = ['faces/astronaut.png', 'faces/grace_hopper.jpg'];
const OBJECT_PHOTOS = ['objects/chelsea.png', 'objects/motorcycle_left.png'];

let lookout: Lookout;
const server = {
  lbph: new Map<string, RecognizeResponse>(),
  embedding: new Map<string, RecognizeResponse>(),
  objects: new Map<string, ObjectDetectionResponse>(),
};

// biome-ignore lint/correctness/noEmptyPattern: Playwright requires the fixtures argument to be an object pattern, and this hook needs none
test.beforeAll(async ({}, testInfo) => {
  testInfo.setTimeout(180_000);
  lookout = await startLookout();
  await waitForEmbedding(lookout);
  const trained = await trainOnServer(lookout, PEOPLE);
  expect(trained.recognizers_trained).toEqual(['lbph', 'embedding']);
  for (const photo of FACE_PHOTOS) server.lbph.set(photo, await recognizeOnServer(lookout, photo));
  await setServerRecognizer(lookout, 'embedding');
  for (const photo of FACE_PHOTOS) server.embedding.set(photo, await recognizeOnServer(lookout, photo));
  await setServerRecognizer(lookout, 'lbph');
  for (const photo of OBJECT_PHOTOS) server.objects.set(photo, await detectObjectsOnServer(lookout, photo));
  // The photos must be worth comparing: the server finds and names both people, and finds objects.
  expect(server.lbph.get('faces/astronaut.png')!.faces.map((f) => f.label)).toEqual(['eileen']);
  expect(server.lbph.get('faces/grace_hopper.jpg')!.faces.map((f) => f.label)).toEqual(['grace']);
  for (const photo of OBJECT_PHOTOS) expect(server.objects.get(photo)!.count).toBeGreaterThan(0);
});

test.afterAll(async () => {
  await lookout?.close();
});

/** The largest differences seen against the server, per backend (printed: they are what the tolerances cover). */
interface Drift {
  embeddingDistance: number;
  objectBoxPx: number;
  objectScore: number;
}

function expectSameObjects(browser: EngineObjects, expected: ObjectDetectionResponse, photo: string, drift: Drift): void {
  const names = (objs: { class_name: string }[]) => objs.map((o) => o.class_name).sort();
  expect(names(browser.objects), `${photo}: class names`).toEqual(names(expected.objects));
  for (const want of expected.objects) {
    // The same class, nearest box.
    const candidates = browser.objects.filter((o) => o.class_name === want.class_name);
    const got = candidates.sort(
      (a, b) => Math.abs(a.x - want.x) + Math.abs(a.y - want.y) - (Math.abs(b.x - want.x) + Math.abs(b.y - want.y)),
    )[0];
    for (const k of ['x', 'y', 'w', 'h'] as const) {
      drift.objectBoxPx = Math.max(drift.objectBoxPx, Math.abs(got[k] - want[k]));
      expect(Math.abs(got[k] - want[k]), `${photo} ${want.class_name} ${k}`).toBeLessThanOrEqual(3);
    }
    drift.objectScore = Math.max(drift.objectScore, Math.abs(got.confidence - want.confidence));
    expect(Math.abs(got.confidence - want.confidence), `${photo} ${want.class_name} confidence`).toBeLessThanOrEqual(0.02);
  }
  expect(browser.summary).toEqual(expected.summary);
}

/** In-browser recognition and detection on `page` with `backend`, compared with the server's answers. */
async function compareWithServer(page: Page, backend: Backend): Promise<void> {
  const drift: Drift = { embeddingDistance: 0, objectBoxPx: 0, objectScore: 0 };
  const watch = watchEngineApiCalls(page, lookout.url);
  const engine = await openEnginePage(page, lookout.url);
  await serveTrainedModelsIfMissing(page, lookout);
  const init = await engine.init(backend);
  expect(init.backend.backend, JSON.stringify(init.backend.attempts)).toBe(backend);
  expect(init.embedding).toEqual({ loaded: true });
  expect(init.objects).toEqual({ loaded: true, detector: 'nanodet' });
  // The cascade is our own generated WebAssembly with SIMD whatever the tfjs backend (shared/vision/haar-wasm.ts).
  expect(init.cascade.scan).toBe('simd');
  if (backend === 'wasm') {
    expect(init.backend.wasm?.simd).toBe(true);
    // Threads exactly when the server makes the page cross-origin isolated (COOP + COEP).
    expect(init.backend.wasm?.threads).toBe(init.backend.crossOriginIsolated);
  }
  const models = await engine.loadServerModels();
  expect(models.lbph).toMatchObject({ labels: ['eileen', 'grace'] });
  expect(models.embedding).toMatchObject({ labels: ['eileen', 'grace'] });

  for (const photo of FACE_PHOTOS) {
    expect(await engine.decodesLikeServer(photo), `${photo} decodes to the server's pixels`).toBe(true);
    const lbph = await engine.recognizeFile(photo, 'lbph');
    const { faces, count, detection_method, recognition_model, trained } = lbph;
    expect({ faces, count, detection_method, recognition_model, trained }, `${photo} (lbph)`).toEqual(server.lbph.get(photo));
    expect(lbph.timing.detectMs).toBeGreaterThan(0);

    const embedding = await engine.recognizeFile(photo, 'embedding');
    const want = server.embedding.get(photo)!;
    expect(boxesAndLabels(embedding.faces), `${photo} (embedding)`).toEqual(boxesAndLabels(want.faces));
    expect(embedding.recognition_model).toBe('embedding');
    expect(embedding.trained).toBe(true);
    embedding.faces.forEach((f, i) => {
      const delta = Math.abs(f.distance! - want.faces[i].distance!);
      drift.embeddingDistance = Math.max(drift.embeddingDistance, delta);
      expect(delta, `${photo} embedding distance`).toBeLessThanOrEqual(0.02);
    });
  }
  // A JPEG sent as the server's own decoded pixels: no decoder in the comparison at all.
  const decodedByServer = await engine.recognizeServerDecoded('faces/grace_hopper.jpg', 'lbph');
  expect(decodedByServer.faces).toEqual(server.lbph.get('faces/grace_hopper.jpg')!.faces);

  for (const photo of OBJECT_PHOTOS) {
    const objects = await engine.detectObjectsFile(photo);
    expectSameObjects(objects, server.objects.get(photo)!, photo, drift);
    expect(objects.timing.inferenceMs).toBeGreaterThan(0);
  }
  expect(watch.calls, 'the page must not call the server engines').toEqual([]);
  expect(watch.foreign, 'nothing is fetched from another origin').toEqual([]);
  // The watch sees the worker's own requests too (so the checks above cover the engine, not just the page).
  expect(watch.paths).toContain('/models/nanodet.json');
  console.log(`${backend} vs server: LBPH identical; largest differences: ${JSON.stringify(drift)}`);
}

for (const backend of ['wasm', 'webgl'] as const) {
  test(`${backend}: recognition and object detection in the browser give the server's answers`, async ({ page }) => {
    test.setTimeout(180_000);
    await compareWithServer(page, backend);
  });
}

test('webgpu (Chromium with --enable-unsafe-webgpu): the same answers as the server', async () => {
  test.setTimeout(300_000);
  // The flag only exists for this browser: the other tests see Chromium as people run it.
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, '--enable-unsafe-webgpu'] });
  try {
    await compareWithServer(await browser.newPage(), 'webgpu');
  } finally {
    await browser.close();
  }
});

test('auto picks the best backend that starts and says why the others were skipped', async ({ page }) => {
  const engine = await openEnginePage(page, lookout.url);
  const init = await engine.init('auto', { embedding: false, objects: false });
  // This Chromium has no GPU: WebGPU is off without its flag, and WebGL is SwiftShader, a CPU emulation that
  // is many times slower than WASM (the bench: NanoDet 3.6 s a frame on WebGL, 0.16 s on WASM). WASM runs.
  expect(init.backend.attempts.map((a) => [a.backend, a.ok])).toEqual([
    ['webgpu', false],
    ['webgl', false],
    ['wasm', true],
  ]);
  expect(init.backend.attempts[0].reason).toMatch(/WebGPU/);
  expect(init.backend.attempts[1].reason).toMatch(/software emulation of a GPU \(.*SwiftShader.*\), slower than WASM/);
  expect(init.backend.backend).toBe('wasm');
});

test('a model trained in the browser from its own captures names people as the server does', async ({ page }) => {
  test.setTimeout(120_000);
  const watch = watchEngineApiCalls(page, lookout.url);
  const engine = await openEnginePage(page, lookout.url);
  await engine.init('wasm', { embedding: true, objects: false });
  const files: { label: string; bytes: Buffer; type: string }[] = [];
  for (const [label, photo] of Object.entries(PEOPLE))
    for (const bytes of await trainingCaptures(photo)) files.push({ label, bytes, type: 'image/jpeg' });
  files.push({ label: 'nobody', bytes: testImage('objects/chelsea.png'), type: 'image/png' });
  const trained = await engine.trainFiles(files);
  expect(trained.labels).toEqual(['eileen', 'grace']);
  expect(trained.total_faces).toBe(8);
  expect(trained.skipped).toEqual([{ index: 8, label: 'nobody', reason: 'no_face' }]);
  expect(trained.recognizers_trained).toEqual(['lbph', 'embedding']);
  expect(trained.files.lbphYaml).toContain('opencv_lbphfaces');
  // The same captures as the server trained on, so LBPH gives the very same faces, distances included.
  for (const photo of FACE_PHOTOS) {
    const lbph = await engine.recognizeFile(photo, 'lbph');
    expect(lbph.faces, photo).toEqual(server.lbph.get(photo)!.faces);
    const embedding = await engine.recognizeFile(photo, 'embedding');
    expect(boxesAndLabels(embedding.faces), photo).toEqual(boxesAndLabels(server.embedding.get(photo)!.faces));
  }
  expect(watch.calls).toEqual([]);
});

test('the live bench recognises the trained person from the camera and reports its speed', async ({ page }, testInfo) => {
  test.setTimeout(180_000);
  const watch = watchEngineApiCalls(page, lookout.url);
  await serveTrainedModelsIfMissing(page, lookout);
  const results = [];
  for (const mode of ['lbph', 'embedding', 'objects']) {
    const result = await runBench(page, lookout.url, { backend: 'wasm', mode, seconds: '6' });
    expect(result.backend).toBe('wasm');
    expect([result.width, result.height]).toEqual([640, 480]);
    expect(result.frames).toBeGreaterThan(2);
    if (mode === 'objects') expect(result.labels).toContain('person');
    else expect(result.labels).toEqual(['eileen']);
    results.push(result);
    if (mode === 'lbph') {
      await expect(page.getByRole('status')).toContainText('frames per second on wasm');
      await screenshot(page, 'engine-bench-lbph');
    }
  }
  expect(watch.calls).toEqual([]);
  const summary = results
    .map((r) => `${r.mode}: ${r.fps} fps, ${r.ms_per_frame_median} ms/frame (${JSON.stringify(r.worker_ms_median)})`)
    .join('\n');
  console.log(`in-browser engine on WASM, 640x480 camera:\n${summary}`);
  await testInfo.attach('bench.json', { body: JSON.stringify(results, null, 2), contentType: 'application/json' });
});

test("a YOLO ONNX model runs in the browser (onnxruntime-web) with the server host's answers", async ({ page }) => {
  test.setTimeout(120_000);
  // Boxes in 416x416 input pixels; the first one's centre moves with the mean of the letterboxed input, so
  // the same objects on both sides also mean the same pre-processing.
  const candidates: YoloCandidate[] = [
    { cx: 208, cy: 208, w: 104, h: 52, scores: { 15: 0.9 } },
    { cx: 213.2, cy: 208, w: 104, h: 52, scores: { 15: 0.8 } },
    { cx: 300, cy: 150, w: 60, h: 40, scores: { 41: 0.55 } },
    { cx: 100, cy: 300, w: 40, h: 40, scores: { 2: 0.3 } },
  ];
  const output = yoloOutput('v8', candidates);
  const gain = new Array<number>(output.data.length).fill(0);
  gain[0] = 100; // cx of the first candidate (v8: attribute-major)
  const model = buildConstantOutputModel({ inputShape: [1, 3, 416, 416], output, inputMeanGain: gain });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-e2e-yolo-'));
  const file = path.join(dir, 'e2e-yolo.onnx');
  fs.writeFileSync(file, model);
  const host = new YoloOnnxDetector({ modelPath: file });
  try {
    await page.context().route('**/models/e2e-yolo.onnx', (route) =>
      route.fulfill({
        body: Buffer.from(model),
        contentType: 'application/octet-stream',
        headers: { 'cross-origin-resource-policy': 'same-origin' },
      }),
    );
    const watch = watchEngineApiCalls(page, lookout.url);
    const engine = await openEnginePage(page, lookout.url);
    const init = await engine.initWith({ backend: 'wasm', preload: { objects: true }, urls: { yolo: '/models/e2e-yolo.onnx' } });
    expect(init.objects).toEqual({ loaded: true, detector: 'e2e-yolo.onnx' });
    for (const photo of OBJECT_PHOTOS) {
      const inBrowser = await engine.detectObjectsFile(photo);
      expect(inBrowser.detector).toBe('e2e-yolo.onnx');
      // The server's host on the pixels the server decodes.
      const { data, info } = await sharp(testImage(photo))
        .rotate()
        .removeAlpha()
        .toColourspace('srgb')
        .raw()
        .toBuffer({ resolveWithObject: true });
      const onServer = await host.detect({ width: info.width, height: info.height, channels: 3, data: new Uint8Array(data) });
      expect(new Set(onServer.map((o) => o.class_name))).toEqual(new Set(['cat', 'cup']));
      expect(inBrowser.objects.map(({ confidence, ...box }) => box)).toEqual(onServer.map(({ confidence, ...box }) => box));
      inBrowser.objects.forEach((o, i) => {
        expect(o.confidence).toBeCloseTo(onServer[i].confidence, 5);
      });
    }
    expect(watch.calls).toEqual([]);
  } finally {
    await host.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
