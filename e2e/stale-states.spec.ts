/**
 * No stale or contradictory state (#18 item 4): every page reads the server's state from one store
 * (client/src/lib/server-status.ts), refreshed after every change, kept on the device for offline. Each test
 * reproduces one reported problem. Offline is simulated by failing the page's /api requests (the service worker is
 * blocked so that the page's own routes see them); offline.spec.ts stops the real server.
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkAccessibility, expect, test, type Page } from './helpers/fixtures.js';
import { analyseOnServer } from './helpers/browser.js';
import { screenshot, startLookout, TESTDATA, type Lookout, uploadCaptures } from './helpers/lookout.js';

const PERSON = 'grace';
const PHOTO = path.join(TESTDATA, 'faces/grace_hopper.jpg');

test.use({ serviceWorkers: 'block' });
test.describe.configure({ mode: 'serial' });

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout();
});
test.afterAll(async () => {
  await lookout?.close();
});

/** The server goes away for this page: every /api request fails as with a stopped server. */
async function goOffline(page: Page) {
  await page.route(/\/api\//, (route) => route.abort('connectionrefused'));
}

async function openPhoto(page: Page) {
  await page.goto(`${lookout.url}/recognize`);
  await page.getByRole('radio', { name: 'Photo' }).check();
  await page.getByLabel('Upload a photo').setInputFiles(PHOTO);
}

test('a person added elsewhere (a sync, another tab) appears in the training page list without Refresh', async ({ page }) => {
  await page.goto(`${lookout.url}/training`);
  await expect(page.getByTestId('training-labels-empty')).toBeVisible();
  // As the offline queue does when the server is back: the photos arrive by the API, not by this page.
  await uploadCaptures(lookout.url, PERSON, fs.readFileSync(PHOTO));
  await expect(page.locator(`[data-testid="training-label"][data-label="${PERSON}"]`)).toBeVisible();
});

test('"Not trained yet" goes once the model is trained, without a new analysis', async ({ page }) => {
  await analyseOnServer(page);
  await openPhoto(page);
  await expect(page.getByTestId('face-result').first()).toBeVisible();
  await expect(page.getByTestId('not-trained')).toBeVisible();
  const res = await fetch(`${lookout.url}/api/train`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(res.status, await res.text()).toBe(200);
  await expect(page.getByTestId('not-trained')).toHaveCount(0);
});

test('offline, the dashboard shows the last known state with its age, and the header does not say "All synced"', async ({ page }) => {
  await page.goto(lookout.url);
  await expect(page.getByTestId('indicator-trained')).toHaveText(/Trained/);
  await goOffline(page);
  await page.reload();
  await expect(page.getByTestId('server-unreachable')).toBeVisible();
  await expect(page.getByTestId('last-known')).toContainText('Last known state, from just now');
  await expect(page.getByTestId('indicator-trained')).toContainText('Trained');
  await expect(page.getByTestId('labels-table')).toContainText(PERSON);
  await expect(page.getByTestId('sync-status')).toHaveText('Nothing waiting to sync');
  await screenshot(page, 'dashboard-offline-desktop');
});

test('offline, one "Server unreachable" banner, and a result analysed on the server offers this browser', async ({ page }) => {
  await analyseOnServer(page);
  await openPhoto(page);
  await expect(page.getByTestId('face-result').first()).toBeVisible();
  await expect(page.getByTestId('analysed-on')).toHaveText('The Lookout server');
  await expect(page.getByTestId('offline-offer')).toHaveCount(0);

  await goOffline(page);
  await expect(page.getByTestId('server-unreachable')).toBeVisible();
  // A new photo fails too: its message does not repeat the banner.
  await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, 'faces/messi5.jpg'));
  await expect(page.getByTestId('analysis-error')).toBeVisible();
  await expect(page.getByText('Server unreachable', { exact: true })).toHaveCount(1);
  await checkAccessibility(page, 'recognize-offline-offer');
  await screenshot(page, 'recognize-offline-offer-desktop');

  await page.getByTestId('offline-offer').getByRole('button', { name: 'Analyse in this browser' }).click();
  await expect(page.getByRole('radio', { name: 'In this browser' })).toBeChecked();
  await expect(page.getByTestId('offline-offer')).toHaveCount(0);
});

test('after deleting the only person, the dashboard no longer says "Trained"', async ({ page }) => {
  await page.goto(lookout.url);
  await expect(page.getByTestId('indicator-trained')).toHaveText(/Trained$/);
  expect((await fetch(`${lookout.url}/api/images/${PERSON}`, { method: 'DELETE' })).status).toBe(200);
  // Deleting a person removes their templates from the trained models (#26): the only person gone, no model is left.
  await expect(page.getByTestId('indicator-trained')).toContainText('Not trained');
  await expect(page.getByTestId('labels-empty')).toBeVisible();
});

test('a result kept in this browser is sent without a "1 result waiting" flash while the server answers', async ({ page }) => {
  // Every text the sync chip shows, from the first paint.
  await page.addInitScript(`
    window.__syncTexts = [];
    new MutationObserver(() => {
      const t = document.querySelector('[data-testid="sync-status"]')?.textContent ?? '';
      if (t && window.__syncTexts.at(-1) !== t) window.__syncTexts.push(t);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  `);
  const stored = async () =>
    ((await (await fetch(`${lookout.url}/api/results?limit=1000`)).json()) as { results: unknown[] }).results.length;
  const before = await stored();
  await openPhoto(page);
  await expect(page.getByTestId('face-result').first()).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('analysed-on')).toContainText('This device');
  await expect.poll(stored, { timeout: 20_000 }).toBeGreaterThan(before);
  const texts = await page.evaluate<string[]>('window.__syncTexts');
  expect(texts).toContain('All synced');
  expect(texts.filter((t) => /waiting/.test(t))).toEqual([]);
});
