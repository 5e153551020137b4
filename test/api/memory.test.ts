/**
 * Bounded memory (issue #16 item 3). The scenario against a real server process (started from the
 * sources as `npm start` runs it): 16 concurrent recognitions of a 36-megapixel image (a 117 KB PNG) took it from
 * 0.5 to 3.5 GB; with MAX_INFLIGHT_PIXELS they are admitted as room frees, the rest answered 503 with Retry-After,
 * and the memory comes back after the burst. Its peak and after-burst RSS are printed. Then, on the in-process test
 * server (every answer checked against the contract): the 503 of a full budget on each route that decodes, and a
 * JPEG that declares 6000x6000 in 265 bytes refused at upload with nothing stored.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo } from '../helpers/faces.js';
import { freePort } from '../helpers/server-process.js';
import { getJson, postJson, REPO_ROOT, startTestServer, type TestServer } from '../helpers/test-server.js';
import { declaredHugeJpeg } from '../helpers/image-bombs.js';

function rssMb(pid: number): Promise<number> {
  return fs.readFile(`/proc/${pid}/status`, 'utf8').then((s) => Number(/VmRSS:\s+(\d+)/.exec(s)![1]) / 1024);
}

describe('16 concurrent 36-megapixel images against a server process', () => {
  let child: ChildProcess | undefined;
  let dataDir: string;
  let url: string;
  let output = '';

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-memory-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        REMOTE_DETECTOR_ENABLED: 'false',
        // The default budget (48 MP: one 36-MP image at a time), and a short wait so refusals come quickly.
        MAX_INFLIGHT_WAIT_MS: '1500',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
      if (
        await fetch(`${url}/api/ready`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (Date.now() > deadline) throw new Error(`server not ready: ${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('admits them within the budget (the rest 503 + Retry-After), peaks far below 3 GB and gives memory back', async () => {
    const png = await sharp({ create: { width: 6000, height: 6000, channels: 3, background: { r: 120, g: 130, b: 140 } } })
      .png({ compressionLevel: 9 })
      .toBuffer();
    const body = JSON.stringify({ image: base64(png) });
    await new Promise((r) => setTimeout(r, 2000));
    const idle = await rssMb(child!.pid!);
    let peak = idle;
    const sampler = setInterval(() => {
      void rssMb(child!.pid!).then(
        (mb) => (peak = Math.max(peak, mb)),
        () => {},
      );
    }, 20);
    const answers = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const res = await fetch(`${url}/api/recognize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
      }),
    );
    clearInterval(sampler);
    await new Promise((r) => setTimeout(r, 3000));
    const after = await rssMb(child!.pid!);
    const served = answers.filter((a) => a.status === 200).length;
    console.log(
      `memory: 16 x 36 MP /api/recognize: idle ${idle.toFixed(0)} MB, peak ${peak.toFixed(0)} MB, 3 s after ${after.toFixed(0)} MB; ${served} answered 200, ${16 - served} 503`,
    );
    expect(served).toBeGreaterThanOrEqual(1);
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect(a.status).toBe(503);
      expect(a.body.error.code).toBe('server_busy');
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // Before: +2.5 GB at the peak and +2 GB kept after the burst (see docs/settings.md). The vision workers
    // keep their WebAssembly memory sized for the largest image they met (about 8 bytes a pixel), so some stays.
    expect(peak - idle).toBeLessThan(900);
    expect(after - idle).toBeLessThan(600);
  });
});

describe('the pixel budget on the routes (in-process, contract-checked)', () => {
  let server: TestServer;
  let big: Buffer;

  beforeAll(async () => {
    // A budget of 1 MP and no wait: a 4-MP image runs alone, and anything arriving meanwhile is refused at once.
    server = await startTestServer({
      MAX_INFLIGHT_PIXELS: '1000000',
      MAX_INFLIGHT_WAIT_MS: '0',
      EMBEDDING_ENABLED: 'false',
      REMOTE_DETECTOR_ENABLED: 'false',
    });
    const grace = await photo('grace');
    big = await sharp(grace).resize(2000, 2000, { fit: 'fill' }).jpeg({ quality: 80 }).toBuffer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['recognize', '/api/recognize', () => ({ image: base64(big) })],
    ['objects', '/api/objects/detect', () => ({ image: base64(big) })],
    ['upload', '/api/images', () => ({ label: 'ada', image: base64(big) })],
  ])('%s: concurrent large images beyond the budget get 503 server_busy with Retry-After', async (_name, route, body) => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const res = await fetch(`${server.url}${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body()),
        });
        return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
      }),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses).toContain(200);
    expect(statuses).toContain(503);
    for (const a of answers.filter((x) => x.status === 503)) {
      expect(a.body.error.code).toBe('server_busy');
      expect(a.body.error.message).toMatch(/MAX_INFLIGHT_PIXELS/);
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
    }
  });

  it('training waits for room instead of refusing: every stored image is trained on', async () => {
    const stored = (await getJson(`${server.url}/api/images/ada`)).body.count;
    expect(stored).toBeGreaterThan(0);
    const trained = await postJson(`${server.url}/api/train`, {});
    expect(trained.status).toBe(200);
    expect(trained.body.images_total).toBe(stored);
    expect(trained.body.images_skipped.filter((s: { reason: string }) => s.reason === 'unreadable')).toEqual([]);
  });

  it('refuses at upload a 265-byte JPEG that declares 6000x6000, storing nothing', async () => {
    const bomb = await declaredHugeJpeg();
    expect(bomb.length).toBe(265);
    const before = await fs.readdir(path.join(server.dataDir, 'images'), { recursive: true });
    const form = new FormData();
    form.set('label', 'mallory');
    form.set('file', new Blob([bomb]), 'bomb.jpg');
    const res = await fetch(`${server.url}/api/images`, { method: 'POST', body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toMatchObject({ code: 'invalid_image', message: expect.stringMatching(/decoded whole/) });
    expect((await postJson(`${server.url}/api/images`, { label: 'mallory', image: base64(bomb) })).status).toBe(400);
    expect(await fs.readdir(path.join(server.dataDir, 'images'), { recursive: true })).toEqual(before);
  });
});
