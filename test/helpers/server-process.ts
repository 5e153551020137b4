/**
 * The API server as a process, the way `npm start` runs it (the compiled dist/ build), on 127.0.0.1 with a free
 * port and only the given environment (plus PATH): for tests of start-up, crashes and several replicas.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { REPO_ROOT } from './test-server.js';

export const SERVER_MAIN = path.join(REPO_ROOT, 'dist/server/main.js');

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far. */
  output: () => string;
}

/** Starts the server and resolves once `/api/health` answers; `children` collects it for the test's cleanup. */
export async function spawnServer(env: Record<string, string>, children: ChildProcess[]): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER_MAIN], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${out}`);
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, url, output: () => out };
}

/**
 * SIGKILLs every process in `children` (emptying it) and resolves once each has exited: a folder it wrote in can be
 * removed only then (a server still writing its database made the removal fail with ENOTEMPTY).
 */
export async function killAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.splice(0).map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      return gone;
    }),
  );
}
