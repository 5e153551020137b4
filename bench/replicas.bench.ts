/**
 * Replicas (issue #15): /api/recognize throughput with one API server process and with two on one DATA_DIR,
 * driven through a simple client-side round-robin (request i goes to replica i mod n) at concurrency 4, with a
 * 640x480 JPEG of the trained person and an LBPH model trained on one replica (the other loads it from the shared directory). Each
 * replica runs with its default worker threads (one per core). The ratio is 2 replicas / 1 replica.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { BenchRow } from './types.js';

const SECONDS = 12;
const CONCURRENCY = 4;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function startReplica(repoRoot: string, dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(repoRoot, 'dist/server/main.js')], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      OBJECT_DETECTION_ENABLED: 'false',
      EMBEDDING_ENABLED: 'false',
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`bench: a replica exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/api/ready`)).ok) return { url, child };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('bench: a replica did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Requests per second through a round-robin over `urls`. */
async function roundRobin(urls: string[], body: string): Promise<number> {
  let i = 0;
  let done = 0;
  const end = Date.now() + SECONDS * 1000;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const url = urls[i++ % urls.length];
        const res = await fetch(`${url}/api/recognize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const answer = (await res.json()) as { faces?: { label: string }[] };
        if (!res.ok || !answer.faces?.some((f) => f.label === 'grace')) throw new Error(`bench: recognize answered ${res.status}`);
        done++;
      }
    }),
  );
  return done / ((Date.now() - started) / 1000);
}

export async function benchReplicas(repoRoot: string, testdata: string): Promise<BenchRow[]> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-replicas-'));
  const replicas: ChildProcess[] = [];
  try {
    const a = await startReplica(repoRoot, dataDir);
    replicas.push(a.child);
    const face = await fs.readFile(path.join(testdata, 'faces/grace_hopper.jpg'));
    for (let n = 0; n < 3; n++) {
      const form = new FormData();
      form.set('label', 'grace');
      form.set('file', new Blob([new Uint8Array(face)]), `grace-${n}.jpg`);
      if (!(await fetch(`${a.url}/api/images`, { method: 'POST', body: form })).ok) throw new Error('bench: upload failed');
    }
    if (!(await fetch(`${a.url}/api/train`, { method: 'POST' })).ok) throw new Error('bench: training failed');
    // The trained person in a 640x480 frame: every answer must name her, on either replica.
    const frame = await sharp(face).resize(640, 480, { fit: 'contain', background: '#808080' }).jpeg({ quality: 90 }).toBuffer();
    const body = JSON.stringify({ image: frame.toString('base64') });
    const one = await roundRobin([a.url], body);
    const b = await startReplica(repoRoot, dataDir);
    replicas.push(b.child);
    const two = await roundRobin([a.url, b.url], body);
    return [
      {
        name: `/api/recognize, 640x480, concurrency ${CONCURRENCY}, 2 replicas on one DATA_DIR behind a round-robin (this machine: ${os.cpus().length} cores)`,
        unit: 'req/s',
        lookout: two,
        reference: one,
        referenceName: '1 replica, same load',
        ratio: two / one,
      },
    ];
  } finally {
    for (const child of replicas) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
