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
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.js';
import { createService, type Service } from '../server/app.js';
import { loadSettings } from '../server/config/settings.js';
import { createLogger } from '../server/logger.js';

export interface BenchServer {
  url: string;
  service: Service;
  close(): Promise<void>;
}

export async function startBenchServer(repoRoot: string, env: Record<string, string> = {}): Promise<BenchServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-web-'));
  const settings = loadSettings({ DATA_DIR: dataDir, LOG_LEVEL: 'error', ...env }, repoRoot);
  const service = await createService(settings, createLogger('error'));
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: service.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
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
