/**
 * The offline kiosk: the service worker keeps the app and the engines' model files, so with the server
 * stopped the app still starts; a training photo saved while the server is away is queued on the device and
 * reaches the server once it is back, exactly once; so do results. The real server is stopped and restarted
 * on the same port and data directory (startLookout's stop/restart).
 *
 * Results: test (c) puts records in the offline queue the way recordResult does (one IndexedDB add to the
 * `results` store), so it can also re-queue an already-sent one; browser-first.spec.ts covers results that
 * the recognition page itself keeps while offline.
 */
import { checkAccessibility, expect, test, type Page } from './helpers/fixtures.js';
import { CHROMIUM_PATH, DESKTOP_VIEWPORT, fakeCameraArgs } from './helpers/browser.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { screenshot, startLookout, type Lookout } from './helpers/lookout.js';

const camera = await makeFakeCamera('faces/grace_hopper.jpg');
test.use({ viewport: DESKTOP_VIEWPORT, launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(camera) } });
test.describe.configure({ mode: 'serial' });

let lookout: Lookout;
let serverUp = true;
test.beforeAll(async () => {
  lookout = await startLookout();
});
test.afterEach(async () => {
  // A failed test must not leave the next one without a server.
  if (!serverUp) await restart();
});
test.afterAll(async () => {
  await lookout.close();
});

async function stop() {
  await lookout.stop();
  serverUp = false;
}
async function restart() {
  await lookout.restart();
  serverUp = true;
}

/** Opens the app and waits until the service worker has installed (everything precached) and controls the page. */
async function installOffline(page: Page, path = '/') {
  await page.goto(`${lookout.url}${path}`);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  // `ready` resolves once a worker is active, i.e. after its install (the precache) succeeded.
  await page.evaluate('navigator.serviceWorker.ready.then(() => undefined)');
  const controlled = () => page.evaluate<boolean>('navigator.serviceWorker.controller !== null');
  // clients.claim() in activate takes this page over; a reload is the fallback should it not have.
  if (!(await controlled())) await page.reload();
  await expect.poll(controlled).toBe(true);
}

/** `GET /api/images/<label>` from the test (not the browser), 0 when the label does not exist. */
async function imageCount(label: string): Promise<number> {
  const res = await fetch(`${lookout.url}/api/images/${label}`);
  if (res.status === 404) return 0;
  const body = (await res.json()) as { count?: number; images?: unknown[] };
  return body.count ?? body.images?.length ?? 0;
}

async function storedResults(): Promise<{ id: string }[]> {
  const res = await fetch(`${lookout.url}/api/results?limit=1000`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { results: { id: string }[] }).results;
}

/**
 * Runs `body` (JavaScript, in the page; a string, as this project's e2e code has no DOM types) with `db` open
 * on the app's offline queues (IndexedDB `lookout-offline`) and `arg` given.
 */
function inQueueDb<T>(page: Page, body: string, arg: unknown = null): Promise<T> {
  return page.evaluate<T>(`(async (arg) => {
    const db = await new Promise((resolve, reject) => {
      const req = indexedDB.open('lookout-offline');
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    try {
      if (!db.objectStoreNames.contains('captures')) throw new Error('the app has not created its offline queues');
      const commit = (tx) => new Promise((resolve, reject) => { tx.oncomplete = () => resolve(); tx.onerror = () => reject(tx.error); });
      ${body}
    } finally {
      db.close();
    }
  })(${JSON.stringify(arg)})`);
}

/** Adds items to one of the queues, as the app does (the store's key is assigned by IndexedDB). */
function addToQueue(page: Page, store: 'captures' | 'results', items: unknown[]): Promise<void> {
  return inQueueDb(
    page,
    `const tx = db.transaction(arg.store, 'readwrite');
     for (const item of arg.items) {
       if (item.blobBase64) {
         const bin = atob(item.blobBase64);
         item.blob = new Blob([Uint8Array.from(bin, (c) => c.charCodeAt(0))], { type: 'image/jpeg' });
         delete item.blobBase64;
       }
       tx.objectStore(arg.store).add(item);
     }
     await commit(tx);`,
    { store, items },
  );
}

