/**
 * Issue #18 item 5: after following a link of the app (client-side routing), the focus is on the new page's main
 * heading, as a screen reader user expects, not left on the link of the page just left; a first load leaves it alone.
 */
import { expect, test, type Page } from './helpers/fixtures.js';
import { startLookout, type Lookout } from './helpers/lookout.js';

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout();
});
test.afterAll(async () => {
  await lookout?.close();
});

/** The focused element as `TAG text`. */
function focused(page: Page): Promise<string> {
  return page.evaluate<string>(
    `(() => { const e = document.activeElement; return e ? e.tagName + ' ' + (e.textContent || '').trim() : 'none'; })()`,
  );
}

test('following a link moves the focus to the new page’s heading', async ({ page }) => {
  await page.goto(`${lookout.url}/`);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  // A first load: the browser's own place (the page), not a heading.
  expect(await focused(page)).toMatch(/^BODY/);

  const nav = page.getByRole('navigation', { name: 'Main' });
  // By mouse, to a page loaded on first visit.
  await nav.getByRole('link', { name: 'Training' }).click();
  await expect(page).toHaveURL(/\/training$/);
  await expect(page.getByRole('heading', { name: 'Training', level: 1 })).toBeFocused();
  await expect(page.getByRole('heading', { name: 'Training', level: 1 })).toHaveAttribute('tabindex', '-1');

  // By keyboard, as a keyboard user does it.
  await nav.getByRole('link', { name: 'Objects' }).focus();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\/objects$/);
  await expect(page.getByRole('heading', { level: 1 })).toBeFocused();
  expect(await focused(page)).toMatch(/^H1 Object detection/);

  // Back to a page seen before, and through the browser's Back button.
  await nav.getByRole('link', { name: 'Dashboard' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toBeFocused();
  await page.goBack();
  await expect(page).toHaveURL(/\/objects$/);
  await expect(page.getByRole('heading', { name: 'Object detection', level: 1 })).toBeFocused();

  // A link inside a page works the same (the not-found page's link to the dashboard).
  await page.goto(`${lookout.url}/nowhere`);
  await page.getByRole('link', { name: 'Go to the dashboard' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toBeFocused();
  // Tab goes on from the heading into the page, never back to the heading itself.
  await page.keyboard.press('Tab');
  expect(await focused(page)).not.toMatch(/^H1/);
});
