/**
 * The Admin page's audit log in Chromium against the real server (auth off, so every entry is `anonymous`; the
 * signed-in actors are in auth.spec.ts): operations done through the API show up newest first with whom they were
 * about, the operation filter narrows them, and the section is axe-clean on a desktop and a phone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkAccessibility, expect, test } from './helpers/fixtures.js';
import { CHROMIUM_PATH, DESKTOP_VIEWPORT, PHONE_VIEWPORT } from './helpers/browser.js';
import { screenshot, startLookout, TESTDATA, type Lookout, uploadCaptures } from './helpers/lookout.js';

test.use({ launchOptions: { executablePath: CHROMIUM_PATH } });
test.describe.configure({ mode: 'serial' });

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout({ OBJECT_DETECTION_ENABLED: 'false', EMBEDDING_ENABLED: 'false', CHAT_ENABLED: 'false' });
  await uploadCaptures(lookout.url, 'grace', fs.readFileSync(path.join(TESTDATA, 'faces/grace_hopper.jpg')));
  // A refused operation is recorded too.
  expect((await fetch(`${lookout.url}/api/images/nobody`, { method: 'DELETE' })).status).toBe(404);
});
test.afterAll(async () => {
  await lookout?.close();
});

test('the Admin page lists the biometric operations, filters them, and is accessible', async ({ page }) => {
  await page.setViewportSize(DESKTOP_VIEWPORT);
  await page.goto(lookout.url);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).click();
  await expect(page.getByRole('heading', { name: 'Administration' })).toBeVisible();
  // Auth off: no identity provider's users, but the audit log.
  await expect(page.getByTestId('admin-users')).toHaveCount(0);
  const section = page.getByTestId('audit-log');
  await expect(section.getByRole('heading', { name: 'Audit log' })).toBeVisible();
  const rows = section.getByTestId('audit-entries').locator('tbody tr');
  await expect(rows.first()).toBeVisible();
  // Newest first: the refused delete, then the uploads.
  await expect(rows.first()).toHaveAttribute('data-action', 'delete');
  await expect(rows.first()).toContainText('refused');
  await expect(rows.first()).toContainText('nobody');
  await expect(section.locator('tr[data-action="enroll"]').first()).toContainText('grace');
  await expect(section.locator('tr[data-action="enroll"]').first()).toContainText('anonymous');
  await expect(section).toContainText('kept 365 days');
  await checkAccessibility(page, 'admin-audit-log');
  await screenshot(page, 'admin-audit-desktop');

  await section.getByLabel('Operation').selectOption('enroll');
  await section.getByRole('button', { name: 'Show' }).click();
  await expect(section.locator('tr[data-action="delete"]')).toHaveCount(0);
  await expect(section.locator('tr[data-action="enroll"]').first()).toBeVisible();

  await section.getByLabel('Operation').selectOption('train');
  await section.getByRole('button', { name: 'Show' }).click();
  await expect(section.getByText('No entries match.')).toBeVisible();

  await page.setViewportSize(PHONE_VIEWPORT);
  await section.getByLabel('Operation').selectOption('');
  await section.getByRole('button', { name: 'Show' }).click();
  await expect(rows.first()).toBeVisible();
  await checkAccessibility(page, 'admin-audit-log-phone');
  await screenshot(page, 'admin-audit-phone');
});
