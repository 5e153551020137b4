/**
 * Runs the real event processor for tests: in this process (`startProcessor`, the in-process queue or Kafka),
 * or as the process `npm run processor` starts (`spawnProcessor`, the compiled dist/ build, so it can be killed).
 * Mails are counted where the product puts them: `.eml` files in `<DATA_DIR>/outbox/` for the default transport.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { ProcessorReady } from '../../shared/api/processor.js';
import { loadProcessorSettings } from '../../server/config/settings.js';
import { createLogger } from '../../server/logger.js';
import { createProcessor, type Processor, type ProcessorOptions } from '../../server/processor/processor.js';
import { freePort } from './server-process.js';
import { REPO_ROOT, startTestServer, type TestServer } from './test-server.js';

export { freePort };

export const PROCESSOR_MAIN = path.join(REPO_ROOT, 'dist/server/processor/main.js');

/** Settings that make a test fast: frequent polls, short retries, quiet. */
export const FAST = {
  PROCESSOR_POLL_INTERVAL_MS: '250',
  MAIL_RETRY_BASE_MS: '100',
  MAIL_RETRY_MAX_MS: '400',
  KAFKA_REQUEST_TIMEOUT_MS: '2000',
  KAFKA_SESSION_TIMEOUT_MS: '6000',
  LOG_LEVEL: 'silent',
};

/** The real Lookout server as the processor's backend (no object detector or embedding nets: labels are all it reads). */
export function startBackend(): Promise<TestServer> {
  return startTestServer({ OBJECT_DETECTION_ENABLED: 'false', EMBEDDING_ENABLED: 'false' });
}

export async function tempDir(prefix = 'lookout-processor-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The mails in an outbox directory, oldest first, as their raw RFC 5322 text. */
export async function outbox(dataDir: string): Promise<{ name: string; raw: string }[]> {
  const dir = path.join(dataDir, 'outbox');
  // A mail being written is a `.tmp-…eml` file until its rename: not a mail yet, and gone by the time it is read
  // (a CI run listed one and failed with ENOENT).
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.eml') && !n.startsWith('.')).sort();
  return Promise.all(names.map(async (name) => ({ name, raw: await fs.readFile(path.join(dir, name), 'utf8') })));
}

export interface InProcessProcessor {
  processor: Processor;
  url: string;
  ready(): Promise<ProcessorReady>;
  close(): Promise<void>;
}

/**
 * The processor in this process, with its health server on 127.0.0.1: on `env.PROCESSOR_PORT` when given (so a
 * processor can come back where the previous one was), else on a free port.
 */
export async function startProcessor(env: Record<string, string>, options: Partial<ProcessorOptions> = {}): Promise<InProcessProcessor> {
  const settings = loadProcessorSettings({ ...FAST, ...env }, REPO_ROOT);
  const processor = await createProcessor(settings, createLogger(settings.logLevel), { version: 'test', ...options });
  const port = env.PROCESSOR_PORT ? settings.processorPort : 0;
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: processor.app.fetch, port, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  void processor.start();
  return {
    processor,
    url,
    ready: async () => (await (await fetch(`${url}/ready`)).json()) as ProcessorReady,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await processor.close();
    },
  };
}

export interface SpawnedProcessor {
  child: ChildProcess;
  url: string;
  output(): string;
  exited: Promise<number | null>;
  ready(): Promise<ProcessorReady | null>;
  stop(): Promise<void>;
}

/**
 * `node dist/server/processor/main.js` with `env` (and nothing else of this process' environment but PATH), its
 * health server on `env.PROCESSOR_PORT` when given, else on a free port.
 */
export async function spawnProcessor(env: Record<string, string>): Promise<SpawnedProcessor> {
  const port = env.PROCESSOR_PORT ? Number(env.PROCESSOR_PORT) : await freePort();
  const child = spawn(process.execPath, [PROCESSOR_MAIN], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', ...FAST, LOG_LEVEL: 'info', PROCESSOR_PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const ready = async () => {
    try {
      return (await (await fetch(`${url}/ready`)).json()) as ProcessorReady;
    } catch {
      return null;
    }
  };
  await waitFor(`the processor on ${url} (${out})`, async () => child.exitCode === null && (await ready()));
  return {
    child,
    url,
    output: () => out,
    exited,
    ready,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