function queueLength(page: Page, store: 'captures' | 'results'): Promise<number> {
  return inQueueDb(
    page,
    `return await new Promise((resolve, reject) => {
       const req = db.transaction(arg).objectStore(arg).count();
       req.onsuccess = () => resolve(req.result);
       req.onerror = () => reject(req.error);
     });`,
    store,
  );
}

/** The header's sync status, where the shell shows it (App.tsx places client/src/pwa/SyncStatus.tsx). */
async function expectSyncStatus(page: Page, text: string | RegExp) {
  const status = page.getByTestId('sync-status');
  if ((await status.count()) > 0) await expect(status).toHaveText(text);
}

test('once installed, the app starts and its model files load with the server stopped', async ({ page }) => {
  // A previous version's cache, made before the worker installs: activating this version must delete it.
  await page.addInitScript(`if (!sessionStorage.getItem('stale')) {
    sessionStorage.setItem('stale', '1');
    caches.open('lookout-app-0123456789ab').then((c) => c.put('/assets/old.js', new Response('old')));
  }`);
  await installOffline(page);
  const cacheNames = await page.evaluate<string[]>('caches.keys()');
  expect(cacheNames.filter((c) => c.startsWith('lookout-app-'))).toHaveLength(1);
  expect(cacheNames).not.toContain('lookout-app-0123456789ab');
  expect(cacheNames.filter((c) => c.startsWith('lookout-models-'))).toHaveLength(1);
  // The trained-model list, fetched while the server is up, is what the engines get offline.
  const trainedOnline = await page.evaluate<string>("fetch('/api/models/trained', { cache: 'no-store' }).then((r) => r.text())");

  await stop();
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();
  await expect(page.getByTestId('server-unreachable')).toBeVisible();
  await expect(page.getByTestId('server-unreachable')).toContainText('Cannot reach the Lookout server');

  // The pages load on first visit: their code comes from the cache too.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Training' }).click();
  await expect(page.getByRole('heading', { name: 'Training', level: 1 })).toBeVisible();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Models' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboard' }).click();
  await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();

  // A deep link opened offline is the app too (every non-API path is the single page).
  await page.goto(`${lookout.url}/objects`);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await expect(page.getByTestId('server-unreachable')).toBeVisible();

  // The model files the in-browser engines need come from the cache; live API answers are never cached.
  const files = await page.evaluate<Record<string, number | string>>(`(async () => {
    const size = async (url) => {
      const res = await fetch(url);
      return res.ok ? (await res.arrayBuffer()).byteLength : -res.status;
    };
    const api = await fetch('/api/health').then((r) => 'answered ' + r.status, () => 'unreachable');
    return {
      nanodetBin: await size('/models/nanodet.bin'),
      nanodetJson: await size('/models/nanodet.json'),
      cascade: await size('/models/haarcascade_frontalface_alt2.xml'),
      faceApi: await size('/models/face-api/face_recognition_model.bin'),
      faceresJson: await size('/models/faceres.json'),
      faceresBin: await size('/models/faceres.bin'),
      trained: await fetch('/api/models/trained', { cache: 'no-store' }).then((r) => r.text(), () => 'unreachable'),
      api,
    };
  })()`);
  expect(files.nanodetBin).toBe(7574558);
  expect(files.nanodetJson).toBeGreaterThan(1000);
  expect(files.cascade).toBeGreaterThan(1000);
  expect(files.faceApi).toBeGreaterThan(1000);
  // The embedding recognizer's faceres-1024 net (EMBEDDING_DESCRIPTOR), for a kiosk whose server trained with it.
  expect(files.faceresJson).toBeGreaterThan(1000);
  expect(files.faceresBin).toBe(6978814);
  expect(files.api).toBe('unreachable');
  expect(files.trained).toBe(trainedOnline);
  expect(JSON.parse(trainedOnline)).toHaveProperty('version');

  await page.goto(`${lookout.url}/`);
  await expect(page.getByTestId('server-unreachable')).toBeVisible();
  await checkAccessibility(page, 'offline');
  await screenshot(page, 'offline-desktop');

  // The server back: the banner goes by itself.
  await restart();
  await expect(page.getByTestId('server-unreachable')).toHaveCount(0, { timeout: 15_000 });
});

