/**
 * "Train in this browser" (offline) sticks (#18 item 2): the model trained in the browser is kept on the device
 * (IndexedDB) and used by every page and tab, after a reload too, until the server has a model that replaces
 * it; the photos it learnt from are queued for the server without pressing Save; results naming the person
 * reach the server only after their photos; and the button, when disabled, says why.
 *
 * The server knows `grace` (trained from her portrait); the camera shows the same portrait, and the browser
 * learns it as `kiosk-grace` from files, so which model answered shows in the name on the page.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkAccessibility, expect, test, type BrowserContext, type Page } from './helpers/fixtures.js';
import { CHROMIUM_PATH, DESKTOP_VIEWPORT, fakeCameraArgs, slowFileDecoding } from './helpers/browser.js';
import { trainingCaptures, trainOnServer } from './helpers/engine-page.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { screenshot, startLookout, type Lookout } from './helpers/lookout.js';

const LOCAL = 'kiosk-grace';
const camera = await makeFakeCamera('faces/grace_hopper.jpg');
test.use({ viewport: DESKTOP_VIEWPORT, launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(camera) } });
test.describe.configure({ mode: 'serial' });

let lookout: Lookout;
let files: string[] = [];
let dir = '';
test.beforeAll(async () => {
  lookout = await startLookout();
  await trainOnServer(lookout, { grace: 'faces/grace_hopper.jpg' });
  // Photos from files (the camera repeats one frame exactly, which LBPH's window calls a copy, so unknown).
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-offline-train-'));
  files = (await trainingCaptures('faces/grace_hopper.jpg')).map((bytes, i) => {
    const file = path.join(dir, `capture-${i}.jpg`);
    fs.writeFileSync(file, bytes);
    return file;
  });
});
test.afterAll(async () => {
  await lookout?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Opens the app and waits until the service worker has installed and controls the page. */
async function installOffline(page: Page, pathname: string) {
  await page.goto(`${lookout.url}${pathname}`);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await page.evaluate('navigator.serviceWorker.ready.then(() => undefined)');
  const controlled = () => page.evaluate<boolean>('navigator.serviceWorker.controller !== null');
  if (!(await controlled())) await page.reload();
  await expect.poll(controlled).toBe(true);
}

/** Each capture thumbnail's status and what it says, for a failure message. */
async function thumbsNow(page: Page): Promise<string> {
  const thumbs = await page
    .getByTestId('capture-thumb')
    .evaluateAll((els) => els.map((e) => `${e.getAttribute('data-status')}: ${(e.textContent ?? '').replace(/\s+/g, ' ').trim()}`));
  return JSON.stringify(thumbs);
}

/** How many records an IndexedDB store of the app holds (a string: this project's e2e code has no DOM types). */
function storeCount(page: Page, db: string, store: string): Promise<number> {
  return page.evaluate<number>(`(async ([name, store]) => {
    const db = await new Promise((resolve, reject) => {
      const req = indexedDB.open(name);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    try {
      if (!db.objectStoreNames.contains(store)) return 0;
      return await new Promise((resolve, reject) => {
        const req = db.transaction(store).objectStore(store).count();
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
    } finally {
      db.close();
    }
  })(${JSON.stringify([db, store])})`);
}

async function imageCount(label: string): Promise<number> {
  const res = await fetch(`${lookout.url}/api/images/${label}`);
  if (res.status === 404) return 0;
  const body = (await res.json()) as { count?: number; images?: unknown[] };
  return body.count ?? body.images?.length ?? 0;
}

/** Whether the server knows `label` by a typed display name (its photos were sent with one). */
async function knownByName(label: string): Promise<boolean> {
  const body = (await (await fetch(`${lookout.url}/api/labels`)).json()) as { details: { label: string; display_name?: string }[] };
  return body.details.some((d) => d.label === label && d.display_name && d.display_name !== label);
}

async function resultsNaming(label: string): Promise<number> {
  const res = await fetch(`${lookout.url}/api/results?limit=1000`);
  const body = (await res.json()) as { results: { faces?: { label: string }[] }[] };
  return body.results.filter((r) => r.faces?.some((f) => f.label === label)).length;
}

