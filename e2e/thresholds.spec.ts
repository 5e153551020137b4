/**
 * Issue #25 section 3 on the Models page: each recognizer's thresholds with their defaults; Preview shows what a
 * proposed limit does to the people enrolled (before -> after) before anything is saved; Save keeps it on the server
 * (it survives a reload of the page and a restart of the server); Reset to default drops it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkAccessibility, expect, type Page, test } from './helpers/fixtures.js';
import { screenshot, startLookout, TESTDATA, type Lookout, uploadCaptures } from './helpers/lookout.js';

test.describe.configure({ mode: 'serial' });

const PEOPLE = { grace: 'faces/grace_hopper.jpg', eileen: 'faces/astronaut.png' };

let lookout: Lookout;

type Entry = {
  max: number;
  ratio_max: number | null;
  overridden: string[];
  defaults: { max: number; ratio_max: number | null; verify_max: number };
  similarity: { max: number; verify_max: number };
};

async function thresholds(): Promise<{ lbph: Entry }> {
  const res = await fetch(`${lookout.url}/api/models/thresholds`);
  expect(res.status).toBe(200);
  return (await res.json()) as { lbph: Entry };
}

/** LBPH's calibrated default limit (shared/recognition/rules.ts), as the server says it. */
let defaultMax: number;

test.beforeAll(async () => {
  lookout = await startLookout();
  // Two people, several photos each: the preview decides each photo against the others.
  for (const [label, file] of Object.entries(PEOPLE)) {
    await uploadCaptures(lookout.url, label, fs.readFileSync(path.join(TESTDATA, file)));
  }
  const train = await fetch(`${lookout.url}/api/train`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(train.status, await train.text()).toBe(200);
  const { lbph } = await thresholds();
  defaultMax = lbph.defaults.max;
  expect(lbph).toMatchObject({ max: defaultMax, overridden: [] });
  // The values the tests set are well away from the default.
  expect(defaultMax).toBeGreaterThan(65);
});

test.afterAll(async () => {
  await lookout?.close();
});

const card = (page: Page) => page.getByTestId('thresholds-lbph');
const limit = (page: Page) => card(page).getByLabel('Limit', { exact: true });

test('each recognizer shows its thresholds with their defaults', async ({ page }) => {
  await page.goto(`${lookout.url}/config`);
  await expect(page.getByRole('heading', { name: 'When a face gets a name' })).toBeVisible();
  for (const r of ['lbph', 'embedding']) {
    const c = page.getByTestId(`thresholds-${r}`);
    for (const name of ['Limit', 'Sure up to', 'Margin ratio', 'Verification limit'])
      await expect(c.getByLabel(name, { exact: true })).toBeVisible();
  }
  await expect(limit(page)).toHaveValue(String(defaultMax));
  await expect(card(page).getByTestId('default-lbph-max')).toHaveText(`Default: ${defaultMax}`);
  const ratio = (await thresholds()).lbph.defaults.ratio_max;
  await expect(card(page).getByTestId('default-lbph-ratio_max')).toHaveText(
    ratio === null || ratio === 1 ? 'Default: off' : `Default: ${ratio}`,
  );
  await expect(card(page).getByRole('button', { name: 'Reset to default' })).toBeDisabled();
  // #36: each limit in the units of a face's percentage, as the server gives them; it follows what is typed.
  const similarity = (await thresholds()).lbph.similarity;
  await expect(card(page).getByTestId('similarity-lbph-max')).toHaveText(`≈ ${Math.round(similarity.max)}% similarity`);
  await expect(card(page).getByTestId('similarity-lbph-verify_max')).toHaveText(`≈ ${Math.round(similarity.verify_max)}% similarity`);
  await expect(card(page).getByTestId('similarity-lbph-ratio_max')).toHaveText('');
  await limit(page).fill('42');
  await expect(card(page).getByTestId('similarity-lbph-max')).toHaveText('≈ 80% similarity');
});

test('Preview shows what a lower limit does to the people enrolled, and saves nothing', async ({ page }) => {
  await page.goto(`${lookout.url}/config`);
  await limit(page).fill('20');
  await card(page).getByRole('button', { name: 'Preview' }).click();
  const preview = card(page).getByTestId('preview-lbph');
  await expect(preview).toBeVisible();
  // Every count as "before → after" (or "n, unchanged"); a limit of 20 names fewer of them right.
  const right = preview.getByTestId('preview-enrolled-named_right');
  await expect(right).toHaveText(/^\d+( → \d+|, unchanged)$/);
  const m = /^(\d+)(?: → (\d+)|, unchanged)$/.exec((await right.textContent()) ?? '')!;
  const before = Number(m[1]);
  const after = m[2] === undefined ? before : Number(m[2]);
  expect(before).toBeGreaterThan(0);
  expect(after).toBeLessThanOrEqual(before);
  await expect(preview.getByTestId('preview-enrolled-unknown')).toHaveText(/^\d+( → \d+|, unchanged)$/);
  await checkAccessibility(page, 'thresholds-preview');
  await screenshot(page, 'thresholds-preview');
  expect((await thresholds()).lbph.max).toBe(defaultMax);
});

test('a saved limit survives a reload and a restart, and Reset to default drops it', async ({ page }) => {
  await page.goto(`${lookout.url}/config`);
  await limit(page).fill('60');
  await card(page).getByRole('button', { name: 'Save' }).click();
  await expect(card(page).getByTestId('thresholds-lbph-saved')).toContainText('Saved');
  // #36: the limit alone changed; the verification limit stays as it was (it went 75 -> 45 unasked).
  const verify = (await thresholds()).lbph.defaults.verify_max;
  expect((await thresholds()).lbph).toMatchObject({ max: 60, verify_max: verify, overridden: ['max'] });
  await expect(card(page).getByLabel('Verification limit', { exact: true })).toHaveValue(String(verify));

  await page.reload();
  await expect(limit(page)).toHaveValue('60');
  await expect(card(page).getByTestId('default-lbph-max')).toHaveText(`Default: ${defaultMax} (set here)`);
  await expect(card(page).getByTestId('thresholds-lbph-own')).toBeVisible();

  await lookout.restart();
  await page.reload();
  await expect(limit(page)).toHaveValue('60');

  await card(page).getByRole('button', { name: 'Reset to default' }).click();
  await expect(card(page).getByTestId('thresholds-lbph-saved')).toContainText('back to its default');
  await expect(limit(page)).toHaveValue(String(defaultMax));
  expect((await thresholds()).lbph).toMatchObject({ max: defaultMax, overridden: [] });
});

test('a value out of range is refused with the reason, and nothing changes', async ({ page }) => {
  await page.goto(`${lookout.url}/config`);
  await card(page).getByLabel('Margin ratio', { exact: true }).fill('1.5');
  await card(page).getByRole('button', { name: 'Save' }).click();
  await expect(card(page).getByTestId('thresholds-lbph-problem')).toContainText('Margin ratio must be above 0 and at most 1');
  expect((await thresholds()).lbph.max).toBe(defaultMax);
});
