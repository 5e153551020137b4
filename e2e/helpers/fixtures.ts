/**
 * Playwright's `test` and `expect` with an accessibility check (issue 18, item 7): when a test passes, every page
 * still open in its browser contexts (the `context` fixture's and any the spec opened from the `browser` fixture)
 * is run through axe-core, and the test fails on any serious or critical finding. Every check also keeps a
 * full-page screenshot at desktop and phone size as artefacts. Specs that launch their own browsers, or pass
 * through states worth checking before the end, call `checkAccessibility(page, name)` themselves.
 */
import fs from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { test as base, expect, type Page, type TestInfo } from '@playwright/test';
import { DESKTOP_VIEWPORT, PHONE_VIEWPORT } from './browser.js';

export type { Browser, BrowserContext, Locator, Page, Request, Route, TestInfo } from '@playwright/test';
export { chromium } from '@playwright/test';
export { expect };

/**
 * WCAG 2.0, 2.1 and 2.2 at levels A and AA (what accessibility law and procurement ask for), plus axe's best
 * practices: they catch what WCAG phrases loosely (landmarks, one main, heading order, names of regions); only
 * serious and critical findings fail a test, so the moderate ones among them are reported, not enforced.
 */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa', 'best-practice'];
const FAILING_IMPACTS = new Set(['serious', 'critical']);

/** One serious or critical finding, as a line of a failure message. */
function describeViolation(v: { id: string; impact?: string | null; help: string; nodes: { target: unknown[] }[] }): string {
  const targets = v.nodes.map((n) => n.target.map((t) => (Array.isArray(t) ? t.join(' >>> ') : String(t))).join(' > '));
  return `  - ${v.id} (${v.impact}): ${v.help}\n      ${targets.slice(0, 8).join('\n      ')}${targets.length > 8 ? `\n      … and ${targets.length - 8} more` : ''}`;
}

/** The page's address without its query: enough to find it, and no tokens (a sign-out's id_token_hint) in logs. */
function where(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

/** A name safe as a file name. */
function slug(name: string): string {
  return name.replace(/[^a-z0-9._-]+/gi, '-').replace(/^-+|-+$/g, '') || 'page';
}

/** True for documents the browser renders itself (JSON, text, images): not the app's markup, nothing to check. */
async function isHtml(page: Page): Promise<boolean> {
  if (!/^https?:/.test(page.url())) return false;
  await page.waitForLoadState('domcontentloaded');
  // A string: this project's e2e code is compiled without the DOM's types.
  return (await page.evaluate('document.contentType')) === 'text/html';
}

/**
 * Legacy mode: one axe.run in the page (same-origin frames included), where the default opens a blank page in the
 * test's context to merge frame results: a page a spec would see appear, and refused for `browser.newPage()` pages.
 */
const axe = (page: Page) => new AxeBuilder({ page }).withTags(AXE_TAGS).setLegacyMode(true);

async function analyze(page: Page) {
  try {
    return await axe(page).analyze();
  } catch (err) {
    // A navigation under way destroys the page's context mid-run: let it settle and run once more.
    if (!/context was destroyed|navigat/i.test(String(err))) throw err;
    await page.waitForLoadState('domcontentloaded');
    return axe(page).analyze();
  }
}

/** Full-page screenshots at desktop and phone size, attached to the test; the page's own size is restored. */
async function screenshots(page: Page, name: string, testInfo: TestInfo): Promise<void> {
  const original = page.viewportSize();
  const sizes = original ? { desktop: DESKTOP_VIEWPORT, phone: PHONE_VIEWPORT } : { window: null };
  try {
    for (const [label, size] of Object.entries(sizes)) {
      if (size) await page.setViewportSize(size);
      const file = testInfo.outputPath(`a11y-${slug(name)}-${label}.png`);
      await page.screenshot({ path: file, fullPage: true, animations: 'disabled' });
      await testInfo.attach(`${name} (${label})`, { path: file, contentType: 'image/png' });
    }
  } finally {
    if (original) await page.setViewportSize(original);
  }
}

/**
 * Runs axe on the page as it is now and saves screenshots at desktop and phone size; answers one line per serious
 * or critical violation. The full axe results are attached as JSON, moderate findings included.
 */
export async function accessibilityFindings(page: Page, name: string, testInfo: TestInfo = base.info()): Promise<string[]> {
  if (!(await isHtml(page))) return [];
  const results = await analyze(page);
  const file = testInfo.outputPath(`a11y-${slug(name)}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({ url: where(results.url), violations: results.violations, incomplete: results.incomplete }, null, 2),
  );
  await testInfo.attach(`${name} (axe)`, { path: file, contentType: 'application/json' });
  await screenshots(page, name, testInfo);
  return results.violations
    .filter((v) => FAILING_IMPACTS.has(v.impact ?? ''))
    .map((v) => `${name} ${where(results.url)}\n${describeViolation(v)}`);
}

/**
 * Checks the page as it is now (see `accessibilityFindings`). A finding fails the test but lets it go on, so one run lists
 * every state's findings, not only the first.
 */
export async function checkAccessibility(page: Page, name: string): Promise<void> {
  const lines = await accessibilityFindings(page, name);
  expect.soft(lines, `accessibility: serious or critical axe findings (${name})`).toEqual([]);
}

/** Pages a spec said are not the app's (a stand-in for another site, say): the end-of-test check leaves them. */
const notOurs = new WeakSet<Page>();

/** Leaves `page` out of the end-of-test check, for `reason` (recorded as an annotation of the test). */
export function skipAccessibilityCheck(page: Page, reason: string): void {
  notOurs.add(page);
  base.info().annotations.push({ type: 'accessibility check skipped', description: reason });
}

export const test = base.extend({
  // Wraps the built-in context so this runs after the test body and before Playwright closes the contexts.
  context: async ({ context, browser }, use, testInfo) => {
    await use(context);
    // Only after a pass: a failing test's page is in no state worth judging, and its own failure comes first.
    if (testInfo.status !== 'passed') return;
    const lines: string[] = [];
    let n = 0;
    for (const ctx of new Set([context, ...browser.contexts()])) {
      for (const page of ctx.pages()) {
        if (page.isClosed() || notOurs.has(page)) continue;
        n += 1;
        lines.push(...(await accessibilityFindings(page, `end of test, page ${n}`, testInfo)));
      }
    }
    if (lines.length > 0) throw new Error(`Accessibility: serious or critical axe findings:\n${lines.join('\n')}`);
  },
});
