/**
 * Object lanes (client/src/engine/object-pool.ts): when frames overlap, as a live camera's do, each is detected
 * by its own single-threaded onnxruntime-web session in its own worker. They must give exactly the engine
 * worker's detections (same graph, same session options) on the six object photos, and must not exist until
 * two frames have overlapped (a photo at a time holds one session). The Objects page's live camera in this
 * browser keeps two frames in flight, so it runs on them.
 */
import { expect, test } from './helpers/fixtures.js';
import type { DetectedObject } from '../shared/objects/types.js';
import { CHROMIUM_PATH, fakeCameraArgs } from './helpers/browser.js';
import { mimeOf, openEnginePage, testImage, type EngineObjects } from './helpers/engine-page.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { startLookout, type Lookout } from './helpers/lookout.js';

const y4m = await makeFakeCamera('objects/pexels_double_decker_bus.jpg');
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(y4m) } });

const PHOTOS = [
  'objects/basketball1.png',
  'objects/chelsea.png',
  'objects/coffee.png',
  'objects/fruits.jpg',
  'objects/motorcycle_left.png',
  'objects/pexels_double_decker_bus.jpg',
];

type LaneAnswer = EngineObjects & { lane?: number; runtime: string };
// The bench page's harness (client/src/bench/main.ts), as seen from here.
type LaneHarness = {
  lookoutEngine: {
    init(o: unknown): Promise<{ objects: { loaded: boolean; error?: string } }>;
    detectObjectsFile(b64: string, type: string): Promise<LaneAnswer>;
    detectObjectsFiles(files: { b64: string; type: string }[]): Promise<LaneAnswer[]>;
    objectLanes(): Promise<number>;
  };
};

let lookout: Lookout;

// biome-ignore lint/correctness/noEmptyPattern: Playwright requires the fixtures argument to be an object pattern, and this hook needs none
test.beforeAll(async ({}, testInfo) => {
  testInfo.setTimeout(120_000);
  lookout = await startLookout();
});

test.afterAll(async () => {
  await lookout?.close();
});

const files = PHOTOS.map((p) => ({ b64: testImage(p).toString('base64'), type: mimeOf(p) }));
const detections = (r: EngineObjects): DetectedObject[] => r.objects;

test('two single-threaded object lanes give the engine worker its exact detections, and start only when frames overlap', async ({
  page,
}) => {
  test.setTimeout(240_000);
  await openEnginePage(page, lookout.url);
  const init = await page.evaluate(
    // Two lanes whatever this machine's cores (the default plan follows them).
    () =>
      (globalThis as unknown as LaneHarness).lookoutEngine.init({
        backend: 'wasm',
        preload: { objects: true },
        objectLanes: { lanes: 2, threadsPerLane: 1 },
      }),
  );
  expect(init.objects).toMatchObject({ loaded: true });

  // One photo at a time: the engine worker alone, no lane started.
  const alone: LaneAnswer[] = [];
  for (const f of files)
    alone.push(await page.evaluate((x) => (globalThis as unknown as LaneHarness).lookoutEngine.detectObjectsFile(x.b64, x.type), f));
  expect(alone.map((r) => r.lane)).toEqual(PHOTOS.map(() => undefined));
  expect(await page.evaluate(() => (globalThis as unknown as LaneHarness).lookoutEngine.objectLanes())).toBe(0);
  expect(alone.reduce((n, r) => n + r.count, 0)).toBeGreaterThan(6);

  // Overlapping calls start the lanes (the engine worker answers meanwhile); then they take the overlap.
  await page.evaluate((f) => (globalThis as unknown as LaneHarness).lookoutEngine.detectObjectsFiles(f.slice(0, 2)), files);
  expect(await page.evaluate(() => (globalThis as unknown as LaneHarness).lookoutEngine.objectLanes())).toBe(2);
  const together = await page.evaluate((f) => (globalThis as unknown as LaneHarness).lookoutEngine.detectObjectsFiles(f), files);
  const lanes = new Set(together.map((r) => r.lane).filter((l) => l !== undefined));
  expect([...lanes].sort()).toEqual([1, 2]);
  expect(together.every((r) => r.runtime === 'onnxruntime-web wasm')).toBe(true);
  // Bit for bit: boxes, classes and scores.
  together.forEach((r, i) => {
    expect(detections(r), PHOTOS[i]).toEqual(detections(alone[i]));
  });
});

test('the Objects page detects a live camera in this browser on the object lanes', async ({ page }) => {
  test.setTimeout(120_000);
  const detectCalls: string[] = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/objects/detect') detectCalls.push(r.url());
  });
  await page.goto(`${lookout.url}/objects`);
  await expect(page.getByRole('radio', { name: 'In this browser' })).toBeChecked();
  await expect(page.getByRole('radio', { name: 'Camera' })).toBeChecked();
  await expect(page.getByTestId('object-summary')).toContainText('bus', { timeout: 60_000 });
  const cores = await page.evaluate(
    () => (globalThis as unknown as { navigator: { hardwareConcurrency: number } }).navigator.hardwareConcurrency,
  );
  // Two lanes (the page's two frames in flight) from 2 cores (defaultLanePlan); 1 core: the engine worker alone.
  if (cores >= 2)
    await expect.poll(() => page.workers().filter((w) => w.url().includes('object-worker')).length, { timeout: 60_000 }).toBe(2);
  await expect.poll(async () => Number.parseFloat((await page.getByTestId('fps').textContent()) ?? '') || 0).toBeGreaterThan(0);
  await expect(page.getByTestId('object-summary')).toContainText('bus');
  expect(detectCalls).toEqual([]);
});
