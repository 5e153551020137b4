/**
 * Issue #18 items 1 and 6 on the Live recognition page: every unknown face says why in words (not trained yet, no
 * match, an exact copy of a training photo), on the server and in this browser; identical unknown faces are one
 * entry, opened on demand; labels on the photo stay readable on a phone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from './helpers/fixtures.js';
import sharp from 'sharp';
import { analyseOnServer, CHROMIUM_PATH, fakeCameraArgs, PHONE_VIEWPORT } from './helpers/browser.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { screenshot, startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

const camera = await makeFakeCamera('faces/grace_hopper.jpg');
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(camera) } });
test.describe.configure({ mode: 'serial' });

/** A group photo in which the Haar cascade finds several faces. */
const GROUP_PHOTO = path.join(TESTDATA, 'faces/sample5.jpg');
/** A portrait as PNG without a colour profile: the browser and the server decode it to the very same pixels. */
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-reasons-'));
const PORTRAIT_PNG = path.join(tmp, 'eileen.png');
fs.writeFileSync(PORTRAIT_PNG, await sharp(path.join(TESTDATA, 'faces/astronaut.png')).png().toBuffer());

const COPY_TEXT = 'This looks like an exact copy of a training photo; Lookout does not accept copies. Show a live face.';

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout();
});
test.afterAll(async () => {
  await lookout?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function openPhoto(page: Page, file: string) {
  await page.goto(`${lookout.url}/recognize`);
  await page.getByRole('radio', { name: 'Photo' }).check();
  await page.getByLabel('Upload a photo').setInputFiles(file);
}

test('before training, an unknown face says the model is not trained yet, on the server', async ({ page }) => {
  await analyseOnServer(page);
  await openPhoto(page, path.join(TESTDATA, 'faces/grace_hopper.jpg'));
  const reason = page.getByTestId('face-result').first().getByTestId('face-reason');
  await expect(reason).toHaveText('Not recognised: the model has not been trained yet.');
  await expect(reason).toHaveAttribute('data-reason', 'not_trained');
});

test('before training, an unknown face says the model is not trained yet, in this browser', async ({ page }) => {
  const calls: string[] = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/recognize') calls.push(r.url());
  });
  await openPhoto(page, path.join(TESTDATA, 'faces/grace_hopper.jpg'));
  const reason = page.getByTestId('face-result').first().getByTestId('face-reason');
  await expect(reason).toHaveAttribute('data-reason', 'not_trained', { timeout: 60_000 });
  await expect(reason).toHaveText('Not recognised: the model has not been trained yet.');
  expect(calls).toEqual([]);
});

test('identical unknown faces are one entry in the list and in the grid, opened on demand', async ({ page }) => {
  await analyseOnServer(page);
  await openPhoto(page, GROUP_PHOTO);
  const group = page.getByTestId('face-group');
  await expect(group).toHaveCount(1);
  const summary = group.getByTestId('face-group-summary');
  await expect(summary).toHaveText(/^(\d+) unknown faces Not recognised: the model has not been trained yet\.$/);
  const n = Number((await summary.textContent())!.match(/^\d+/)![0]);
  expect(n).toBeGreaterThanOrEqual(3);
  // One line until opened: the faces are in it, hidden.
  const lines = page.getByTestId('face-result');
  await expect(lines).toHaveCount(n);
  await expect(lines.first()).toBeHidden();
  await summary.click();
  for (let i = 0; i < n; i++) await expect(lines.nth(i)).toBeVisible();

  // The grid of cards: one group too, its cards shown once it is opened (with the keyboard here).
  const cardGroup = page.getByTestId('face-card-group');
  await expect(cardGroup).toHaveCount(1);
  const cards = page.getByTestId('face-card');
  await expect(cards).toHaveCount(n);
  await expect(cards.first()).toBeHidden();
  await cardGroup.getByTestId('face-group-summary').focus();
  await page.keyboard.press('Enter');
  for (let i = 0; i < n; i++) await expect(cards.nth(i)).toBeVisible();
  await screenshot(page, 'recognize-unknown-group-desktop');
});