test('a photo saved while the server is away is queued, then stored once when it is back', async ({ page }) => {
  await installOffline(page, '/training');
  await expect(page.getByRole('button', { name: 'Take photo' })).toBeEnabled();
  await stop();
  await expect(page.getByTestId('server-unreachable')).toBeVisible();

  await page.getByLabel('Person’s name').fill('Offline Grace');
  await page.getByTestId('training-camera').getByRole('button', { name: 'Take photo' }).click();
  await expect(page.getByTestId('capture-thumb')).toHaveCount(1);
  await page.getByRole('button', { name: 'Save 1 photo' }).click();
  // The Training page says the photo is kept on the device, not lost and not stored.
  await expect(page.getByTestId('capture-thumb')).toHaveAttribute('data-status', 'queued');
  await expect(page.getByTestId('save-message')).toContainText('kept on this device');
  await expectSyncStatus(page, '1 capture waiting to sync');
  expect(await queueLength(page, 'captures')).toBe(1);

  await restart();
  // The status poll sees the server within a few seconds and the queue is sent then (else within 10 s).
  await expect.poll(() => imageCount('offline-grace'), { timeout: 15_000 }).toBe(1);
  await expect.poll(() => queueLength(page, 'captures')).toBe(0);
  await expectSyncStatus(page, 'All synced');
  await expect(page.getByTestId('capture-thumb')).toHaveAttribute('data-status', 'stored');

  // The answer lost, as after a crash between the server's reply and the removal from the queue: the app
  // sends the same capture again after a reload, and the server keeps one copy.
  const [{ filename }] = ((await (await fetch(`${lookout.url}/api/images/offline-grace`)).json()) as { files: { filename: string }[] })
    .files;
  const captureId = filename.replace(/\.[a-z]+$/, '');
  const bytes = await (await fetch(`${lookout.url}/api/images/offline-grace/${filename}`)).arrayBuffer();
  await addToQueue(page, 'captures', [
    { capture_id: captureId, label: 'offline-grace', blobBase64: Buffer.from(bytes).toString('base64'), created: Date.now() },
  ]);
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Training', level: 1 })).toBeVisible();
  await expect.poll(() => queueLength(page, 'captures'), { timeout: 15_000 }).toBe(0);
  expect(await imageCount('offline-grace')).toBe(1);
  // One more sync cycle (the 10 s timer) changes nothing.
  await page.waitForTimeout(11_000);
  expect(await imageCount('offline-grace')).toBe(1);
  await expectSyncStatus(page, 'All synced');
});

test('results recorded while the server is away reach it once', async ({ page }) => {
  await installOffline(page);
  await stop();
  const now = new Date().toISOString();
  const records = [
    { id: '3f1c1b7e-9d8a-4c7b-8a51-0f2f1d0b6a01', kind: 'recognition', captured_at: now, engine: 'browser', backend: 'wasm', faces: [] },
    {
      id: '3f1c1b7e-9d8a-4c7b-8a51-0f2f1d0b6a02',
      kind: 'objects',
      captured_at: now,
      engine: 'browser',
      image_width: 640,
      image_height: 480,
      objects: [{ class_id: 15, class_name: 'cat', confidence: 0.9, x: 10, y: 20, w: 100, h: 80 }],
    },
  ];
  // What recordResult() does for each: one add to the `results` queue, keyed by the record's id.
  await addToQueue(
    page,
    'results',
    records.map((record) => ({ id: record.id, record, created: Date.now() })),
  );
  await page.reload(); // offline: the app starts from the cache and finds the queue
  await expect(page.getByRole('heading', { name: 'Dashboard', level: 1 })).toBeVisible();
  await expectSyncStatus(page, '2 results waiting to sync');
  expect(await queueLength(page, 'results')).toBe(2);

  await restart();
  await expect.poll(async () => (await storedResults()).map((r) => r.id).sort(), { timeout: 15_000 }).toEqual(records.map((r) => r.id));
  await expect.poll(() => queueLength(page, 'results')).toBe(0);

  // Sent again (a lost answer): the server counts it as a duplicate, the history keeps one.
  await addToQueue(page, 'results', [{ id: records[0].id, record: records[0], created: Date.now() }]);
  await page.reload();
  await expect.poll(() => queueLength(page, 'results'), { timeout: 15_000 }).toBe(0);
  expect((await storedResults()).map((r) => r.id).sort()).toEqual(records.map((r) => r.id));
  await expectSyncStatus(page, 'All synced');
});