/** The order in which the server took photos and results naming `label` from the app's tabs. */
function watchUploads(context: BrowserContext, label: string): string[] {
  const sent: string[] = [];
  context.on('response', (res) => {
    const r = res.request();
    if (r.method() !== 'POST' || !res.ok()) return;
    const p = new URL(r.url()).pathname;
    if (p === '/api/images' && (r.postData() ?? '').includes(label)) sent.push('photo');
    if (p === '/api/results' && (r.postData() ?? '').includes(`"label":"${label}"`)) sent.push('result');
  });
  return sent;
}

const firstFace = (page: Page) => page.getByTestId('face-result').first();

/**
 * With the server stopped (after the app is installed), learns the files as `Kiosk Grace` in this browser: the
 * button is pressed as soon as it can be (enabled by the first photo read), and the training learns every file picked
 * before it. Pressed while files were still being read, it learnt the first photo only and queued those read by the
 * time it ended: the likely cause of the CI runs that saw 1 and 2 of 4 photos queued.
 */
async function trainOffline(page: Page): Promise<void> {
  await installOffline(page, '/training');
  await lookout.stop();
  await expect(page.getByTestId('server-unreachable')).toBeVisible({ timeout: 20_000 });
  await page.getByLabel('Person’s name').fill('Kiosk Grace');
  await page.getByLabel('Or add photos from files').setInputFiles(files);
  const panel = page.getByTestId('browser-training');
  await panel.getByRole('button', { name: 'Train in this browser' }).click();
  await expect(panel).toContainText('Trained in this browser', { timeout: 60_000 });
  await expect(panel).toContainText(`${LOCAL} from ${files.length} faces`);
  await expect(page.getByTestId('files-adding')).toHaveCount(0);
}

test('a disabled "Train in this browser" says why', async ({ page }) => {
  await installOffline(page, '/training');
  await lookout.stop();
  try {
    await expect(page.getByTestId('server-unreachable')).toBeVisible({ timeout: 20_000 });
    const train = page.getByTestId('browser-training').getByRole('button', { name: 'Train in this browser' });
    await expect(train).toBeDisabled();
    await expect(train).toHaveAccessibleDescription(/Take or add photos/);
    await page.getByLabel('Or add photos from files').setInputFiles(files);
    await expect(train).toBeDisabled();
    await expect(train).toHaveAccessibleDescription(/Type the person’s name/);
    await page.getByLabel('Person’s name').fill('Kiosk Grace');
    await expect(train).toBeEnabled();
    await expect(page.getByTestId('browser-training-reason')).toHaveCount(0);
  } finally {
    await lookout.restart();
  }
});

test('a model trained in this browser is used by Live recognition at once, after a reload and in another tab', async ({
  page,
  context,
}) => {
  test.setTimeout(180_000);
  try {
    await trainOffline(page);
    await checkAccessibility(page, 'training-in-browser-kept');
    await screenshot(page, 'training-in-browser-kept-desktop');

    // Live recognition (the app's own navigation) knows her at once.
    await page.getByRole('link', { name: 'Live recognition' }).click();
    await expect(firstFace(page)).toContainText(LOCAL, { timeout: 60_000 });

    // A reload with the server still away: the model is still there.
    await page.reload();
    await expect(page.getByTestId('server-unreachable')).toBeVisible({ timeout: 20_000 });
    await expect(firstFace(page)).toContainText(LOCAL, { timeout: 60_000 });
    expect(await storeCount(page, 'lookout-local-model', 'model')).toBe(1);
    await checkAccessibility(page, 'recognize-browser-model-after-reload');
    await screenshot(page, 'recognize-browser-model-after-reload-desktop');

    // The photos went to the offline queue, so none is left among the page's unsaved photos (the tray, #36), which a
    // reload would bring back (a CI run once saw the page below with photos on it; this says which store held them).
    await expect
      .poll(() => storeCount(page, 'lookout-tray', 'photos'), { timeout: 20_000, message: 'unsaved photos left in the tray' })
      .toBe(0);
    // The Training page, reloaded: what this browser knows, and (no photos on it) why the button is disabled.
    await page.goto(`${lookout.url}/training`);
    await expect(page.getByTestId('browser-model')).toContainText(LOCAL);
    await expect(page.getByTestId('browser-training').getByRole('button', { name: 'Train in this browser' })).toHaveAccessibleDescription(
      /Take or add photos/,
    );

    // Another tab, opened straight on Live recognition, uses it too.
    const second = await context.newPage();
    await second.goto(`${lookout.url}/recognize`);
    await expect(firstFace(second)).toContainText(LOCAL, { timeout: 60_000 });
    await second.close();
  } finally {
    await lookout.restart();
  }
  // The photos learnt here were queued for the server: they are delivered before the next test counts hers, or one
  // still in flight lands in its count (it saw 5 where 4 were expected). A delivered photo leaves the queue.
  await expect.poll(() => storeCount(page, 'lookout-offline', 'captures'), { timeout: 30_000 }).toBe(0);
});

