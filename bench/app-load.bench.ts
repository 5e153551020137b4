/**
 * First load of the web app in headless Chromium, cold (empty cache) and warm (reload): bytes transferred and
 * time to interactive, i.e. from navigation start until the dashboard shows the server's indicators (the
 * first data a person acts on) and the navigation responds. Reference in the same run: a minimal static page
 * from the same server, so the figure says what the app adds over Chromium's own navigation cost.
 */
import type { Page } from 'playwright-core';
import { chromiumInstalled, launchChromium, startBenchServer } from './browser.js';
import { median, type BenchRow } from './types.js';

const RUNS = 7;

interface LoadFigures {
  bytes: number;
  ms: number;
}

/** Sums what went over the wire (headers + encoded bodies) for every response the page loaded. */
function countBytes(page: Page): () => Promise<number> {
  const pending: Promise<number>[] = [];
  page.on('requestfinished', (req) => {
    pending.push(
      req.sizes().then(
        (s) => s.responseHeadersSize + s.responseBodySize,
        () => 0,
      ),
    );
  });
  return async () => (await Promise.all(pending)).reduce((a, b) => a + b, 0);
}

async function loadOnce(url: string, ready: (page: Page) => Promise<void>, warm: boolean): Promise<LoadFigures> {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ serviceWorkers: 'block' });
    const page = await context.newPage();
    if (warm) {
      await page.goto(url);
      await ready(page);
      // Let the first load settle (the router preloads the page a hovered link leads to): a request still in
      // flight at the reload would be counted as the warm load's.
      await page.waitForLoadState('networkidle');
    }
    const bytes = countBytes(page);
    await (warm ? page.reload() : page.goto(url));
    await ready(page);
    const ms = await page.evaluate(() => performance.now());
    await page.waitForLoadState('networkidle');
    return { bytes: await bytes(), ms };
  } finally {
    await browser.close();
  }
}

async function measure(url: string, ready: (page: Page) => Promise<void>, warm: boolean): Promise<{ bytes: number; ms: number }> {
  const runs: LoadFigures[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await loadOnce(url, ready, warm));
  return { bytes: median(runs.map((r) => r.bytes)), ms: median(runs.map((r) => r.ms)) };
}

export async function benchAppLoad(repoRoot: string): Promise<BenchRow[]> {
  if (!(await chromiumInstalled())) {
    console.log('app load: skipped, Chromium is not installed (apt-get install -y chromium)');
    return [];
  }
  const server = await startBenchServer(repoRoot);
  try {
    const appReady = async (page: Page) => {
      await page.getByTestId('indicator-trained').waitFor();
      await page.getByRole('link', { name: 'Training', exact: true }).click({ trial: true });
    };
    const blankReady = async (page: Page) => {
      await page.locator('body').waitFor();
    };
    // The API's plain error page is the smallest document this server serves: the navigation-cost baseline.
    const blank = `${server.url}/api/health`;
    const rows: BenchRow[] = [];
    for (const warm of [false, true]) {
      const app = await measure(`${server.url}/`, appReady, warm);
      const base = await measure(blank, blankReady, warm);
      const kind = warm ? 'warm (reload, HTTP cache)' : 'cold (empty cache)';
      rows.push(
        {
          name: `web app first load ${kind}: time to interactive (dashboard with indicators)`,
          unit: 'ms',
          lookout: app.ms,
          reference: base.ms,
          referenceName: 'bare JSON page from the same server',
          ratio: app.ms / base.ms,
        },
        {
          name: `web app first load ${kind}: bytes transferred`,
          unit: 'bytes',
          lookout: app.bytes,
          reference: base.bytes,
          referenceName: 'bare JSON page',
        },
      );
    }
    return rows;
  } finally {
    await server.close();
  }
}
