/**
 * The model configuration page against the real server: switching the recognition model applies at once and
 * shows on the dashboard; remote detection, with no model server configured, is explained and cannot be chosen.
 */
import { checkAccessibility, expect, test } from './helpers/fixtures.js';
import type { ModelsAvailableResponse } from '../shared/api/index.js';
import { PHONE_VIEWPORT } from './helpers/browser.js';
import { screenshot, startLookout, type Lookout } from './helpers/lookout.js';

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout();
});
test.afterAll(async () => {
  await lookout?.close();
});

test('the recognition model switches at once, stays switched, and the dashboard shows it', async ({ page }) => {
  await page.goto(`${lookout.url}/config`);
  await expect(page.getByRole('heading', { name: 'Models' })).toBeVisible();
  const recognition = page.getByRole('group', { name: 'Recognition model' });
  const lbph = recognition.getByRole('radio', { name: 'LBPH' });
  const embedding = recognition.getByRole('radio', { name: 'Embedding' });
  await expect(lbph).toBeChecked();
  await expect(page.getByTestId('option-recognition-lbph')).toContainText('Fast and light');
  await expect(page.getByTestId('trained-lbph')).toContainText('Not trained yet');
  // The embedding recognizer loads in the background after start; the page keeps asking until it can be chosen.
  await expect(embedding).toBeEnabled({ timeout: 60_000 });

  await embedding.check();
  await expect(page.getByTestId('config-message')).toContainText('Recognition now uses embedding');
  await expect(page.getByTestId('option-recognition-embedding')).toContainText('In use');
  await checkAccessibility(page, 'config');
  await screenshot(page, 'config-desktop');

  await page.reload();
  await expect(embedding).toBeChecked();
  await expect(lbph).not.toBeChecked();
  await expect(page.getByTestId('option-recognition-embedding')).toContainText('In use');
  const config = (await (await fetch(`${lookout.url}/api/models/config`)).json()) as { recognition_model: string };
  expect(config.recognition_model).toBe('embedding');

  await page.getByRole('link', { name: 'Dashboard' }).click();
  await expect(page.getByText('Recognition model:')).toContainText('embedding');

  // Remote detection: no model server is configured, so it says why and cannot be chosen.
  await page.getByRole('link', { name: 'Change models' }).click();
  const detection = page.getByRole('group', { name: 'Face detection method' });
  const local = detection.getByRole('radio', { name: 'Local' });
  const remote = detection.getByRole('radio', { name: 'Remote' });
  await expect(local).toBeChecked();
  await expect(remote).toBeDisabled();
  await expect(page.getByTestId('reason-detection-remote')).toContainText(
    'Not available: no remote model server is configured (set REMOTE_DETECTOR_URL).',
  );
  await expect(page.getByTestId('remote-status')).toContainText('Model server: not configured');
  // Clicking it anyway (the whole option is its label) changes nothing.
  await page.getByTestId('option-detection-remote').click({ force: true });
  await expect(local).toBeChecked();
  await expect(remote).not.toBeChecked();

  await lbph.check();
  await expect(page.getByTestId('config-message')).toContainText('Recognition now uses lbph');
  await expect(page.getByTestId('option-recognition-lbph')).toContainText('In use');
  await page.getByRole('link', { name: 'Dashboard' }).click();
  await expect(page.getByText('Recognition model:')).toContainText('lbph');
});

test('a choice the server refuses (409) is shown with its reason and not applied', async ({ page }) => {
  // The page last heard that remote detection was available; the server, asked, refuses it: a stale view.
  await page.route('**/api/models/available', async (route) => {
    const res = await route.fetch();
    const body = (await res.json()) as ModelsAvailableResponse;
    body.detection_methods = body.detection_methods.map((m) => ({ ...m, available: true, reason: undefined }));
    await route.fulfill({ response: res, json: body });
  });
  await page.goto(`${lookout.url}/config`);
  const remote = page.getByRole('radio', { name: 'Remote' });
  await expect(remote).toBeEnabled();
  await remote.click();
  const message = page.getByTestId('config-message');
  await expect(message).toContainText('The detection method was not changed');
  await expect(message).toContainText('not available: no remote model server is configured');
  await expect(page.getByRole('radio', { name: 'Local' })).toBeChecked();
  await expect(remote).not.toBeChecked();
});

test('the page reads well on a phone', async ({ page }) => {
  await page.setViewportSize(PHONE_VIEWPORT);
  await page.goto(`${lookout.url}/config`);
  await expect(page.getByRole('radio', { name: 'LBPH' })).toBeChecked();
  await expect(page.getByRole('radio', { name: 'Embedding' })).toBeEnabled({ timeout: 60_000 });
  await expect(page.getByTestId('reason-detection-remote')).toBeVisible();
  await screenshot(page, 'config-phone');
});
