/**
 * `npm run idp` as a process (the compiled dist/ build, as the script runs it): refused settings, the
 * administration commands, the bootstrap administrator, probes, and a clean stop. Secrets never reach the output.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Not from test/helpers: those load the whole API server, which this test does not need.
const REPO_ROOT = path.resolve(import.meta.dirname, '../..');
const MAIN = path.join(REPO_ROOT, 'dist/server/idp/main.js');
let dataDir: string;
const children: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, IDP_DATA_DIR: dataDir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'lookout-idp-process-'));
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

describe('npm run idp', () => {
  it('refuses bad settings with exit code 2, naming the variable and not the secret', async () => {
    const { code, out } = await run([], { IDP_REALM: 'no spaces', IDP_SERVICE_CLIENT_SECRET: 'tiny-secret' });
    expect(code).toBe(2);
    expect(out).toContain('IDP_REALM');
    expect(out).toContain('IDP_SERVICE_CLIENT_SECRET: at least 16 characters');
    expect(out).not.toContain('tiny-secret');
    expect(out).toContain('The identity provider was not started.');
  });

  it('runs the user commands without starting the provider', async () => {
    const added = await run(['users', 'add', 'Grace', '--temporary-password', 'temporary-1'], {});
    expect(added).toMatchObject({ code: 0 });
    expect(added.out).toContain('Created grace (biometric-user)');
    expect(added.out).not.toContain('temporary-1');
    expect(added.out).not.toContain('oidc-provider');
    expect((await run(['users', 'add'], {})).code).toBe(2);
    expect((await run(['frobnicate'], {})).code).toBe(2);
    // Password hashes: readable by the owner only.
    expect((await stat(path.join(dataDir, 'users.json'))).mode & 0o077).toBe(0);
  });

  it('serves with the bootstrap administrator, answers the probes, and stops on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        IDP_DATA_DIR: dataDir,
        IDP_PORT: String(port),
        HOST: '127.0.0.1',
        IDP_ADMIN_USERNAME: 'admin',
        IDP_ADMIN_PASSWORD: 'bootstrap-secret-1',
        IDP_SERVICE_CLIENT_SECRET: 'service-secret-0123456789',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      expect(child.exitCode, out).toBeNull();
      const ready = await fetch(`${base}/ready`).catch(() => null);
      if (ready?.ok) break;
      expect(Date.now() < deadline, `not ready: ${out}`).toBe(true);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await fetch(`${base}/health`)).status).toBe(200);
    const discovery = (await (await fetch(`${base}/realms/lookout/.well-known/openid-configuration`)).json()) as { issuer: string };
    expect(discovery.issuer).toBe(`${base}/realms/lookout`);
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);

    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toMatch(/bootstrap administrator created username=admin/);
    expect(out).toContain(`issuer ${base}/realms/lookout`);
    for (const secret of ['bootstrap-secret-1', 'service-secret-0123456789']) expect(out).not.toContain(secret);

    const list = await run(['users', 'list'], {});
    expect(list.out).toMatch(/^admin\troles=biometric-user,biometric-admin\tenrolled=false\trequired=biometric-enrollment\t/m);
    expect(list.out).toMatch(/^grace\t/m);
    // The private signing keys likewise.
    expect((await stat(path.join(dataDir, 'keys.json'))).mode & 0o077).toBe(0);
    const keys = await run(['keys', 'list'], {});
    expect(keys.out).toMatch(/^[\w-]+\tRS256\tcreated=\S+\t\(signing\)$/m);
  });
});