test('its photos are queued without Save and reach the server before any result naming her; the server’s next model replaces it', async ({
  page,
  context,
}) => {
  test.setTimeout(180_000);
  const sent = watchUploads(context, LOCAL);
  // Counted first: the test before may have left some of hers on the server.
  const [images, results, named] = await Promise.all([imageCount(LOCAL), resultsNaming(LOCAL), knownByName(LOCAL)]);
  // Offline, a face is shown by the name the server last gave that person, else by the label. The test before may
  // still be delivering her photos as this one starts (its tab syncs once the server is back), so the server may give
  // her a name between this count and this tab's model check: the label or that name, never anyone else's.
  const shownOffline = named ? 'Kiosk Grace' : new RegExp(`${LOCAL}|Kiosk Grace`);
  await slowFileDecoding(page, 700);
  try {
    await trainOffline(page);
    // The photos wait for the server without Save being pressed.
    await expect(page.getByTestId('capture-thumb').first()).toHaveAttribute('data-status', 'queued');
    // Queued one by one, each checked first (#36: a picked face on its own): the first thumbnail may say so well
    // before the last photo is stored. A clean-clone CI run saw 1 of 4 after the default 20 s; the test has 180 s.
    // A clean-clone CI run (stop 44) saw 2 of 4 after 60 s, likely the race trainOffline now pins. A failure says what
    // each thumbnail showed (its status, check line and error): a photo held by its check, or one that failed to queue.
    await expect
      .poll(() => storeCount(page, 'lookout-offline', 'captures'), { timeout: 60_000 })
      .toBe(files.length)
      .catch(async (err: Error) => {
        throw new Error(`${err.message}\nthe thumbnails then: ${await thumbsNow(page)}`);
      });
    await expect(page.getByRole('button', { name: /^Save \d/ })).toHaveCount(0);
    // A result naming her waits on this device.
    await page.getByRole('link', { name: 'Live recognition' }).click();
    await expect(firstFace(page)).toContainText(shownOffline, { timeout: 60_000 });
    await expect.poll(() => storeCount(page, 'lookout-offline', 'results'), { timeout: 20_000 }).toBeGreaterThan(0);
  } finally {
    await lookout.restart();
  }

  // The server back: her photos first, then the results naming her.
  await expect.poll(() => imageCount(LOCAL), { timeout: 30_000 }).toBe(images + files.length);
  await expect.poll(() => resultsNaming(LOCAL), { timeout: 30_000 }).toBeGreaterThan(results);
  await expect.poll(() => sent.includes('result')).toBe(true); // the answer may reach the test after the server stored it
  expect(sent.indexOf('result')).toBeGreaterThan(sent.lastIndexOf('photo'));
  // The server's model is older and does not know her: the one trained here stays. Her photos took the name typed
  // for them to the server, so the page now shows it rather than the label.
  await expect(page.getByTestId('server-unreachable')).toHaveCount(0, { timeout: 15_000 });
  await expect(firstFace(page)).toContainText('Kiosk Grace');
  expect(await storeCount(page, 'lookout-local-model', 'model')).toBe(1);

  // The server trains with her photos: its model replaces the one kept in the browser.
  const trained = await fetch(`${lookout.url}/api/train`, { method: 'POST' });
  expect(trained.status).toBe(200);
  await expect.poll(() => storeCount(page, 'lookout-local-model', 'model'), { timeout: 30_000 }).toBe(0);
});
