/**
 * Every page of the app through axe-core (issue 18, item 7), so a page no other spec reaches is still checked:
 * each page at desktop and phone size, first with nothing stored, then with a trained person and their photos,
 * then with the server gone (the offline banner), and the API reference. Findings fail with rule, impact and
 * elements (see helpers/fixtures.ts); each check keeps full-page screenshots at both sizes with the test's results.
 */
import { accessibilityFindings, checkAccessibility, expect, skipAccessibilityCheck, test, type Page } from './helpers/fixtures.js';
import { CHROMIUM_PATH, DESKTOP_VIEWPORT, fakeCameraArgs, PHONE_VIEWPORT } from './helpers/browser.js';
import { recognizeOnServer, trainOnServer } from './helpers/engine-page.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import fs from 'node:fs';
import { startLookout, type Lookout } from './helpers/lookout.js';

const camera = await makeFakeCamera('faces/grace_hopper.jpg');
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(camera) } });
test.describe.configure({ mode: 'serial' });

/** The app's pages (Admin needs the identity provider: auth.spec.ts and idp-signin.spec.ts check it). */
const PAGES = [
  { name: 'dashboard', path: '/' },
  { name: 'training', path: '/training' },
  { name: 'faces', path: '/faces' },
  { name: 'recognize', path: '/recognize' },
  { name: 'objects', path: '/objects' },
  { name: 'safety', path: '/safety' },
  { name: 'chat', path: '/chat' },
  { name: 'config', path: '/config' },
  { name: 'not-found', path: '/no-such-page' },
];
const SIZES = { desktop: DESKTOP_VIEWPORT, phone: PHONE_VIEWPORT };

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout({ OBJECT_DETECTION_ENABLED: 'false', EMBEDDING_ENABLED: 'false' });
});
test.afterAll(async () => {
  await lookout.close();
});

/** Opens a page and waits until it has drawn its heading and finished loading its code and first data. */
async function open(page: Page, path: string): Promise<void> {
  await page.goto(`${lookout.url}${path}`);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await expect(page.getByText('Loading the page…')).toHaveCount(0);
  await page.waitForLoadState('networkidle');
}

/** Each page at each size, under `state` in the screenshots' names. */
async function checkEveryPage(page: Page, state: string): Promise<void> {
  for (const [size, viewport] of Object.entries(SIZES)) {
    await page.setViewportSize(viewport);
    for (const p of PAGES) {
      await open(page, p.path);
      await checkAccessibility(page, `${p.name}-${state}-${size}`);
    }
  }
}

test('every page, with nothing stored, at desktop and phone size', async ({ page }) => {
  await checkEveryPage(page, 'empty');
});

test('every page, with a trained person and their photos, at desktop and phone size', async ({ page }) => {
  await trainOnServer(lookout, { grace: 'faces/grace_hopper.jpg' });
  // Faces seen since (a named one and a stranger), for the Faces page's groups and people.
  await recognizeOnServer(lookout, 'faces/grace_hopper.jpg');
  await recognizeOnServer(lookout, 'faces/astronaut.png');
  await checkEveryPage(page, 'data');
});

test('the API reference', async ({ page }) => {
  await page.goto(`${lookout.url}/api/docs`);
  await expect(page.locator('.swagger-ui .info .title')).toContainText('Lookout API');
  await expect(page.locator('.opblock').first()).toBeVisible();
  await checkAccessibility(page, 'api-docs');
});

test('the banner while the server cannot be reached, at desktop and phone size', async ({ page }) => {
  await open(page, '/training');
  await lookout.stop();
  try {
    await expect(page.getByTestId('server-unreachable')).toBeVisible();
    for (const [size, viewport] of Object.entries(SIZES)) {
      await page.setViewportSize(viewport);
      await checkAccessibility(page, `server-unreachable-${size}`);
    }
  } finally {
    await lookout.restart();
  }
  await expect(page.getByTestId('server-unreachable')).toHaveCount(0);
});

test('the check itself: it names the rule and the element, keeps both screenshots, and restores the size', async ({ page }) => {
  // A page made to fail (an unlabelled field, grey on white), served under a name of its own: nothing leaves the machine.
  await page.route('http://a11y.test/', (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: '<!doctype html><html lang="en"><title>Bad</title><main><h1>Bad</h1><input id="q"><p style="color:#bbb">faint</p></main></html>',
    }),
  );
  await page.setViewportSize({ width: 1000, height: 700 });
  await page.goto('http://a11y.test/');
  const lines = await accessibilityFindings(page, 'made to fail');
  expect(lines.join('\n')).toMatch(/- label \(critical\): .*\n\s+#q/);
  expect(lines.join('\n')).toMatch(/- color-contrast \(serious\): .*\n\s+p/);
  expect(page.viewportSize()).toEqual({ width: 1000, height: 700 });
  const shots = test.info().attachments.filter((a) => a.name.startsWith('made to fail (') && a.contentType === 'image/png');
  expect(shots.map((a) => a.name)).toEqual(['made to fail (desktop)', 'made to fail (phone)']);
  // A PNG's width is bytes 16-19 of its header: the desktop and phone widths.
  expect(shots.map((a) => fs.readFileSync(a.path!).readUInt32BE(16))).toEqual([DESKTOP_VIEWPORT.width, PHONE_VIEWPORT.width]);
  skipAccessibilityCheck(page, 'made to fail');
});
