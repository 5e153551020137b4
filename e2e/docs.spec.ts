/**
 * The API reference at /api/docs renders in Chromium from this server alone (a kiosk is offline): every request
 * the page makes goes to the server on 127.0.0.1; anything else is aborted and makes the test fail.
 */
import { expect, test } from './helpers/fixtures.js';
import { screenshot, startLookout, type Lookout } from './helpers/lookout.js';

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout({ OBJECT_DETECTION_ENABLED: 'false', EMBEDDING_ENABLED: 'false' });
});
test.afterAll(async () => {
  await lookout.close();
});

test('the API reference renders offline with every operation, and documents each one', async ({ page }) => {
  const requested: string[] = [];
  const elsewhere: string[] = [];
  page.on('request', (req) => requested.push(req.url()));
  await page.context().route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${lookout.url}/`)) return route.continue();
    elsewhere.push(url);
    return route.abort('blockedbyclient');
  });
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));

  await page.goto(`${lookout.url}/api/docs`);
  await expect(page.locator('.swagger-ui .info .title')).toContainText('Lookout API');
  const operations = page.locator('.opblock');
  await expect(operations.first()).toBeVisible();
  const doc = (await (await fetch(`${lookout.url}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const count = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
  await expect(operations).toHaveCount(count);
  await expect(page.locator('.opblock-summary-path', { hasText: /^\/api\/recognize$/ })).toBeVisible();
  // The typed client's name for each operation is shown beside it.
  await expect(page.locator('.opblock-post', { hasText: '/api/recognize' }).locator('.opblock-summary-operation-id')).toHaveText(
    'recognize',
  );

  // One operation opened: its request body, its answers with the error statuses, and a schema.
  await page.locator('.opblock-post', { hasText: '/api/recognize' }).locator('.opblock-summary').click();
  const recognize = page.locator('.opblock-post', { hasText: '/api/recognize' });
  await expect(recognize.locator('.opblock-section-request-body')).toBeVisible();
  for (const status of ['200', '400', '413', '415', '503']) {
    await expect(recognize.locator('.responses-table .response-col_status', { hasText: new RegExp(`^${status}$`) })).toBeVisible();
  }
  await expect(page.locator('.models')).toContainText('RecognizeResponse');

  // Served under the server's isolation headers (COOP/COEP/CORP) like the web app.
  expect(await page.evaluate('crossOriginIsolated')).toBe(true);
  expect(errors).toEqual([]);
  expect(elsewhere, 'requests that left the server').toEqual([]);
  expect(requested.length).toBeGreaterThan(3);
  for (const url of requested) expect(url.startsWith(`${lookout.url}/`) || url.startsWith('data:'), url).toBe(true);
  await screenshot(page, 'api-docs');
});
