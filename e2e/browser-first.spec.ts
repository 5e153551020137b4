/**
 * Browser-first, through the pages a person uses: by default the recognition and objects pages run the
 * shared/ engines in this browser (a Web Worker), never calling /api/recognize or /api/objects/detect; the
 * page says which backend runs. Installed once, the app recognises with the server stopped (service worker
 * cache: app, model files, last trained model), and the results it keeps offline reach the server's history
 * once it is back, each exactly once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkAccessibility, expect, test, type Page } from './helpers/fixtures.js';
import { CHROMIUM_PATH, fakeCameraArgs } from './helpers/browser.js';
import { trainingCaptures, trainOnServer } from './helpers/engine-page.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { screenshot, startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

const PERSON = 'grace';
// The camera shows her portrait letterboxed to 640x480; the model is trained on other captures of it.
const camera = await makeFakeCamera('faces/grace_hopper.jpg');
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(camera) } });
test.describe.configure({ mode: 'serial' });

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout();
  await trainOnServer(lookout, { [PERSON]: 'faces/grace_hopper.jpg' });
});
test.afterAll(async () => {
  await lookout?.close();
});

/** Every analysis request the page sends to the server. */
function watchAnalysisCalls(page: Page): string[] {
  const calls: string[] = [];
  page.on('request', (r) => {
    const p = new URL(r.url()).pathname;
    if (p === '/api/recognize' || p === '/api/objects/detect') calls.push(p);
  });
  return calls;
}

async function storedResults(): Promise<{ id: string; kind: string; engine: string; faces?: { label: string }[] }[]> {
  const res = await fetch(`${lookout.url}/api/results?limit=1000`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { results: { id: string; kind: string; engine: string; faces?: { label: string }[] }[] }).results;
}

test('live recognition runs in this browser by default and names the trained person', async ({ page }) => {
  const calls = watchAnalysisCalls(page);
  await page.goto(`${lookout.url}/recognize`);
  await expect(page.getByRole('radio', { name: 'In this browser' })).toBeChecked();
  await expect(page.getByTestId('engine-status')).toContainText(/Running in this browser on (WebGPU|WebGL|WASM)/, { timeout: 60_000 });
  await expect(page.getByTestId('face-result').first()).toContainText(PERSON, { timeout: 60_000 });
  await expect(page.getByTestId('face-result').first()).toContainText('%');
  await expect(page.getByTestId('analysed-on')).toContainText('This device');
  await expect.poll(async () => Number((await page.getByTestId('fps').textContent())?.match(/[\d.]+/)?.[0] ?? 0)).toBeGreaterThan(0);
  await checkAccessibility(page, 'recognize-in-browser');
  await screenshot(page, 'recognize-in-browser-desktop');
  expect(calls).toEqual([]);
  // The person's appearance was kept in the server's history, marked as an in-browser result.
  await expect
    .poll(async () => (await storedResults()).filter((r) => r.engine === 'browser' && r.faces?.some((f) => f.label === PERSON)).length, {
      timeout: 20_000,
    })
    .toBeGreaterThan(0);

  // Switching to the server applies at once: the next frames go to /api/recognize.
  await page.getByRole('radio', { name: 'On the server' }).check();
  await expect.poll(() => calls.length).toBeGreaterThan(0);
  await expect(page.getByTestId('analysed-on')).toContainText('The Lookout server');
  await expect(page.getByTestId('face-result').first()).toContainText(PERSON);
});

test('object detection runs in this browser and names the cat', async ({ page }) => {
  const calls = watchAnalysisCalls(page);
  await page.goto(`${lookout.url}/objects`);
  await expect(page.getByRole('radio', { name: 'In this browser' })).toBeChecked();
  await page.getByRole('radio', { name: 'Photo' }).check();
  await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, 'objects/chelsea.png'));
  const summary = page.getByTestId('object-summary');
  await expect(summary).toContainText('cat', { timeout: 60_000 });
  await expect(page.getByTestId('engine-status')).toContainText('Running in this browser');
  await screenshot(page, 'objects-in-browser-desktop');
  expect(calls).toEqual([]);
});

test('with the server stopped after the first load, a reload still recognises, and offline results reach the server once', async ({
  page,
}) => {
  // First load: the service worker installs (app + model files), the page loads the trained model.
  await page.goto(`${lookout.url}/recognize`);
  await page.evaluate('navigator.serviceWorker.ready.then(() => undefined)');
  if (!(await page.evaluate<boolean>('navigator.serviceWorker.controller !== null'))) await page.reload();
  await expect.poll(() => page.evaluate<boolean>('navigator.serviceWorker.controller !== null')).toBe(true);
  await expect(page.getByTestId('face-result').first()).toContainText(PERSON, { timeout: 60_000 });
  await expect(page.getByTestId('sync-status')).toContainText('All synced', { timeout: 20_000 });
  const before = (await storedResults()).length;

  await lookout.stop();
  // A new page load with the server gone: everything comes from this device.
  await page.reload();
  await expect(page.getByTestId('server-unreachable')).toBeVisible({ timeout: 20_000 });
  await expect(page.getByTestId('face-result').first()).toContainText(PERSON, { timeout: 60_000 });
  await expect(page.getByTestId('analysed-on')).toContainText('This device');
  await checkAccessibility(page, 'recognize-offline');
  await screenshot(page, 'recognize-offline-desktop');
  // The result seen offline waits on this device (a new page load always keeps its first result).
  await expect(page.getByTestId('sync-status')).toContainText(/waiting/, { timeout: 20_000 });

  await lookout.restart();
  await expect(page.getByTestId('sync-status')).toContainText('All synced', { timeout: 30_000 });
  const after = await storedResults();
  expect(after.length).toBeGreaterThan(before);
  expect(new Set(after.map((r) => r.id)).size).toBe(after.length);
  // Another sync cycle and a reload send nothing twice.
  await page.reload();
  await page.waitForTimeout(12_000);
  const later = await storedResults();
  expect(new Set(later.map((r) => r.id)).size).toBe(later.length);
});

test('offline, photos trained in this browser are recognised at once', async ({ page }) => {
  // Photos from files (the camera repeats one frame exactly, which LBPH's window 4..85 calls unknown).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-local-train-'));
  const files = (await trainingCaptures('faces/grace_hopper.jpg')).map((bytes, i) => {
    const file = path.join(dir, `capture-${i}.jpg`);
    fs.writeFileSync(file, bytes);
    return file;
  });
  await page.goto(`${lookout.url}/training`);
  await page.evaluate('navigator.serviceWorker.ready.then(() => undefined)');
  await lookout.stop();
  try {
    await page.reload();
    await expect(page.getByTestId('server-unreachable')).toBeVisible({ timeout: 20_000 });
    await page.getByLabel('Person’s name').fill('Kiosk Grace');
    await page.getByLabel('Or add photos from files').setInputFiles(files);
    const panel = page.getByTestId('browser-training');
    await panel.getByRole('button', { name: 'Train in this browser' }).click();
    await expect(panel).toContainText('Trained in this browser', { timeout: 60_000 });
    await expect(panel).toContainText('kiosk-grace');
    await checkAccessibility(page, 'training-in-browser-offline');
    await screenshot(page, 'training-in-browser-offline-desktop');
    // The app's own navigation (no page load): the same in-browser engine now knows her.
    await page.getByRole('link', { name: 'Live recognition' }).click();
    await expect(page.getByTestId('face-result').first()).toContainText('kiosk-grace', { timeout: 60_000 });
  } finally {
    await lookout.restart();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
