/**
 * The Live recognition page against the real server: a person trained through the API is recognised on
 * Chromium's fake camera (which plays her photo), frame after frame with never more than one request in
 * flight; a group photo gets a grid of face cards; an unreachable server keeps the last result on screen.
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkAccessibility, expect, test, type Page } from './helpers/fixtures.js';
import sharp from 'sharp';
import { CHROMIUM_PATH, fakeCameraArgs, PHONE_VIEWPORT, analyseOnServer } from './helpers/browser.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { screenshot, startLookout, TESTDATA, type Lookout, uploadCaptures } from './helpers/lookout.js';

const PERSON = 'grace';
const PERSON_PHOTO = 'faces/grace_hopper.jpg';
/** A group photo in which the Haar cascade finds 7 faces. */
const GROUP_PHOTO = path.join(TESTDATA, 'faces/sample5.jpg');

const y4m = await makeFakeCamera(PERSON_PHOTO);
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(y4m) } });
// These tests are about the server path; browser-first.spec.ts covers the in-browser one.
test.beforeEach(async ({ page }) => analyseOnServer(page));

let lookout: Lookout;

async function recognize(image: Buffer): Promise<{ faces: { label: string; confidence: number }[] }> {
  const res = await fetch(`${lookout.url}/api/recognize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ image: image.toString('base64') }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { faces: { label: string; confidence: number }[] };
}

test.beforeAll(async () => {
  lookout = await startLookout();
  // Training captures as a person would take them: the photo, mirrored, a little brighter and darker.
  const original = fs.readFileSync(path.join(TESTDATA, PERSON_PHOTO));
  await uploadCaptures(lookout.url, PERSON, original);
  const train = await fetch(`${lookout.url}/api/train`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(train.status, await train.text()).toBe(200);
  // The camera shows the photo letterboxed to 640x480: check the server finds and knows the face in that frame.
  const frame = await sharp(original)
    .resize(640, 480, { fit: 'contain', background: { r: 0, g: 0, b: 0 } })
    .jpeg()
    .toBuffer();
  const r = await recognize(frame);
  expect(r.faces.map((f) => f.label)).toContain(PERSON);
});

test.afterAll(async () => {
  await lookout?.close();
});

/** Counts /api/recognize requests and the most that were ever in flight at once. */
function trackRecognizeRequests(page: Page) {
  const stats = { started: 0, inFlight: 0, maxInFlight: 0 };
  const isRecognize = (url: string, method: string) => method === 'POST' && new URL(url).pathname === '/api/recognize';
  page.on('request', (r) => {
    if (!isRecognize(r.url(), r.method())) return;
    stats.started++;
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
  });
  const done = (r: import('@playwright/test').Request) => {
    if (isRecognize(r.url(), r.method())) stats.inFlight--;
  };
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  return stats;
}

async function fps(page: Page): Promise<number> {
  return Number.parseFloat((await page.getByTestId('fps').textContent()) ?? '') || 0;
}

test('the camera recognises the trained person continuously, one request at a time', async ({ page }) => {
  const stats = trackRecognizeRequests(page);
  await page.goto(`${lookout.url}/recognize`);
  await expect(page.getByRole('heading', { name: 'Live recognition' })).toBeVisible();
  await expect(page.getByRole('radio', { name: 'Camera' })).toBeChecked();

  const face = page.getByTestId('face-result').first();
  await expect(face).toContainText(PERSON);
  await expect(face).toContainText(/\d+%/);
  await expect.poll(() => fps(page), { message: 'the frame-rate counter shows a rate' }).toBeGreaterThan(0);
  await expect(page.getByTestId('detection-method')).toContainText('Local');
  await expect(page.getByTestId('recognition-model')).toContainText('LBPH');
  await expect(page.getByTestId('not-trained')).toHaveCount(0);
  // The overlay has the camera frame's own size.
  await expect(page.locator('canvas.stage-overlay')).toHaveJSProperty('width', 640);

  await expect.poll(() => stats.started, { message: 'frames keep being analysed' }).toBeGreaterThanOrEqual(6);
  expect(stats.maxInFlight).toBe(1);
  await checkAccessibility(page, 'recognize');
  await screenshot(page, 'recognize-desktop');

  // Leaving the page stops the loop.
  await page.getByRole('link', { name: 'Dashboard' }).click();
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  const after = stats.started;
  await page.waitForTimeout(1500);
  expect(stats.started - after).toBeLessThanOrEqual(1);
});

test('an unreachable server keeps the last result and the camera asks again when it is back', async ({ page }) => {
  await page.goto(`${lookout.url}/recognize`);
  await expect(page.getByTestId('face-result').first()).toContainText(PERSON);
  await lookout.stop();
  try {
    const err = page.getByTestId('analysis-error');
    await expect(err).toContainText('Cannot reach the Lookout server');
    await expect(err).toContainText('trying again every 2 seconds');
    await expect(page.getByTestId('face-result').first()).toContainText(PERSON);
  } finally {
    await lookout.restart();
  }
  await expect(page.getByTestId('analysis-error')).toHaveCount(0, { timeout: 30_000 });
  await expect.poll(() => fps(page)).toBeGreaterThan(0);
});

test.describe('on a phone', () => {
  test.use({ viewport: PHONE_VIEWPORT, isMobile: true, hasTouch: true });
  test('the live page fits a phone screen', async ({ page }) => {
    await page.goto(`${lookout.url}/recognize`);
    await expect(page.getByTestId('face-result').first()).toContainText(PERSON);
    await expect.poll(() => fps(page)).toBeGreaterThan(0);
    const overflow = await horizontalOverflow(page);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'recognize-phone');
  });
});

test('a group photo gets a grid of face cards', async ({ page }) => {
  const stats = trackRecognizeRequests(page);
  await page.goto(`${lookout.url}/recognize`);
  await page.getByRole('radio', { name: 'Photo' }).check();
  await page.getByLabel('Upload a photo').setInputFiles(GROUP_PHOTO);

  await expect(page.getByTestId('face-grid')).toBeVisible();
  const cards = page.getByTestId('face-card');
  await expect.poll(() => cards.count()).toBeGreaterThanOrEqual(3);
  for (let i = 0; i < 3; i++) {
    const card = cards.nth(i);
    await expect(card).toContainText(/unknown|grace/);
    // #36: a named face shows its figure, an unknown one none ("unknown 0% match" read as a score).
    if (/unknown/.test(await card.innerText())) await expect(card).not.toContainText('%');
    else await expect(card).toContainText(/\d+% match/);
    await expect(card).toContainText(/\d+ x \d+ px/);
    // The crop is a piece of the photo, not an empty canvas.
    await expect(card.locator('canvas')).not.toHaveJSProperty('width', 0);
  }
  expect(await page.getByTestId('face-result').count()).toBe(await cards.count());
  // The camera is off in photo mode: the one photo was sent once, nothing after it.
  await page.waitForTimeout(1000);
  const photoRequests = stats.started;
  await page.waitForTimeout(1500);
  expect(stats.started).toBe(photoRequests);
  await screenshot(page, 'recognize-grid-desktop');
});

test('an untrained server says that every face is unknown', async ({ page }) => {
  const fresh = await startLookout();
  try {
    await page.goto(`${fresh.url}/recognize`);
    await page.getByRole('radio', { name: 'Photo' }).check();
    await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, PERSON_PHOTO));
    await expect(page.getByTestId('face-result').first()).toContainText('unknown');
    const notice = page.getByTestId('not-trained');
    await expect(notice).toContainText('Not trained yet: every face is unknown.');
    await expect(notice.getByRole('link', { name: 'Train on the Training page' })).toHaveAttribute('href', '/training');
  } finally {
    await fresh.close();
  }
});

/** How far the page is wider than the screen (0 when nothing needs sideways scrolling). */
function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}
