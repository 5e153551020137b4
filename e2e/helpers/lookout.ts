/**
 * Starts the real Lookout server (`node dist/server/main.js`, as `npm start` does) on 127.0.0.1 with a
 * temporary data directory, waits until /api/health answers, and stops it. `restart()` brings it back on the
 * same port and data, for the offline tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureVariations } from '../../bench/captures.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TESTDATA = path.resolve(REPO_ROOT, 'test/fixtures/images');
export const SCREENSHOTS = path.join(REPO_ROOT, 'e2e/screenshots');

export interface Lookout {
  url: string;
  port: number;
  dataDir: string;
  /** Everything the server wrote to stdout and stderr, for failure messages. */
  output(): string;
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** Stop and remove the data directory. */
  close(): Promise<void>;
}

/**
 * Settings for a Lookout whose remote detector is this project's own model server at `url` (FaceBoxes, running in
 * the test's process), LBPH only: under load a call may pass the default 5 s and the check would (rightly) fall back
 * to local, so the timeout is long; while the model server is up, each call must reach it.
 */
export function ownModelServerEnv(url: string): Record<string, string> {
  return {
    REMOTE_DETECTOR_URL: url,
    REMOTE_DETECTOR_CHECK_INTERVAL_MS: '200',
    REMOTE_DETECTOR_TIMEOUT_MS: '60000',
    EMBEDDING_ENABLED: 'false',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENABLED: 'false',
  };
}

/** A port free on 127.0.0.1 now (for a server started next). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startLookout(env: Record<string, string> = {}): Promise<Lookout> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-e2e-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  let log = '';

  const start = async () => {
    child = spawn(process.execPath, ['dist/server/main.js'], {
      cwd: REPO_ROOT,
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, WORKERS: '1', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (log += d));
    child.stderr!.on('data', (d) => (log += d));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`Lookout exited with ${child.exitCode}:\n${log}`);
      try {
        if ((await fetch(`${url}/api/health`)).ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`Lookout did not answer within 30 s:\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGTERM');
    });
  };

  await start();
  return {
    url,
    port,
    dataDir,
    output: () => log,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
    close: async () => {
      await stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Saves a screenshot of the page as a test artefact under e2e/screenshots/ (not committed). */
export async function screenshot(page: import('@playwright/test').Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * Enrols a person as the camera would: the capture variations of one photo (bench/captures.ts), each uploaded with
 * POST /api/images. Throws with the server's answer when an upload is refused.
 */
export async function uploadCaptures(url: string, label: string, photo: Buffer): Promise<void> {
  for (const [i, bytes] of (await captureVariations(photo)).entries()) {
    const form = new FormData();
    form.set('label', label);
    form.set('file', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), `capture-${i}.jpg`);
    const res = await fetch(`${url}/api/images`, { method: 'POST', body: form });
    if (res.status !== 200) throw new Error(`uploading ${label}'s capture ${i}: ${res.status} ${await res.text()}`);
  }
}
