/**
 * Issue #26 section 2, the Faces page against the real server: a stranger's photo recognised three times through
 * POST /api/recognize is one group of unknown faces ("Seen 3 times, last on Dec 6, 02:02 PM"); assigned to a new person with
 * the keyboard, its crops are that person's training photos on the Training page, and Undo takes them back; a
 * dismissed group comes back with Undo; "Not this person" on a named face keeps a correction until undone; "Train
 * now" trains with progress, after which the assign can no longer be undone. At phone size the page fits 390 px.
 */
import { captureVariations } from '../bench/captures.js';
import { checkAccessibility, expect, test, type Page } from './helpers/fixtures.js';
import { PHONE_VIEWPORT } from './helpers/browser.js';
import { testImage, trainOnServer, waitForEmbedding } from './helpers/engine-page.js';
import { startLookout, type Lookout } from './helpers/lookout.js';

test.describe.configure({ mode: 'serial' });

const STRANGER = 'faces/astronaut.png';
const KNOWN = 'faces/grace_hopper.jpg';

let lookout: Lookout;

async function api<T>(method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${lookout.url}/api${route}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  }).catch((err: Error) => {
    throw new Error(`${method} /api${route}: ${err.message} (${String(err.cause)})\n${lookout.output().slice(-4000)}`);
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} /api${route} answered ${res.status}: ${text}\n${lookout.output().slice(-4000)}`);
  return JSON.parse(text) as T;
}

type Recognized = { faces: { label: string }[] };
const recognize = (image: Buffer) => api<Recognized>('POST', '/recognize', { image: image.toString('base64') });
type Groups = { groups: { id: string; count: number }[] };

test.beforeAll(async () => {
  lookout = await startLookout({ OBJECT_DETECTION_ENABLED: 'false' });
  // Faces are grouped by their descriptors: the embedding recognizer must be there to describe them.
  await waitForEmbedding(lookout);
  // The stranger, three times (re-encoded, brighter, darker), before anyone is known: three unknown sightings.
  const [plain, , brighter, darker] = await captureVariations(testImage(STRANGER));
  for (const image of [plain, brighter, darker]) {
    const r = await recognize(image);
    expect(r.faces.map((f) => f.label)).toEqual(['unknown']);
  }
  // Someone known, and a face Lookout names as her.
  await trainOnServer(lookout, { 'grace-hopper': KNOWN });
  expect((await recognize(testImage(KNOWN))).faces.map((f) => f.label)).toEqual(['grace-hopper']);
  // Sightings are stored after the answer, their descriptors computed off the request path: wait for the group.
  await expect.poll(async () => (await api<Groups>('GET', '/review/groups')).groups.map((g) => g.count), { timeout: 60_000 }).toEqual([3]);
});

test.afterAll(async () => {
  await lookout?.close();
});

async function openFaces(page: Page): Promise<void> {
  await page.goto(`${lookout.url}/faces`);
  await expect(page.getByRole('heading', { level: 1, name: 'Faces' })).toBeVisible();
}

const group = (page: Page) => page.getByTestId('faces-group');
const outcome = (page: Page) => page.getByTestId('faces-outcome').locator('.notice');

test('the stranger seen three times is one group; assigned to a new person with the keyboard, the faces are their training photos; Undo takes them back', async ({
  page,
}) => {
  await openFaces(page);
  // Reached from the navigation, as every other page.
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Faces' })).toHaveAttribute('aria-current', 'page');
  await expect(group(page)).toHaveCount(1);
  // With the date, in the browser's language (#36: a time alone left the day to guess); the source in plain words.
  await expect(group(page).getByRole('heading', { level: 3 })).toHaveText(/^Seen 3 times, last on \S+.*\d{1,2}:\d\d/);
  await expect(group(page)).toContainText('by another program');
  // Each crop's tick box is beside the face, not over it (#36: it covered the crop's corner, an eye on a close crop).
  const crop = group(page).locator('.faces-crop').first();
  const [box, img] = [await crop.locator('input').boundingBox(), await crop.locator('img').boundingBox()];
  const apart =
    box!.y >= img!.y + img!.height || box!.y + box!.height <= img!.y || box!.x >= img!.x + img!.width || box!.x + box!.width <= img!.x;
  expect(apart, JSON.stringify({ box, img })).toBe(true);
  await expect(group(page).locator('img')).toHaveCount(3);
  // Each crop is really shown (fetched from GET /api/sightings/{id}/crop).
  await expect
    .poll(() =>
      group(page)
        .locator('img')
        .evaluateAll((imgs) => imgs.map((i) => (i as unknown as { naturalWidth: number }).naturalWidth > 0)),
    )
    .toEqual([true, true, true]);

  // Keyboard only: choose "Someone new…", type the name, press Enter.
  const who = group(page).getByLabel('This is…');
  await who.focus();
  await expect(who).toBeFocused();
  await who.selectOption({ label: 'Someone new…' });
  const name = group(page).getByLabel('New person’s name');
  await name.focus();
  await page.keyboard.type('Eileen Collins');
  await expect(group(page)).toContainText('Stored as eileen-collins');
  await page.keyboard.press('Enter');

  await expect(outcome(page)).toContainText('Assigned to Eileen Collins');
  await expect(outcome(page)).toContainText('3 faces became training photos of Eileen Collins');
  // The focus is on what happened (the group and its buttons are gone).
  await expect(outcome(page)).toBeFocused();
  await expect(page.getByTestId('faces-unknown-empty')).toBeVisible();
  await expect(page.getByTestId('faces-train').getByRole('button', { name: 'Train the model' })).toBeVisible();
  await expect(page.getByTestId('faces-action').first()).toContainText('Assigned 3 faces to Eileen Collins');

  // On the Training page: a new person with the three crops as photos.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Training' }).click();
  const person = page.locator('[data-testid="training-label"][data-label="eileen-collins"]');
  await expect(person).toContainText('Eileen Collins');
  await expect(person).toContainText('3 images');
  await person.getByRole('button', { name: /View images/ }).click();
  await expect(person.locator('img')).toHaveCount(3);

  // Back on Faces: Undo from the list of recent actions.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Faces' }).click();
  await page.getByTestId('faces-action').first().getByRole('button', { name: /^Undo/ }).click();
  await expect(outcome(page)).toContainText('Assigned 3 faces to Eileen Collins: undone.');
  await expect(group(page)).toHaveCount(1);
  await expect(group(page).getByRole('heading', { level: 3 })).toHaveText(/^Seen 3 times/);
  const labels = await api<{ labels: string[] }>('GET', '/labels');
  expect(labels.labels).toEqual(['grace-hopper']);
  await expect(page.getByTestId('faces-action').first()).toContainText('Undone');
});

test('a dismissed group goes, and comes back with Undo; ticking faces acts on those alone', async ({ page }) => {
  await openFaces(page);
  await expect(group(page)).toHaveCount(1);
  await group(page).getByRole('button', { name: 'Dismiss all 3' }).click();
  await expect(outcome(page)).toContainText('3 faces will not be shown for review again.');
  await expect(page.getByTestId('faces-unknown-empty')).toBeVisible();
  await outcome(page).getByRole('button', { name: /^Undo/ }).click();
  await expect(outcome(page)).toContainText('Dismissed 3 faces: undone.');
  await expect(group(page).getByRole('heading', { level: 3 })).toHaveText(/^Seen 3 times/);

  // One face ticked (Space on its checkbox): Dismiss takes that one only.
  await group(page).getByRole('checkbox', { name: 'Face 1' }).focus();
  await page.keyboard.press('Space');
  await expect(group(page).getByRole('checkbox', { name: 'Face 1' })).toBeChecked();
  await group(page).getByRole('button', { name: 'Dismiss 1 face ticked' }).click();
  await expect(outcome(page)).toContainText('1 face will not be shown for review again.');
  await expect(group(page).getByRole('heading', { level: 3 })).toHaveText(/^Seen 2 times/);
  await outcome(page).getByRole('button', { name: /^Undo/ }).click();
  await expect(group(page).getByRole('heading', { level: 3 })).toHaveText(/^Seen 3 times/);
});

test('a ticked face that is someone else is split off ("Not the same person") and kept apart; Undo puts it back', async ({ page }) => {
  await openFaces(page);
  await expect(group(page)).toHaveCount(1);
  await group(page).getByRole('checkbox', { name: 'Face 1' }).check();
  await group(page)
    .getByRole('button', { name: /^Not the same person as the others: split off 1 face ticked/ })
    .click();
  await expect(outcome(page)).toContainText('This face is not grouped with the others again.');
  await expect(group(page)).toHaveCount(2);
  await expect(group(page).first().getByRole('heading', { level: 3 })).toHaveText(/^Seen 2 times/);
  await checkAccessibility(page, 'faces-apart');
  await outcome(page).getByRole('button', { name: /^Undo/ }).click();
  await expect(outcome(page)).toContainText('Split 1 face off as someone else: undone.');
  await expect(group(page)).toHaveCount(1);
  await expect(group(page).getByRole('heading', { level: 3 })).toHaveText(/^Seen 3 times/);
});

test('faces ticked in different groups, one on its own among them, are told apart ("Not the same person"), on a desktop and a phone; Undo takes it back', async ({
  page,
}) => {
  type Actions = { actions: { id: string; kind: string; sighting_ids: string[]; undone_at: string | null }[] };
  await openFaces(page);
  await expect(group(page)).toHaveCount(1);
  // A face on its own first: split off its group, it is a group of one (no group to split it off from any more).
  await group(page).getByRole('checkbox', { name: 'Face 1' }).check();
  await group(page)
    .getByRole('button', { name: /^Not the same person as the others/ })
    .click();
  await expect(group(page)).toHaveCount(2);
  const alone = group(page).filter({ has: page.getByRole('heading', { level: 3, name: /^Seen once/ }) });
  const pair = group(page).filter({ has: page.getByRole('heading', { level: 3, name: /^Seen 2 times/ }) });
  const across = page.getByTestId('faces-across');

  for (const size of ['desktop', 'phone'] as const) {
    if (size === 'phone') await page.setViewportSize(PHONE_VIEWPORT);
    // Keyboard: Space on one face of each group. Each group's own "Not the same person" gives way to the page's.
    await alone.getByRole('checkbox', { name: 'Face 1' }).focus();
    await page.keyboard.press('Space');
    await expect(across).toHaveCount(0);
    await pair.getByRole('checkbox', { name: 'Face 1' }).focus();
    await page.keyboard.press('Space');
    await expect(across).toContainText('2 faces ticked in 2 groups.');
    await expect(page.getByTestId('faces-apart')).toHaveCount(0);
    const button = across.getByRole('button', { name: 'Not the same person: the 2 ticked faces are all different people' });
    await expect(button).toBeInViewport({ ratio: 1 });
    if (size === 'phone') {
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow).toBeLessThanOrEqual(0);
    }
    await checkAccessibility(page, `faces-apart-across-${size}`);
    await button.focus();
    await page.keyboard.press('Enter');
    await expect(outcome(page)).toContainText('These 2 faces are different people: Lookout never groups two of them together again.');
    await expect(outcome(page)).toBeFocused();
    await expect(across).toHaveCount(0);
    // A "different people" mark without a group: the two faces, every two of them apart.
    const [mark] = (await api<Actions>('GET', '/review/actions?limit=1')).actions;
    expect(mark).toMatchObject({ kind: 'apart', undone_at: null });
    expect(mark.sighting_ids).toHaveLength(2);
    await expect(group(page)).toHaveCount(2);

    await outcome(page).getByRole('button', { name: /^Undo/ }).click();
    await expect(outcome(page)).toContainText('Told 2 faces apart as different people: undone.');
    const [undone] = (await api<Actions>('GET', '/review/actions?limit=1')).actions;
    expect(undone).toMatchObject({ id: mark.id, kind: 'apart' });
    expect(undone.undone_at).not.toBeNull();
  }

  // The first split undone from the recent actions: one group of three again, as the tests after this one expect.
  await page
    .getByTestId('faces-action')
    .filter({ hasText: 'Split 1 face off as someone else' })
    .getByRole('button', { name: /^Undo/ })
    .click();
  await expect(outcome(page)).toContainText('Split 1 face off as someone else: undone.');
  await expect(group(page)).toHaveCount(1);
  await expect(group(page).getByRole('heading', { level: 3 })).toHaveText(/^Seen 3 times/);
});

test('a group whose faces may be two people is flagged and is not assigned whole: its faces of one person are ticked first', async ({
  page,
}) => {
  // The server's clustering makes groups that agree; one it made before (or under a higher limit) may not: as the API
  // would answer for it (#36).
  await page.route('**/api/review/groups*', async (route) => {
    const res = await route.fetch();
    const body = (await res.json()) as { groups: Record<string, unknown>[] };
    body.groups[0] = { ...body.groups[0], coherent: false, not_coherent_because: 'two of its faces are 0.9 apart', max_face_distance: 0.9 };
    await route.fulfill({ response: res, json: body });
  });
  await openFaces(page);
  await expect(group(page).getByTestId('faces-group-mixed')).toHaveText(
    'These faces may be more than one person. Tick the faces of one person to assign them.',
  );
  await expect(group(page).getByRole('button', { name: 'Tick faces to assign' })).toBeDisabled();
  await group(page).getByRole('checkbox', { name: 'Face 1' }).check();
  await expect(group(page).getByRole('button', { name: 'Assign 1 face' })).toBeEnabled();
  await checkAccessibility(page, 'faces-mixed-group');
  await page.unroute('**/api/review/groups*');
});

test('"Not this person" on a named face keeps a correction, and Undo removes it', async ({ page }) => {
  await openFaces(page);
  await page.getByLabel('Seen in').selectOption({ label: 'Last hour' });
  const grace = page.locator('[data-testid="faces-person"][data-label="grace-hopper"]');
  await expect(grace).toContainText('Seen once, on');
  await grace.getByRole('button', { name: /Show faces/ }).click();
  await expect(grace.getByTestId('faces-sighting')).toHaveCount(1);
  await grace.getByRole('button', { name: /Not this person/ }).click();
  await expect(outcome(page)).toContainText('Lookout will not give this face the name');
  await expect(grace.getByTestId('faces-sighting')).toContainText('Marked: not');
  const corrections = () => api<{ total: number }>('GET', '/corrections?label=grace-hopper').then((r) => r.total);
  expect(await corrections()).toBe(1);

  await outcome(page).getByRole('button', { name: /^Undo/ }).click();
  await expect(outcome(page)).toContainText(': undone.');
  expect(await corrections()).toBe(0);
  await expect(grace.getByRole('button', { name: /Not this person/ })).toBeVisible();
});

test('at phone size the page fits the screen and keeps its actions in reach', async ({ page }) => {
  await page.setViewportSize(PHONE_VIEWPORT);
  await openFaces(page);
  await expect(group(page)).toHaveCount(1);
  await page.getByLabel('Seen in').selectOption({ label: 'Last hour' });
  await page
    .locator('[data-testid="faces-person"][data-label="grace-hopper"]')
    .getByRole('button', { name: /Show faces/ })
    .click();
  await expect(page.getByTestId('faces-sighting')).toHaveCount(1);
  // Assign with nobody chosen: says what is missing and goes back to the list.
  await group(page).getByRole('button', { name: 'Assign', exact: true }).click();
  await expect(group(page)).toContainText('Choose who this is, or “Someone new”.');
  await expect(group(page).getByLabel('This is…')).toBeFocused();
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  expect(overflow).toBeLessThanOrEqual(0);
  // Every control of the group is on screen once scrolled to: nothing is cut off at the right.
  for (const control of [
    group(page).getByLabel('This is…'),
    group(page).getByRole('button', { name: 'Assign', exact: true }),
    group(page).getByRole('button', { name: /^Dismiss/ }),
  ]) {
    await control.scrollIntoViewIfNeeded();
    await expect(control).toBeInViewport({ ratio: 1 });
  }
  await checkAccessibility(page, 'faces-phone');
});

test('assigned to an existing person, then "Train now": progress, the summary, and no more Undo', async ({ page }) => {
  await openFaces(page);
  await group(page).getByLabel('This is…').selectOption({ label: 'grace-hopper' });
  await group(page).getByRole('button', { name: 'Assign', exact: true }).click();
  await expect(outcome(page)).toContainText('3 faces became training photos of grace-hopper');
  const train = page.getByTestId('faces-train');
  await train.getByRole('button', { name: 'Train the model' }).click();
  await expect(train.getByTestId('train-summary')).toContainText('Lookout now knows 1 person');
  await expect(page.getByTestId('faces-action').first()).toContainText('Kept: trained since');
  await expect(page.getByTestId('faces-action').first().getByRole('button', { name: /^Undo/ })).toHaveCount(0);
  // The server agrees: the assign cannot be undone now that its photos are in the models.
  const actions = await api<{ actions: { kind: string; undoable: boolean; not_undoable_because: string | null }[] }>(
    'GET',
    '/review/actions',
  );
  expect(actions.actions[0]).toMatchObject({ kind: 'assign', undoable: false, not_undoable_because: 'trained' });
});
