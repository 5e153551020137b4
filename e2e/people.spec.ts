/**
 * #36 2, a person's page against the real server: reached from the Training page; their photos and the sightings
 * Lookout named as them; rename with Undo (the id stays); the cover photo; search by face from a sighting (the
 * sightings of that face, nearest first, with time and where); move chosen photos to a new person and back; merge a
 * second enrolment into the person, with what it will do said first, and Undo. Axe on desktop and at phone size.
 */
import { checkAccessibility, expect, test, type Page } from './helpers/fixtures.js';
import { PHONE_VIEWPORT } from './helpers/browser.js';
import { testImage, waitForEmbedding } from './helpers/engine-page.js';
import { startLookout, uploadCaptures, type Lookout } from './helpers/lookout.js';

test.describe.configure({ mode: 'serial' });

const GRACE = 'faces/grace_hopper.jpg';
const STRANGER = 'faces/astronaut.png';

let lookout: Lookout;

async function api<T>(method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${lookout.url}/api${route}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} /api${route} answered ${res.status}: ${text}\n${lookout.output().slice(-4000)}`);
  return JSON.parse(text) as T;
}

type Page_ = { photos: unknown[]; sightings: unknown[] };

test.beforeAll(async () => {
  lookout = await startLookout({ OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' });
  await waitForEmbedding(lookout);
  await uploadCaptures(lookout.url, 'Grace Hopper', testImage(GRACE));
  await uploadCaptures(lookout.url, 'G Hopper', testImage(GRACE));
  await api('POST', '/train', { wait: true }).catch(() => undefined);
  await expect.poll(async () => (await api<{ state: string }>('GET', '/train/status')).state, { timeout: 120_000 }).toBe('idle');
  // Seen by Lookout: her face named (a sighting of her), and a stranger.
  await api('POST', '/recognize', { image: testImage(GRACE).toString('base64') });
  await api('POST', '/recognize', { image: testImage(STRANGER).toString('base64') });
  await expect
    .poll(
      async () =>
        (await api<Page_>('GET', '/people/grace-hopper')).sightings.length + (await api<Page_>('GET', '/people/g-hopper')).sightings.length,
      {
        timeout: 60_000,
      },
    )
    .toBeGreaterThan(0);
});

test.afterAll(async () => {
  await lookout?.close();
});

const outcome = (page: Page) => page.getByTestId('person-outcome').locator('.notice');
const photos = (page: Page) => page.getByTestId('person-photos').getByRole('listitem');

async function openPerson(page: Page, label: string, name: string): Promise<void> {
  await page.goto(`${lookout.url}/people/${label}`);
  await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
}

test("a person's page from the Training page: photos, sightings, rename with Undo, cover, search by face", async ({ page }) => {
  await page.goto(`${lookout.url}/training`);
  await page.getByRole('link', { name: 'Page of Grace Hopper' }).click();
  await expect(page).toHaveURL(/\/people\/grace-hopper$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Grace Hopper' })).toBeVisible();
  const count = await photos(page).count();
  expect(count).toBeGreaterThan(1);
  await expect(page.getByText(/id grace-hopper/)).toBeVisible();
  await checkAccessibility(page, 'person-desktop');

  // Rename: the name changes, the id (and the address) stays; Undo brings the old name back.
  await page.getByLabel('Name shown for this person').fill('Grace B. Hopper');
  await page.getByRole('button', { name: 'Rename' }).click();
  await expect(outcome(page)).toContainText('Grace Hopper is now called Grace B. Hopper');
  await expect(outcome(page)).toBeFocused();
  await expect(page.getByRole('heading', { level: 1, name: 'Grace B. Hopper' })).toBeVisible();
  await expect(page).toHaveURL(/\/people\/grace-hopper$/);
  await outcome(page).getByRole('button', { name: /^Undo/ }).click();
  await expect(outcome(page)).toContainText('undone');
  await expect(page.getByRole('heading', { level: 1, name: 'Grace Hopper' })).toBeVisible();

  // The cover: the first photo until another is chosen.
  await expect(photos(page).nth(0).getByTestId('person-cover-badge')).toBeVisible();
  await photos(page)
    .nth(1)
    .getByRole('button', { name: /Make cover/ })
    .click();
  await expect(photos(page).nth(1).getByTestId('person-cover-badge')).toBeVisible();
  await expect(
    photos(page)
      .nth(0)
      .getByRole('button', { name: /Make cover/ }),
  ).toBeVisible();

  // Search by face from one of her photos: her sightings, with time and where; never the stranger.
  await photos(page)
    .nth(0)
    .getByRole('button', { name: /Find this face/ })
    .click();
  const results = page.getByTestId('person-search-results').getByRole('listitem');
  await expect(page.getByTestId('person-search')).toBeFocused();
  await expect(results.first()).toBeVisible();
  await expect(results.first()).toContainText(/\d:\d\d( [AP]M)?, another program/);
  await expect(page.getByTestId('person-search')).not.toContainText('unknown');
  await checkAccessibility(page, 'person-search');

  // Search with a photo of one's own (its largest face): her sightings again, ranked, with time and where.
  await page
    .getByLabel('Find the face in a photo')
    .setInputFiles({ name: 'her-photo.jpg', mimeType: 'image/jpeg', buffer: testImage(GRACE) });
  await expect(page.getByTestId('person-search')).toContainText(/of the face in the photo her-photo\.jpg, nearest first/);
  await expect(page.getByTestId('person-search')).toBeFocused();
  await expect(results.first()).toContainText(/\d:\d\d( [AP]M)?, another program/);
  await expect(page.getByTestId('person-search')).not.toContainText('unknown');
  await checkAccessibility(page, 'person-search-photo');
});

test('moves chosen photos to a new person, and Undo moves them back', async ({ page }) => {
  await openPerson(page, 'grace-hopper', 'Grace Hopper');
  const before = await photos(page).count();
  await page.getByLabel('Choose photo 1', { exact: true }).check();
  await page.getByLabel(/Move the 1 photo chosen to/).selectOption({ label: 'A new person…' });
  await page.getByLabel("New person's name").fill('Ada Test');
  await page.getByRole('button', { name: 'Move photos' }).click();
  await expect(outcome(page)).toContainText('1 photo of Grace Hopper moved to Ada Test');
  await expect(outcome(page)).toContainText('trained again');
  await expect(photos(page)).toHaveCount(before - 1);
  await outcome(page).getByRole('button', { name: /^Undo/ }).click();
  await expect(outcome(page)).toContainText('undone');
  await expect(photos(page)).toHaveCount(before);
  expect((await fetch(`${lookout.url}/api/people/ada-test`)).status).toBe(404);
});

test('merges a second enrolment into the person, saying first what it will do; Undo brings them back', async ({ page }) => {
  await openPerson(page, 'g-hopper', 'G Hopper');
  const theirs = await photos(page).count();
  const hers = (await api<Page_>('GET', '/people/grace-hopper')).photos.length;
  await page.getByLabel('Merge G Hopper into').selectOption({ label: 'Grace Hopper' });
  await page.getByRole('button', { name: 'Merge…' }).click();
  await expect(page.getByText(`All ${theirs} photos`)).toBeVisible();
  await page.getByRole('button', { name: 'Merge into Grace Hopper' }).click();
  await expect(page).toHaveURL(/\/people\/grace-hopper$/);
  await expect(outcome(page)).toContainText('G Hopper merged into Grace Hopper');
  // #36: the trained models followed the merge (both were trained): no training asked for.
  await expect(outcome(page)).not.toContainText('trained again');
  await expect(photos(page)).toHaveCount(hers + theirs);
  await outcome(page).getByRole('button', { name: /^Undo/ }).click();
  await expect(page).toHaveURL(/\/people\/g-hopper$/);
  await expect(page.getByRole('heading', { level: 1, name: 'G Hopper' })).toBeVisible();
  await expect(photos(page)).toHaveCount(theirs);
});

test('at phone size the page fits the screen and passes axe', async ({ page }) => {
  await page.setViewportSize(PHONE_VIEWPORT);
  await openPerson(page, 'grace-hopper', 'Grace Hopper');
  await expect(photos(page).first()).toBeVisible();
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  expect(overflow).toBeLessThanOrEqual(0);
  await checkAccessibility(page, 'person-phone');
});
