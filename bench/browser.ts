/**
 * Browser benchmarks' plumbing: the real service in this process on 127.0.0.1 (serving the built web app), and
 * Debian's Chromium started headless by playwright-core with the same flags the e2e tests use.
 */
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { chromium, type Browser } from 'playwright-core';
import sharp from 'sharp';
import { captureVariations } from './captures.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.js';
import { createService, type Service } from '../server/app.js';
import { loadSettings } from '../server/config/settings.js';
import { createLogger } from '../server/logger.js';

export interface BenchServer {
  url: string;
  service: Service;
  close(): Promise<void>;
}

/**
 * `intercept`: looks at every request before the service does; a Response it returns is the answer (the kiosk
 * bench refuses model downloads with it, to prove a cold start took them from the browser's offline cache).
 */
export async function startBenchServer(
  repoRoot: string,
  env: Record<string, string> = {},
  intercept?: (req: Request) => Response | null,
): Promise<BenchServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-web-'));
  const settings = loadSettings({ DATA_DIR: dataDir, LOG_LEVEL: 'error', ...env }, repoRoot);
  const service = await createService(settings, createLogger('error'));
  const server: ServerType = await new Promise((resolve) => {
    const fetch: typeof service.app.fetch = intercept
      ? (req, ...rest) => intercept(req) ?? service.app.fetch(req, ...rest)
      : service.app.fetch;
    const s = serve({ fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    service,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, ...args], headless: true });
}

/** Whether the Chromium the benchmarks need is installed (`apt-get install -y chromium`). */
export async function chromiumInstalled(): Promise<boolean> {
  return fs.access(CHROMIUM_PATH).then(
    () => true,
    () => false,
  );
}

/** One person, four variations of one photo, as the e2e tests train; the server trained on them. */
export async function trainPerson(server: BenchServer, photo: string, label = 'grace'): Promise<void> {
  const shots = await captureVariations(await sharp(photo).toBuffer());
  for (const [i, bytes] of shots.entries()) {
    const form = new FormData();
    form.set('label', label);
    form.set('file', new Blob([new Uint8Array(bytes)]), `${label}-${i}.jpg`);
    const res = await fetch(`${server.url}/api/images`, { method: 'POST', body: form });
    if (!res.ok) throw new Error(`upload answered ${res.status}`);
  }
  const res = await fetch(`${server.url}/api/train`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  if (!res.ok) throw new Error(`training answered ${res.status}: ${await res.text()}`);
}
