/**
 * The app on a phone (#29 part 3), at 390x844: the header is one row of the same height on every page (it took
 * 166 px, 207 on Live recognition, and jumped between pages), the pages are reached from a Menu button (the links
 * wrapped to two or three rows), the first run leads with one step, the photos just taken show under the Take
 * photo button, and offline the Training page lists the people the dashboard lists, with a sync dot that is not
 * the green of "All synced" beside the red "Server unreachable" banner. Every page goes through axe at this size.
 */
import { checkAccessibility, expect, test, type Page } from './helpers/fixtures.js';
import { CHROMIUM_PATH, fakeCameraArgs, PHONE_VIEWPORT } from './helpers/browser.js';
import { trainOnServer } from './helpers/engine-page.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { screenshot, startLookout, type Lookout } from './helpers/lookout.js';

const camera = await makeFakeCamera('faces/grace_hopper.jpg');
test.use({ viewport: PHONE_VIEWPORT, launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(camera) } });
test.describe.configure({ mode: 'serial' });

/** Every page the navigation lists with auth off (Admin shows its audit log then). */
const PAGES = [
  { title: 'Dashboard', path: '/' },
  { title: 'Training', path: '/training' },
  { title: 'Faces', path: '/faces' },
  { title: 'Live recognition', path: '/recognize' },
  { title: 'Objects', path: '/objects' },
  { title: 'Safety', path: '/safety' },
  { title: 'Chat', path: '/chat' },
  { title: 'Models', path: '/config' },
  { title: 'Admin', path: '/admin' },
];
/** One row: brand, sync state and Menu button (the links took 166 px in two or three rows). */
const MAX_HEADER_PX = 60;

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout({ OBJECT_DETECTION_ENABLED: 'false', EMBEDDING_ENABLED: 'false' });
});
test.afterAll(async () => {
  await lookout?.close();
});

async function open(page: Page, path: string): Promise<void> {
  await page.goto(`${lookout.url}${path}`);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await expect(page.getByText('Loading the page…')).toHaveCount(0);
  await page.waitForLoadState('networkidle');
}

async function headerHeight(page: Page): Promise<number> {
  const box = await page.locator('header.app-header').boundingBox();
  if (!box) throw new Error('no header');
  return box.height;
}

const menuButton = (page: Page) => page.getByRole('button', { name: /^Menu/ });
const mainNav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

test('first run: one header height on every page, links behind the Menu button, one first step, axe on every page', async ({ page }) => {
  const heights: Record<string, number> = {};
  for (const p of [...PAGES, { title: 'Page not found', path: '/no-such-page' }]) {
    await open(page, p.path);
    heights[p.title] = await headerHeight(page);
    // The links are behind the Menu button, not rows of the header.
    await expect(menuButton(page)).toBeVisible();
    await expect(menuButton(page)).toHaveAttribute('aria-expanded', 'false');
    await expect(mainNav(page)).toBeHidden();
    // Nothing wider than the phone: no sideways scrolling.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE_VIEWPORT.width);
    await checkAccessibility(page, `phone-${p.path.slice(1) || 'dashboard'}-empty`);
  }
  const values = Object.values(heights);
  expect(Math.max(...values), JSON.stringify(heights)).toBeLessThanOrEqual(MAX_HEADER_PX);
  expect(new Set(values).size, `every page's header is as high: ${JSON.stringify(heights)}`).toBe(1);

  await open(page, '/');
  const first = page.getByTestId('first-step');
  await expect(first.getByRole('heading', { name: 'Add your first person' })).toBeVisible();
  // It comes before the service's state, and the service's jargon is in words.
  const firstTop = (await first.boundingBox())!.y;
  expect(firstTop).toBeLessThan((await page.getByTestId('indicator-trained').boundingBox())!.y);
  await expect(page.getByTestId('indicator-detection')).toContainText('On this server');
  await screenshot(page, 'phone-dashboard-first-run');
  await first.getByRole('link', { name: 'Add your first person' }).click();
  await expect(page).toHaveURL(/\/training$/);
  await expect(page.getByRole('heading', { name: 'Training', level: 1 })).toBeFocused();
});