test('on a phone the labels on the photo are at least 12 CSS pixels high', async ({ page }) => {
  await page.setViewportSize(PHONE_VIEWPORT);
  await analyseOnServer(page);
  // Every label text drawn on an overlay: its font size in canvas pixels, and the canvas's drawn and shown widths.
  await page.addInitScript(`(() => {
    const fillText = CanvasRenderingContext2D.prototype.fillText;
    window.__labels = [];
    CanvasRenderingContext2D.prototype.fillText = function (...args) {
      const c = this.canvas;
      if (c.classList && c.classList.contains('stage-overlay')) {
        window.__labels.push({ px: parseFloat(/(\\d+(?:\\.\\d+)?)px/.exec(this.font)[1]), width: c.width, shown: c.getBoundingClientRect().width });
      }
      return fillText.apply(this, args);
    };
  })()`);
  await openPhoto(page, GROUP_PHOTO);
  await expect(page.getByTestId('face-group')).toHaveCount(1);
  const labels = await page.evaluate<{ px: number; width: number; shown: number }[]>('window.__labels');
  expect(labels.length).toBeGreaterThanOrEqual(3);
  for (const l of labels) {
    expect(l.shown).toBeGreaterThan(0);
    expect(l.shown).toBeLessThan(l.width); // the 1920-pixel photo is shown much smaller
    // Rounded to whole canvas pixels: within one of 12 CSS pixels.
    expect((l.px * l.shown) / l.width, JSON.stringify(l)).toBeGreaterThanOrEqual(12 - l.shown / l.width);
  }
  await screenshot(page, 'recognize-labels-phone');
});

test('trained from the camera, the same still camera picture is called a copy of a training photo, on the server', async ({ page }) => {
  await analyseOnServer(page);
  await page.goto(`${lookout.url}/training`);
  await page.getByLabel('Person’s name').fill('Grace Hopper');
  const take = page.getByTestId('training-camera').getByRole('button', { name: 'Take photo' });
  for (let i = 1; i <= 3; i++) {
    await take.click();
    await expect(page.getByTestId('capture-thumb')).toHaveCount(i);
  }
  await page.getByRole('button', { name: 'Train the model' }).click();
  await expect(page.getByTestId('train-summary')).toContainText('Lookout now knows 1 person');

  // Chromium's fake camera repeats one frame: the live picture is pixel for pixel a training photo.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Live recognition' }).click();
  const face = page.getByTestId('face-result').first();
  await expect(face).toContainText('unknown', { timeout: 30_000 });
  await expect(face.getByTestId('face-reason')).toHaveText(COPY_TEXT);
  await expect(face.getByTestId('face-reason')).toHaveAttribute('data-reason', 'copy_of_training_image');
  await screenshot(page, 'recognize-copy-desktop');
});

test('in this browser, the very photo trained on is called a copy of a training photo too', async ({ page }) => {
  const form = new FormData();
  form.set('label', 'eileen');
  form.set('file', new Blob([fs.readFileSync(PORTRAIT_PNG)], { type: 'image/png' }), 'eileen.png');
  expect((await fetch(`${lookout.url}/api/images`, { method: 'POST', body: form })).status).toBe(200);
  expect((await fetch(`${lookout.url}/api/train`, { method: 'POST' })).status).toBe(200);

  await openPhoto(page, PORTRAIT_PNG);
  const face = page.getByTestId('face-result').first();
  await expect(face.getByTestId('face-reason')).toHaveAttribute('data-reason', 'copy_of_training_image', { timeout: 60_000 });
  await expect(face.getByTestId('face-reason')).toHaveText(COPY_TEXT);
  await expect(page.getByTestId('analysed-on')).toContainText('This device');
});
