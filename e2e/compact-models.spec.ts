/**
 * #27 section 2, compact models in the browser: the in-browser engine (Chromium, the bench page's harness) gets the
 * server's trained models through the pages' model check as the compact model (manifest and per-person segments, not
 * training.yml) and recognises with it; after a training that added one person, the next check fetches that person's
 * segments only, and the engine knows both people. A first visit to the app keeps that compact model for offline
 * use (the service worker's install, client/src/pwa/keep-model.ts), not training.yml.
 */
import { expect, test } from './helpers/fixtures.js';
import { type EnginePage, mimeOf, openEnginePage, testImage, trainOnServer, watchEngineApiCalls } from './helpers/engine-page.js';
import { startLookout, type Lookout } from './helpers/lookout.js';

test.describe.configure({ mode: 'serial' });

let lookout: Lookout;

type Installed = { lbph: { labels: string[]; samples: number } | null };
type Check = { version: string | null; installed: Installed | null; download: { via: string; fetched: number; segments: number } | null };
type Manifest = {
  lbph: { people: { label: string; hash: string }[] } | null;
  embedding: { people: { label: string; hash: string }[] } | null;
};

const checkModels = (engine: EnginePage) =>
  engine.page.evaluate(() =>
    (globalThis as unknown as { lookoutEngine: { checkServerModels(): Promise<Check> } }).lookoutEngine.checkServerModels(),
  );

const recognizeInBrowser = (engine: EnginePage, rel: string) =>
  engine.page.evaluate(
    ([b64, type]) =>
      (
        globalThis as unknown as {
          lookoutEngine: { recognizeFile(b: string, t: string, o: unknown): Promise<{ faces: { label: string; distance?: number }[] }> };
        }
      ).lookoutEngine.recognizeFile(b64, type, {
        recognition_model: 'lbph',
        rules: { lbph: { min: 0, max: 1000, sureMax: 1000, nearMax: 1000, ratioMax: null, verifyMax: 1000 } },
      }),
    [testImage(rel).toString('base64'), mimeOf(rel)] as const,
  );

test.beforeAll(async () => {
  lookout = await startLookout({ OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' });
  await trainOnServer(lookout, { 'grace-hopper': 'faces/grace_hopper.jpg' });
});

test.afterAll(async () => {
  await lookout?.close();
});

test('the engine installs the compact model; after one person is added, the next check fetches only their segments', async ({ page }) => {
  const engine = await openEnginePage(page, lookout.url);
  await engine.init('wasm', { embedding: false, objects: false });
  const calls = watchEngineApiCalls(page, lookout.url);
  const segmentRequests: string[][] = [];
  page.on('request', (req) => {
    const url = new URL(req.url());
    if (url.pathname === '/api/models/trained/compact/segments') segmentRequests.push((url.searchParams.get('hashes') ?? '').split(','));
  });

  const first = await checkModels(engine);
  expect(first.download).toMatchObject({ via: 'compact' });
  expect(first.installed?.lbph).toEqual({ labels: ['grace-hopper'], samples: 4 });
  expect(calls.paths).toContain('/api/models/trained/compact');
  expect(calls.paths).not.toContain('/api/models/trained/lbph');
  expect((await recognizeInBrowser(engine, 'faces/grace_hopper.jpg')).faces.map((f) => f.label)).toEqual(['grace-hopper']);

  await trainOnServer(lookout, { lionel: 'faces/messi5.jpg' });
  const manifest = (await (await fetch(`${lookout.url}/api/models/trained/compact`)).json()) as Manifest;
  const lionel = [...(manifest.lbph?.people ?? []), ...(manifest.embedding?.people ?? [])]
    .filter((p) => p.label === 'lionel')
    .map((p) => p.hash);
  const before = segmentRequests.length;
  const second = await checkModels(engine);
  expect(second.version).not.toBe(first.version);
  expect(second.download).toMatchObject({ via: 'compact', fetched: lionel.length });
  expect(segmentRequests.slice(before).flat().sort()).toEqual([...lionel].sort());
  expect(second.installed?.lbph).toEqual({ labels: ['grace-hopper', 'lionel'], samples: 8 });
  expect(calls.paths.filter((p) => p === '/api/models/trained/lbph')).toEqual([]);
  expect((await recognizeInBrowser(engine, 'faces/messi5.jpg')).faces.map((f) => f.label)).toContain('lionel');

  // The Models page says what a browser downloads.
  await page.goto(`${lookout.url}/config`);
  await expect(page.getByTestId('browser-model-size')).toContainText('2 people');
  await expect(page.getByTestId('browser-model-lbph')).toContainText(
    /LBPH: \d+ KB to download, \d+ KB installed \(the full file would be [\d.]+ MB\)\./,
  );
});

test('a first visit keeps the compact model for offline use, not training.yml, and it answers with the server stopped', async ({
  page,
}) => {
  const manifest = (await (await fetch(`${lookout.url}/api/models/trained/compact`)).json()) as Manifest & { version: string };
  const hashes = [...(manifest.lbph?.people ?? []), ...(manifest.embedding?.people ?? [])].map((p) => p.hash).sort();
  expect(hashes.length).toBeGreaterThanOrEqual(1);
  await page.goto(`${lookout.url}/`);
  // `ready`: the worker installed, and its install keeps the trained model.
  await page.evaluate('navigator.serviceWorker.ready.then(() => undefined)');
  const kept = () =>
    page.evaluate<{ trained: string[]; segments: string[] }>(`(async () => {
      const paths = async (name) => (await (await caches.open(name)).keys()).map((r) => new URL(r.url).pathname);
      return { trained: await paths('lookout-trained-v1'), segments: await paths('lookout-compact-segments-v1') };
    })()`);
  await expect.poll(async () => (await kept()).trained).toContain('/api/models/trained/compact');
  const cached = await kept();
  expect(cached.trained).toContain('/api/models/trained');
  expect(cached.trained).not.toContain('/api/models/trained/lbph');
  expect(cached.trained).not.toContain('/api/models/trained/embedding');
  expect(cached.segments.map((p) => p.split('/').pop()).sort()).toEqual(hashes);

  const controlled = () => page.evaluate<boolean>('navigator.serviceWorker.controller !== null');
  if (!(await controlled())) await page.reload();
  await expect.poll(controlled).toBe(true);
  await lookout.stop();
  try {
    // What the model sync reads offline: the manifest from the worker's cache (segments from the store above).
    const offline = await page.evaluate<string>(
      "fetch('/api/models/trained/compact', { cache: 'no-store' }).then((r) => r.text(), () => 'unreachable')",
    );
    expect(offline).not.toBe('unreachable');
    expect((JSON.parse(offline) as { version: string }).version).toBe(manifest.version);
    expect((await kept()).segments).toHaveLength(hashes.length);
  } finally {
    await lookout.restart();
  }
});
