/**
 * The Object detection page against the real server: uploaded photos get boxes and a count per class, the
 * fake camera playing a street photo is analysed live, the confidence slider goes with each request, and a
 * server with object detection switched off says so.
 */
import path from 'node:path';
import { expect, test, type Page } from './helpers/fixtures.js';
import { CHROMIUM_PATH, fakeCameraArgs, PHONE_VIEWPORT, analyseOnServer } from './helpers/browser.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { screenshot, startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

const y4m = await makeFakeCamera('objects/pexels_double_decker_bus.jpg');
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(y4m) } });
// These tests are about the server path; browser-first.spec.ts covers the in-browser one.
test.beforeEach(async ({ page }) => analyseOnServer(page));

let lookout: Lookout;

test.beforeAll(async () => {
  lookout = await startLookout();
  // The detector loads on the first request (#38 2); a test that starts only once it can answer fails for the
  // right reason.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const s = (await (await fetch(`${lookout.url}/api/objects/status`)).json()) as { state: string; reason?: string };
    // #38 2: `not_loaded` loads on the first request, which waits for it.
    if (s.state === 'ready' || s.state === 'not_loaded') break;
    if (s.state !== 'loading' || Date.now() > deadline)
      throw new Error(`object detector ${s.state}: ${s.reason ?? ''}\n${lookout.output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
});

test.afterAll(async () => {
  await lookout?.close();
});

/** How many pixels of the overlay are drawn on (boxes and labels). */
function overlayInk(page: Page): Promise<number> {
  return page.locator('canvas.stage-overlay').evaluate((el) => {
    // The e2e build has no DOM types: say just what is used of the canvas.
    const c = el as unknown as {
      width: number;
      height: number;
      getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } };
    };
    const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
    return n;
  });
}

async function uploadPhoto(page: Page, file: string) {
  await page.getByRole('radio', { name: 'Photo' }).check();
  await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, file));
}

test('the camera picture is analysed live and the bus is counted', async ({ page }) => {
  await page.goto(`${lookout.url}/objects`);
  await expect(page.getByRole('heading', { name: 'Object detection' })).toBeVisible();
  await expect(page.getByRole('radio', { name: 'Camera' })).toBeChecked();
  const summary = page.getByTestId('object-summary');
  await expect(summary).toContainText('bus');
  await expect(summary).toContainText(/Total: \d+ objects?/);
  await expect.poll(() => overlayInk(page)).toBeGreaterThan(0);
  await expect.poll(async () => Number.parseFloat((await page.getByTestId('fps').textContent()) ?? '') || 0).toBeGreaterThan(0);
  await screenshot(page, 'objects-desktop');
});

test('an uploaded photo of a cat gets a box and "cat" in the summary, with the slider sent along', async ({ page }) => {
  await page.goto(`${lookout.url}/objects`);
  // The slider starts at the server's default confidence (0.4).
  const slider = page.getByLabel('Minimum confidence');
  await expect(slider).toHaveValue('0.4');
  await expect(page.getByTestId('confidence-value')).toHaveText('40%');

  const first = page.waitForRequest(
    (r) => r.url().endsWith('/api/objects/detect') && r.postDataJSON().confidence === 0.4 && r.postDataJSON().image.length > 0,
  );
  await page.getByRole('radio', { name: 'Photo' }).check();
  await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, 'objects/chelsea.png'));
  await first;
  const summary = page.getByTestId('object-summary');
  await expect(summary).toContainText('cat');
  await expect(summary).toContainText('Total: 1 object');
  await expect.poll(() => overlayInk(page)).toBeGreaterThan(0);

  // Moving the slider analyses the photo again at the new confidence.
  const again = page.waitForRequest((r) => r.url().endsWith('/api/objects/detect') && r.postDataJSON().confidence === 0.9);
  await slider.focus();
  await page.keyboard.press('End');
  await again;
  await expect(page.getByTestId('confidence-value')).toHaveText('90%');
});

test('a motorbike is found and named in the darknet spelling', async ({ page }) => {
  await page.goto(`${lookout.url}/objects`);
  await uploadPhoto(page, 'objects/motorcycle_left.png');
  await expect(page.getByTestId('object-summary')).toContainText('motorbike');
});

test('a photo without objects says so', async ({ page }) => {
  await page.goto(`${lookout.url}/objects`);
  await uploadPhoto(page, 'negatives/brick.png');
  await expect(page.getByTestId('object-summary')).toContainText('No objects found');
});

test.describe('on a phone', () => {
  test.use({ viewport: PHONE_VIEWPORT, isMobile: true, hasTouch: true });
  test('the page fits a phone screen', async ({ page }) => {
    await page.goto(`${lookout.url}/objects`);
    await uploadPhoto(page, 'objects/pexels_double_decker_bus.jpg');
    await expect(page.getByTestId('object-summary')).toContainText('bus');
    const overflow = await horizontalOverflow(page);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'objects-phone');
  });
});

test('a server with object detection switched off says so', async ({ page }) => {
  const off = await startLookout({ OBJECT_DETECTION_ENABLED: 'false' });
  try {
    await page.goto(`${off.url}/objects`);
    await expect(page.getByText('Object detection is switched off on this server')).toBeVisible();
    // Nothing to analyse with: no camera, no upload.
    await expect(page.getByLabel('Upload a photo')).toHaveCount(0);
    await expect(page.locator('video')).toHaveCount(0);
  } finally {
    await off.close();
  }
});

/** How far the page is wider than the screen (0 when nothing needs sideways scrolling). */
function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}