test('the Menu button: opens over the page, Escape closes it and gives the focus back, a link closes it', async ({ page }) => {
  await open(page, '/recognize');
  const before = await headerHeight(page);
  const button = menuButton(page);
  await button.click();
  await expect(button).toHaveAttribute('aria-expanded', 'true');
  await expect(mainNav(page)).toBeVisible();
  await expect(mainNav(page).getByRole('link', { name: 'Live recognition' })).toHaveAttribute('aria-current', 'page');
  // Over the page: the header keeps its height.
  expect(await headerHeight(page)).toBe(before);
  await checkAccessibility(page, 'phone-menu-open');
  await screenshot(page, 'phone-menu-open');

  // Escape from inside the panel: closed, the focus back on the button.
  await mainNav(page).getByRole('link', { name: 'Dashboard' }).focus();
  await page.keyboard.press('Escape');
  await expect(button).toHaveAttribute('aria-expanded', 'false');
  await expect(mainNav(page)).toBeHidden();
  await expect(button).toBeFocused();

  // By keyboard: Enter opens, Tab goes into the links (the panel follows the button), Enter follows one.
  await page.keyboard.press('Enter');
  await expect(button).toHaveAttribute('aria-expanded', 'true');
  await page.keyboard.press('Tab');
  await expect(mainNav(page).getByRole('link', { name: 'Dashboard' })).toBeFocused();
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\/training$/);
  await expect(button).toHaveAttribute('aria-expanded', 'false');
  await expect(page.getByRole('heading', { name: 'Training', level: 1 })).toBeFocused();
  expect(await headerHeight(page)).toBe(before);

  // A tap outside it (the bottom of the screen, below the panel) closes it too.
  await button.click();
  await expect(mainNav(page)).toBeVisible();
  await page.mouse.click(PHONE_VIEWPORT.width / 2, PHONE_VIEWPORT.height - 20);
  await expect(mainNav(page)).toBeHidden();
});

test('Training: the photo just taken shows right under the Take photo button', async ({ page }) => {
  await open(page, '/training');
  await page.getByLabel('Person’s name').fill('Grace Hopper');
  const take = page.getByTestId('training-camera').getByRole('button', { name: 'Take photo' });
  await expect(take).toBeEnabled();
  await take.click();
  const recent = page.getByTestId('recent-captures');
  await expect(recent.getByRole('img')).toHaveCount(1);
  await expect(recent).toContainText('1 photo: check and save');
  // Close to the button, on the same screen as it (step 3's list is a screen further down).
  const takeBox = (await take.boundingBox())!;
  const recentBox = (await recent.boundingBox())!;
  expect(recentBox.y - (takeBox.y + takeBox.height)).toBeLessThan(150);
  await expect(recent.getByRole('img')).toHaveAttribute('alt', /^Capture 1: (being checked|looks good|has a problem, see below)$/);
  await take.click();
  await expect(recent.getByRole('img')).toHaveCount(2);
  await expect(recent).toContainText('2 photos: check and save');
  await checkAccessibility(page, 'phone-training-recent');
  await screenshot(page, 'phone-training-recent');
  // The link leads to step 3, where they are checked and saved.
  await recent.getByRole('link').click();
  await expect(page.getByTestId('capture-count')).toBeInViewport();
});

test('offline: the Training page lists the people the dashboard lists, and the sync dot is not green', async ({ page }) => {
  await trainOnServer(lookout, { grace: 'faces/grace_hopper.jpg' });
  // Both pages seen online: the dashboard's state is kept on the device, the Training page's code is loaded.
  await open(page, '/training');
  await expect(page.getByTestId('training-labels')).toContainText('grace');
  await menuButton(page).click();
  await mainNav(page).getByRole('link', { name: 'Dashboard' }).click();
  await expect(page.getByTestId('labels-table')).toContainText('grace');
  await expect(page.getByTestId('first-step')).toHaveCount(0);
  const height = await headerHeight(page);

  await lookout.stop();
  try {
    await expect(page.getByTestId('server-unreachable')).toBeVisible();
    await expect(page.getByTestId('labels-table')).toContainText('grace');
    await menuButton(page).click();
    await mainNav(page).getByRole('link', { name: 'Training' }).click();
    await expect(page.getByRole('heading', { name: 'Training', level: 1 })).toBeVisible();
    // The cached list, said to be the last known one; not "could not be loaded".
    await expect(page.getByTestId('training-labels')).toContainText('grace');
    await expect(page.getByTestId('training-labels-last-known')).toContainText('last known list');
    await expect(page.getByTestId('labels-error')).toHaveCount(0);

    // The sync chip says offline, with a dot that is not the green of "All synced".
    const status = page.getByTestId('sync-status');
    await expect(status).toHaveAttribute('data-state', 'offline');
    await expect(status.locator('.sync-dot')).not.toHaveCSS('background-color', 'rgb(74, 222, 128)');
    expect(await headerHeight(page)).toBe(height);
    await checkAccessibility(page, 'phone-training-offline');
    await screenshot(page, 'phone-training-offline');
  } finally {
    await lookout.restart();
  }
  // Back online: the list is the server's again.
  await expect(page.getByTestId('server-unreachable')).toHaveCount(0, { timeout: 30_000 });
  await expect(page.getByTestId('training-labels-last-known')).toHaveCount(0);
  await expect(page.getByTestId('training-labels')).toContainText('grace');
  await expect(page.getByTestId('sync-status')).toHaveAttribute('data-state', 'synced');
});
