/**
 * Starts the real service in this process on 127.0.0.1 with a fresh data directory, and talks to it over
 * real HTTP. Vision workers run the TypeScript sources through tsx. Every answer is checked against the API
 * contract (helpers/contract.ts); `close()` fails when one was not as documented.
 */
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { createService, type Service, type ServiceOptions } from '../../server/app.js';
import { loadSettings } from '../../server/config/settings.js';
import { createLogger } from '../../server/logger.js';
import { checkedFetch, contractProblems } from './contract.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TESTDATA = path.resolve(REPO_ROOT, 'test/fixtures/images');

export interface TestServer {
  url: string;
  dataDir: string;
  service: Service;
  /** Answers that were not as the contract documents them, so far. */
  contractProblems: string[];
  close(): Promise<void>;
}

/** `options`: what createService takes besides the settings (#37: the SharedFiles seam). */
export async function startTestServer(
  env: Record<string, string> = {},
  dataDir?: string,
  options: ServiceOptions = {},
): Promise<TestServer> {
  const dir = dataDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-test-')));
  const settings = loadSettings({ DATA_DIR: dir, WORKERS: '2', LOG_LEVEL: 'silent', ...env }, REPO_ROOT);
  const service = await createService(settings, createLogger(settings.logLevel), options);
  const checked = checkedFetch(service.app.fetch);
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: checked.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir: dir,
    service,
    contractProblems: checked.problems,
    async close() {
      await checked.settled();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.close();
      if (!dataDir) await fs.rm(dir, { recursive: true, force: true });
      if (checked.problems.length) throw new Error(`answers not as documented in shared/api/routes.ts:\n${checked.problems.join('\n')}`);
    },
  };
}

export async function readTestImage(rel: string): Promise<Buffer> {
  return fs.readFile(path.join(TESTDATA, rel));
}

/** POST JSON and return status and parsed body. */
export async function postJson(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return readChecked('POST', url, res);
}

export async function getJson(url: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  return readChecked(init?.method ?? 'GET', url, await fetch(url, init));
}

/**
 * Reads a JSON answer and fails the calling test at once when it is not as the contract documents it (the
 * test server also checks every answer, raw fetches included, and fails at close).
 */
async function readChecked(method: string, url: string, res: Response): Promise<{ status: number; body: any }> {
  const text = await res.text();
  const problems = contractProblems(method.toUpperCase(), new URL(url).pathname, res.status, res.headers.get('content-type'), text);
  if (problems.length) throw new Error(`answer not as documented in shared/api/routes.ts: ${problems.join('; ')}`);
  return { status: res.status, body: JSON.parse(text) };
}

/** Uploads one training image as multipart, as the web app and the identity provider extension do. */
export async function uploadImage(
  base: string,
  label: string,
  bytes: Uint8Array,
  filename = 'capture.jpg',
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.set('label', label);
  form.set('file', new Blob([bytes]), filename);
  return readChecked('POST', `${base}/api/images`, await fetch(`${base}/api/images`, { method: 'POST', body: form }));
}
