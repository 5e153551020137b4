import { expect, test } from './helpers/fixtures.js';
import { screenshot, startLookout, type Lookout } from './helpers/lookout.js';

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout();
});
test.afterAll(async () => {
  await lookout.close();
});

test('the dashboard shows the first step, the four indicators and an empty list of people', async ({ page }) => {
  const processorStatus = page.waitForResponse((r) => r.url().endsWith('/api/processor/status'));
  await page.goto(lookout.url);
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  await expect(page.getByTestId('indicator-trained')).toContainText('Not trained');
  await expect(page.getByTestId('indicator-detection')).toContainText('local');
  await expect(page.getByTestId('indicator-remote')).toContainText('Not configured');
  await expect(page.getByTestId('indicator-objects')).toContainText(/Ready|Loading/);
  await expect(page.getByTestId('labels-empty')).toBeVisible();
  // A first run leads with the one step to take (#29), a link to the Training page.
  await expect(page.getByTestId('first-step').getByRole('heading', { name: 'Add your first person' })).toBeVisible();
  await expect(page.getByTestId('first-step').getByRole('link', { name: 'Add your first person' })).toHaveAttribute('href', '/training');
  // No PROCESSOR_URL: the server says so and the dashboard shows no processor card.
  expect(await (await processorStatus).json()).toMatchObject({ configured: false });
  await expect(page.getByTestId('processor-card')).toHaveCount(0);
  await screenshot(page, 'dashboard-desktop');
});
