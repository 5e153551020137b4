/**
 * The Training page says which detector checked a photo (441ae5b: the photo check uses the active detection
 * engine): with `remote` selected and Lookout's own model server up, each photo's check names remote detection;
 * with the model server gone, the check falls back to the local cascade and the page says so with the server's
 * reason, on the new photo and on the stored one. Against the real server and a real model server; axe-clean.
 */
import fs from 'node:fs';
import path from 'node:path';
import { listenModelServer, type RunningModelServer } from '../server/model-server/app.js';
import { checkAccessibility, expect, test, type Page } from './helpers/fixtures.js';
import { ownModelServerEnv, startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

test.describe.configure({ mode: 'serial' });

let modelServer: RunningModelServer | undefined;
let lookout: Lookout;
test.beforeAll(async () => {
  modelServer = await listenModelServer({ port: 0, host: '127.0.0.1' });
  lookout = await startLookout(ownModelServerEnv(modelServer.url));
});
test.afterAll(async () => {
  await lookout?.close();
  await modelServer?.close();
});

async function remoteStatus(): Promise<string> {
  return ((await (await fetch(`${lookout.url}/api/ready`)).json()) as { remote_status?: string }).remote_status ?? '';
}

async function addPhoto(page: Page, name: string): Promise<void> {
  const buffer = fs.readFileSync(path.join(TESTDATA, 'faces/grace_hopper.jpg'));
  await page.getByLabel('Or add photos from files').setInputFiles([{ name, mimeType: 'image/jpeg', buffer }]);
}

test('each check names remote detection, then the local fallback with its reason once the model server is gone', async ({ page }) => {
  test.setTimeout(180_000);
  await expect.poll(remoteStatus, { timeout: 60_000 }).toBe('connected');
  const select = await fetch(`${lookout.url}/api/models/detection`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'remote' }),
  });
  expect(select.status).toBe(200);

  await page.goto(`${lookout.url}/training`);
  await page.getByLabel('Person’s name').fill('Grace Hopper');
  const thumbs = page.getByTestId('capture-thumb');

  // Remote up: the check is remote's, and the photo says so.
  await addPhoto(page, 'remote.jpg');
  await expect(thumbs.nth(0).getByTestId('capture-check')).toHaveText('Good photo', { timeout: 60_000 });
  await expect(thumbs.nth(0).getByTestId('capture-check')).toHaveAttribute('data-detection', 'remote');
  await expect(thumbs.nth(0).getByTestId('capture-check-detection')).toHaveText('Checked with remote detection.');
  await page.getByRole('button', { name: 'Save 1 photo' }).click();
  await expect(thumbs.nth(0).getByTestId('capture-status')).toHaveText('Saved', { timeout: 60_000 });

  // The model server goes away: the next check is the local cascade's, with the reason, and still a verdict.
  await modelServer!.close();
  modelServer = undefined;
  await expect.poll(remoteStatus, { timeout: 30_000 }).not.toBe('connected');
  await addPhoto(page, 'fallback.jpg');
  await expect(thumbs.nth(1).getByTestId('capture-check')).toHaveText('Good photo', { timeout: 60_000 });
  await expect(thumbs.nth(1).getByTestId('capture-check')).toHaveAttribute('data-detection', 'local');
  await expect(thumbs.nth(1).getByTestId('capture-check-detection')).toHaveText(
    'Checked with the local detector: remote detection could not be used.',
  );
  // The server's reason (it names the model server's error) behind "Why".
  const why = thumbs.nth(1).getByTestId('capture-check-detection-reason');
  await expect(why).not.toHaveAttribute('open');
  await why.getByText('Why').click();
  await expect(why).toContainText('Remote detection is selected but unavailable');
  await expect(why).toContainText('checked with the local detector instead');
  await checkAccessibility(page, 'training-detection-fallback');
  await page.getByRole('button', { name: 'Save 1 photo' }).click();
  await expect(thumbs.nth(1).getByTestId('capture-status')).toHaveText('Saved', { timeout: 60_000 });

  // The stored checks keep their detector: the person's photos say it in a few words.
  const row = page.getByTestId('training-label').filter({ hasText: 'grace-hopper' });
  await row.getByRole('button', { name: 'View images of Grace Hopper' }).click();
  await expect(row.getByTestId('stored-photo-name')).toHaveText(['remote.jpg', 'fallback.jpg']);
  await expect(row.getByTestId('stored-photo-check')).toHaveCount(2);
  await expect(row.getByTestId('stored-photo-detection')).toHaveText(['Remote detection', 'Local detection: remote could not be used']);
  await checkAccessibility(page, 'training-detection-stored');
});
