/** How the e2e tests and the browser benchmarks start Debian's Chromium (docs/ARCHITECTURE.md#environment-facts). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** No sandbox (root), no GPU, and no background calls home: this machine's network is closed. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
