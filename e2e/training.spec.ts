/**
 * The training page end to end, through what a person sees: a name, photos from Chromium's fake webcam
 * (playing grace_hopper.jpg, where the server's Haar cascade finds exactly one face), removing a bad shot,
 * full-screen capture, saving, training with progress and a summary, the dashboard and live recognition
 * afterwards, then checking and deleting the person.
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkAccessibility, chromium, expect, test, type Page } from './helpers/fixtures.js';
import { CHROMIUM_PATH, DESKTOP_VIEWPORT, fakeCameraArgs, PHONE_VIEWPORT, slowFileDecoding } from './helpers/browser.js';
import { trainingCaptures } from './helpers/engine-page.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { screenshot, SCREENSHOTS, startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

const camera = await makeFakeCamera('faces/grace_hopper.jpg');
// The same face framed differently, for the recognition check (see that test for why).
const otherFraming = await makeFakeCamera('faces/grace_hopper.jpg', 800, 600);

test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(camera) } });
test.describe.configure({ mode: 'serial' });

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout();
});
test.afterAll(async () => {
  await lookout.close();
});

/** The names the server gives the faces of a photo (POST /api/recognize, as an API client sends it). */
async function namesOnServer(photo: string): Promise<(string | null)[]> {
  const res = await fetch(`${lookout.url}/api/recognize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ image: fs.readFileSync(path.join(TESTDATA, photo)).toString('base64') }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { faces: { label: string | null }[] }).faces.map((f) => f.label);
}

async function openTraining(page: Page) {
  await page.goto(`${lookout.url}/training`);
  await expect(page.getByRole('heading', { name: 'Training', level: 1 })).toBeVisible();
  // The page starts the camera by itself; the shutter works once there is a picture.
  await expect(page.getByRole('button', { name: 'Take photo' })).toBeEnabled();
}

test('a person is named, photographed, saved and trained, then shown on the dashboard', async ({ page }) => {
  const uploads: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/api/images')) uploads.push(r.url());
  });
  await openTraining(page);
  await expect(page.getByTestId('training-labels-empty')).toContainText('Nobody has been added yet');

  const name = page.getByLabel('Person’s name');
  const take = page.getByTestId('training-camera').getByRole('button', { name: 'Take photo' });
  const thumbs = page.getByTestId('capture-thumb');

  await take.click();
  await expect(thumbs).toHaveCount(1);

  // A name that is not a safe label is refused in words, and nothing is sent.
  await name.fill('grace..hopper');
  await expect(page.getByTestId('name-error')).toHaveText('The name must not start with "." or contain "..".');
  await expect(name).toHaveAttribute('aria-invalid', 'true');
  await name.fill('ada/lovelace');
  await expect(page.getByTestId('name-error')).toContainText('The name must not contain /');
  await page.getByRole('button', { name: 'Save 1 photo' }).click();
  await expect(page.getByTestId('save-message')).toContainText('Nothing was sent.');
  await expect(name).toBeFocused();
  expect(uploads).toHaveLength(0);

  // The stored form of the name is shown as it is typed.
  await name.fill('  Grace Hopper ');
  await expect(page.getByTestId('name-error')).toHaveCount(0);
  await expect(page.getByTestId('label-preview')).toHaveText('Will be saved as grace-hopper');

  await take.click();
  await expect(thumbs).toHaveCount(2);
  await take.click();
  await expect(thumbs).toHaveCount(3);
  await expect(page.getByTestId('capture-count')).toHaveText('(3 photos)');
  await expect(page.getByRole('img', { name: 'Capture 3' })).toBeVisible();
  // The fake webcam has no torch, so no flash switch is offered.
  await expect(page.getByRole('button', { name: /^Flash/ })).toHaveCount(0);
  await checkAccessibility(page, 'training');
  await screenshot(page, 'training-desktop');

  // A bad shot is removed before it is sent; the rest renumber.
  await page.getByRole('button', { name: 'Remove image 2' }).click();
  await expect(thumbs).toHaveCount(2);
  await expect(page.getByRole('button', { name: 'Remove image 3' })).toHaveCount(0);

  // Full-screen capture: a shutter and an exit inside the picture; Escape leaves.
  await page.getByRole('button', { name: 'Full screen' }).click();
  const controls = page.getByTestId('fullscreen-controls');
  await expect(controls).toBeVisible();
  await expect(controls.getByRole('button', { name: 'Exit full screen' })).toBeVisible();
  expect(
    await page.evaluate<boolean>(
      `!!document.fullscreenElement?.classList.contains('stage') || !!document.querySelector('.stage.fullscreen')`,
    ),
  ).toBe(true);
  await controls.getByRole('button', { name: 'Take photo' }).click();
  await expect(controls).toContainText('3 photos taken');
  await expect(page.locator('.training-flash.on')).toHaveCount(0); // the shutter's white flash has faded
  // What the screen shows (a full-page capture would stretch the page behind the full-screen stage).
  await page.screenshot({ path: path.join(SCREENSHOTS, 'training-fullscreen-desktop.png') });
  await page.keyboard.press('Escape');
  await expect(controls).toHaveCount(0);
  expect(await page.evaluate<boolean>(`document.fullscreenElement === null && !document.querySelector('.stage.fullscreen')`)).toBe(true);
  await expect(thumbs).toHaveCount(3);

  // Saving: each photo reports its own status.
  await page.getByRole('button', { name: 'Save 3 photos' }).click();
  await expect(page.getByTestId('capture-status').filter({ hasText: 'Saved' })).toHaveCount(3);
  await expect(page.getByTestId('save-message')).toContainText('Saved 3 photos as grace-hopper (“Grace Hopper”)');
  expect(uploads).toHaveLength(3);
  await expect(page.getByTestId('training-label').filter({ hasText: 'grace-hopper' })).toContainText('3 images');

  // Training: a progress bar while it runs (kept, full, when it ends), then the summary.
  await page.getByRole('button', { name: 'Train the model' }).click();
  const progress = page.getByRole('progressbar');
  await expect(progress.first()).toBeVisible();
  await expect(page.getByText('Processed 3 of 3 images')).toBeVisible();
  const summary = page.getByTestId('train-summary');
  await expect(summary).toContainText('Training finished');
  await expect(summary).toContainText('Lookout now knows 1 person, learnt from 3 faces');
  // The name as typed, not the stored label (#36: `albert-einstein`).
  await expect(summary.getByRole('row', { name: 'Grace Hopper 3' })).toBeVisible();
  await expect(page.getByTestId('train-skipped')).toHaveCount(0);
  await expect(page.getByTestId('training-label').filter({ hasText: 'grace-hopper' })).toContainText('Trained');
  await checkAccessibility(page, 'training-summary');
  await screenshot(page, 'training-summary-desktop');

  // The dashboard shows the person, their image count, and the trained model.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboard' }).click();
  await expect(page.getByTestId('indicator-trained')).toContainText('Trained');
  await expect(page.getByTestId('indicator-trained')).not.toContainText('Not trained');
  await expect(page.getByTestId('labels-table').getByRole('row', { name: /Grace Hopper \(grace-hopper\)\s+3\s+Yes/ })).toBeVisible();
});

test('live recognition then names the trained person', async () => {
  // Chromium's fake webcam repeats one frame exactly, so a frame captured for recognition would be pixel for
  // pixel a training photo: LBPH distance 0, which the spec's window (known iff 4 <= distance <= 85) calls
  // unknown. A real camera never repeats a frame; a second browser whose camera shows the same photo framed
  // differently (800x600) plays that part.
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: fakeCameraArgs(otherFraming) });
  try {
    const page = await browser.newPage({ viewport: DESKTOP_VIEWPORT });
    await page.goto(`${lookout.url}/recognize`);
    const face = page.getByTestId('face-result').first();
    // The name as it was typed on the training page; the label stays the identifier.
    await expect(face).toContainText('Grace Hopper', { timeout: 30_000 });
    await expect(face).toContainText(/\d+(\.\d+)?%/);
    await checkAccessibility(page, 'recognize-named');
  } finally {
    await browser.close();
  }
});

test('on a phone the page fits one column, and photos can come from files', async ({ page }) => {
  await page.setViewportSize(PHONE_VIEWPORT);
  await openTraining(page);
  await page.getByLabel('Person’s name').fill('Ada Lovelace');
  await page.getByTestId('training-camera').getByRole('button', { name: 'Take photo' }).click();
  await page.getByLabel('Or add photos from files').setInputFiles(path.join(TESTDATA, 'faces/astronaut.png'));
  await expect(page.getByTestId('capture-thumb')).toHaveCount(2);
  await expect(page.getByRole('img', { name: 'Capture 2 (from a file)' })).toBeVisible();
  // Nothing sticks out sideways.
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE_VIEWPORT.width);
  // Name comes first on a phone, then the camera.
  const nameBox = await page.getByLabel('Person’s name').boundingBox();
  const cameraBox = await page.getByTestId('training-camera').boundingBox();
  expect(nameBox!.y).toBeLessThan(cameraBox!.y);
  await screenshot(page, 'training-phone');
  // Not saved: leaving the page drops these two photos, and the server has still one person.
});

test('a person’s images can be viewed, and the person deleted after confirming', async ({ page }) => {
  // Trained: the server names her.
  expect(await namesOnServer('faces/grace_hopper.jpg')).toEqual(['grace-hopper']);
  await page.goto(`${lookout.url}/training`);
  const row = page.getByTestId('training-label').filter({ hasText: 'grace-hopper' });
  await expect(row).toContainText('3 images');

  await row.getByRole('button', { name: 'View images of Grace Hopper' }).click();
  const images = row.getByRole('list', { name: 'Images of Grace Hopper' }).getByRole('img');
  await expect(images).toHaveCount(3);
  await expect(images.first()).toHaveAttribute('alt', 'Grace Hopper, 1 of 3');
  // The thumbnails really load from the server.
  await expect
    .poll(() => images.evaluateAll((els) => els.every((e) => (e as unknown as { naturalWidth: number }).naturalWidth > 0)))
    .toBe(true);
  await checkAccessibility(page, 'training-images-shown');
  await row.getByRole('button', { name: 'Hide images of Grace Hopper' }).click();
  await expect(images).toHaveCount(0);

  // Delete asks first; Cancel (focused, and Escape) keeps everything.
  await row.getByRole('button', { name: 'Delete Grace Hopper' }).click();
  const confirm = page.getByRole('alertdialog');
  await expect(confirm).toContainText('Delete Grace Hopper and all 3 photos? This cannot be undone.');
  await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await checkAccessibility(page, 'training-delete-confirm');
  await page.keyboard.press('Escape');
  await expect(confirm).toHaveCount(0);
  await expect(row.getByRole('button', { name: 'Delete Grace Hopper' })).toBeFocused();

  await row.getByRole('button', { name: 'Delete Grace Hopper' }).click();
  await page.getByRole('alertdialog').getByRole('button', { name: 'Yes, delete Grace Hopper' }).click();
  const deleted = page.getByTestId('label-deleted');
  await expect(deleted).toContainText('Deleted Grace Hopper (grace-hopper)');
  // Removed everywhere, her samples in the trained models too: no retraining needed.
  await expect(page.getByTestId('label-deleted-removed')).toHaveText(
    /^Removed everywhere: 3 photos, \d+ samples in the trained models(, .+)?\.$/,
  );
  await expect(deleted).toContainText('The trained models no longer know Grace Hopper: no retraining needed.');
  await expect(deleted).not.toContainText('still recognises');
  // And so it is, with no training since: the server no longer names her.
  expect(await namesOnServer('faces/grace_hopper.jpg')).not.toContain('grace-hopper');
  await expect(page.getByTestId('training-labels-empty')).toContainText('Nobody has been added yet');
  await expect(page.getByTestId('training-label')).toHaveCount(0);
});

test('while the server is unreachable photos are kept on the device, then sent when it is back', async ({ page }) => {
  await openTraining(page);
  await page.getByLabel('Person’s name').fill('Katherine Johnson');
  const take = page.getByTestId('training-camera').getByRole('button', { name: 'Take photo' });
  await take.click();
  await take.click();
  await expect(page.getByTestId('capture-thumb')).toHaveCount(2);

  await lookout.stop();
  try {
    await page.getByRole('button', { name: 'Save 2 photos' }).click();
    await expect(page.getByTestId('capture-status').filter({ hasText: 'Kept on this device' })).toHaveCount(2);
    await expect(page.getByTestId('save-message')).toContainText('The server cannot be reached, so 2 photos are kept on this device.');
    // Training now would leave them out: it says so instead of starting.
    await page.getByRole('button', { name: 'Train the model' }).click();
    await expect(page.getByTestId('train-error')).toContainText('2 photos are still waiting to reach the server.');
    await expect(page.getByTestId('server-unreachable')).toBeVisible();
    await checkAccessibility(page, 'training-kept-offline');
  } finally {
    await lookout.restart();
  }

  // The offline queue sends them once the status poll sees the server again.
  await expect(page.getByTestId('capture-status').filter({ hasText: 'Saved' })).toHaveCount(2, { timeout: 30_000 });
  await expect(page.getByTestId('save-message')).toContainText('have reached the server');
  await expect(page.getByTestId('training-label').filter({ hasText: 'katherine-johnson' })).toContainText('2 images');
});

test('a photo the server refuses says why, and can be retried', async ({ page }) => {
  await openTraining(page);
  await page.getByLabel('Person’s name').fill('Dorothy Vaughan');
  await page.getByTestId('training-camera').getByRole('button', { name: 'Take photo' }).click();
  // One refusal, as the server words it (a test double for this one answer; the retry reaches the real server).
  let refusals = 0;
  await page.route('**/api/images', async (route) => {
    if (route.request().method() !== 'POST' || refusals++ > 0) return route.fallback();
    await route.fulfill({ status: 413, json: { error: { code: 'image_too_large', message: 'the image is larger than the 10 MB limit' } } });
  });
  await page.getByRole('button', { name: 'Save 1 photo' }).click();
  const thumb = page.getByTestId('capture-thumb');
  await expect(thumb.getByTestId('capture-status')).toHaveText('Not saved');
  await expect(thumb).toContainText('The image is larger than the 10 MB limit.');
  await expect(page.getByTestId('save-message')).toContainText('1 photo was not saved. Retry or remove it below.');
  await checkAccessibility(page, 'training-photo-refused');

  await page.getByRole('button', { name: 'Retry image 1' }).click();
  await expect(thumb.getByTestId('capture-status')).toHaveText('Saved');
  await expect(page.getByRole('button', { name: 'Retry image 1' })).toHaveCount(0);
  await expect(page.getByTestId('training-label').filter({ hasText: 'dorothy-vaughan' })).toContainText('1 image');
});

test('the red "Not trained yet" box stays while nothing changes, and goes once the model is trained', async ({ page }) => {
  // Someone with a saved photo who is not in the model yet (whatever the tests before left).
  const form = new FormData();
  form.set('label', 'mary-jackson');
  form.set(
    'file',
    new Blob([new Uint8Array(fs.readFileSync(path.join(TESTDATA, 'faces/astronaut.png')))], { type: 'image/png' }),
    'mary.png',
  );
  expect((await fetch(`${lookout.url}/api/images`, { method: 'POST', body: form })).status).toBe(200);
  await openTraining(page);
  await expect(page.getByTestId('training-label').filter({ hasText: 'mary-jackson' })).toContainText('Not trained yet');
  // A photo without a name: training cannot start, and the page says why in the red box.
  await page.getByTestId('training-camera').getByRole('button', { name: 'Take photo' }).click();
  await expect(page.getByTestId('capture-thumb')).toHaveCount(1);
  await page.getByRole('button', { name: 'Train the model' }).click();
  const box = page.getByTestId('train-error');
  await expect(box).toContainText('Not trained yet');
  await expect(box).toContainText('Enter the person’s name first');

  // The status poll (every 3 s) answering with nothing new leaves it alone.
  for (let i = 0; i < 2; i++) await page.waitForResponse((r) => new URL(r.url()).pathname === '/api/ready');
  await expect(box).toContainText('Not trained yet');

  // Trained elsewhere (another tab, the API): the box would now contradict the model, so it goes by itself.
  const res = await fetch(`${lookout.url}/api/train`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(res.status, await res.text()).toBe(200);
  await expect(box).toHaveCount(0);
  await expect(page.getByTestId('training-label').filter({ hasText: 'mary-jackson' })).toContainText('Trained');
});

test('photos still being read from files when Train is pressed are saved and learnt with the rest', async ({ page }) => {
  const label = 'grace-hopper';
  const stored = async () => {
    const res = await fetch(`${lookout.url}/api/images/${label}`);
    return res.status === 404 ? 0 : ((await res.json()) as { count: number }).count;
  };
  const before = await stored();
  const files = (await trainingCaptures('faces/grace_hopper.jpg')).slice(0, 3).map((bytes, i) => ({
    name: `more-${i}.jpg`,
    mimeType: 'image/jpeg',
    buffer: bytes,
  }));
  await slowFileDecoding(page, 700);
  await openTraining(page);
  await page.getByLabel('Person’s name').fill('Grace Hopper');
  await page.getByLabel('Or add photos from files').setInputFiles(files);
  // The page says it is still reading them, and Save waits until it has.
  await expect(page.getByTestId('files-adding')).toContainText(/Adding photo \d of 3/);
  await expect(page.getByRole('button', { name: 'Adding photos…' })).toBeDisabled();
  // Train pressed at once: every picked photo is saved first, then learnt (it saved the first one only before).
  await page.getByRole('button', { name: 'Train the model' }).click();
  await expect(page.getByTestId('train-finished')).toBeVisible({ timeout: 120_000 });
  expect(await stored()).toBe(before + files.length);
  await expect(page.getByTestId('files-adding')).toHaveCount(0);
  await expect(page.getByTestId('capture-status').filter({ hasText: 'Saved' })).toHaveCount(files.length);
});
