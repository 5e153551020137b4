/**
 * Camera permission refused by the browser itself: Chromium has its fake webcam, but without
 * --use-fake-ui-for-media-stream nothing answers the permission prompt, and headless Chromium with no
 * granted `camera` permission rejects getUserMedia with NotAllowedError, exactly as when a person clicks
 * "Block". The training page must say so in words and offer another way in (try again, upload a photo).
 */
import path from 'node:path';
import { checkAccessibility, expect, test } from './helpers/fixtures.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './helpers/browser.js';
import { screenshot, startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

test.use({
  launchOptions: { executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, '--use-fake-device-for-media-stream'] },
  // No permissions granted in the context: the prompt is dismissed as a denial.
  permissions: [],
});

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout();
});
test.afterAll(async () => {
  await lookout.close();
});

test('a denied camera is explained, with a retry and a photo upload instead', async ({ page }) => {
  await page.goto(`${lookout.url}/training`);
  await expect(page.getByRole('heading', { name: 'Training', level: 1 })).toBeVisible();

  const message = page.getByTestId('camera-message');
  await expect(message).toContainText('Camera access was denied.');
  await expect(message).toContainText('upload a photo instead');
  await expect(message).toHaveAttribute('role', 'alert');

  // The denial is the browser's own, not a missing device: the fake camera is there, access is refused.
  // (A string: the e2e programs are type-checked without the DOM library.)
  const probe = await page.evaluate<{ cameras: number; error: string; permission: string }>(`(async () => {
    const devices = await navigator.mediaDevices.enumerateDevices();
    let error = 'none';
    try {
      (await navigator.mediaDevices.getUserMedia({ video: true })).getTracks().forEach((t) => t.stop());
    } catch (err) {
      error = err.name;
    }
    const permission = await navigator.permissions.query({ name: 'camera' }).then((p) => p.state, () => 'unknown');
    return { cameras: devices.filter((d) => d.kind === 'videoinput').length, error, permission };
  })()`);
  expect(probe.error).toBe('NotAllowedError');
  expect(probe.cameras).toBeGreaterThan(0);
  expect(probe.permission).not.toBe('granted');

  // No shutter that cannot work; the ways forward are offered instead.
  await expect(page.getByRole('button', { name: 'Take photo' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Full screen' })).toHaveCount(0);
  await expect(message.getByRole('button', { name: 'Try again' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Upload photos instead' })).toBeVisible();
  await expect(page.getByLabel('Or add photos from files')).toBeVisible();
  await checkAccessibility(page, 'camera-denied');
  await screenshot(page, 'camera-denied-desktop');

  // "Try again" asks again; still refused, still explained.
  await message.getByRole('button', { name: 'Try again' }).click();
  await expect(page.getByTestId('camera-message')).toContainText('Camera access was denied.');

  // "Upload photos instead" opens the file picker, and a picked photo joins the list like a capture.
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Upload photos instead' }).click();
  await (await chooser).setFiles(path.join(TESTDATA, 'faces/grace_hopper.jpg'));
  await expect(page.getByTestId('capture-thumb')).toHaveCount(1);
  await expect(page.getByRole('img', { name: 'Capture 1 (from a file)' })).toBeVisible();
});
