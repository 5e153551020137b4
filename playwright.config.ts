/**
 * End-to-end tests: Debian's Chromium (never a downloaded browser) against the real server, started by each
 * test file on 127.0.0.1 with a temporary data directory (e2e/helpers/lookout.ts). One worker: the server's
 * engines and Chromium share this machine's two cores.
 */
import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './e2e/helpers/browser.js';

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'e2e/test-results',
  timeout: 90_000,
  expect: { timeout: 20_000 },
  workers: 1,
  fullyParallel: false,
  retries: 0,
  reporter: [['list']],
  use: {
    viewport: { width: 1280, height: 800 },
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
    trace: 'retain-on-failure',
  },
});
