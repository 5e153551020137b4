/**
 * A throwaway PostgreSQL server for the tests, from Debian's `postgresql` package (`.ci/run` installs it):
 * initdb in a temporary folder, listening on 127.0.0.1 only, on a free port, trust authentication, removed at the
 * end. Started once per test run by test/global-setup.ts; each test asks for a database of its own
 * (test/helpers/databases.ts). PostgreSQL refuses to run as root, so as root it runs as the `postgres` user.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface PostgresCluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  /** The server's process ids (postmaster and its backends), for a CPU share read from /proc. */
  pids(): number[];
  /** Stops the server (fast shutdown: clients disconnected), keeping its data; `resume` starts it again. */
  pause(): Promise<void>;
  /** Starts a paused server again, on the same port with the same data; resolves once it answers queries. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** Debian installs each major version under /usr/lib/postgresql/<major>/bin; the newest is taken. */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? execFileSync('ls', [root], { encoding: 'utf8' })
        .split('\n')
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const dir = majors.map((m) => path.join(root, m, 'bin')).find((d) => existsSync(path.join(d, 'initdb')));
  if (!dir) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql (the tests run the database code against it)');
  return dir;
}

/** Whether Debian's PostgreSQL server is installed (benchmarks measure it only then). */
export function postgresInstalled(): boolean {
  try {
    postgresBinDir();
    return true;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  // As root, initdb and postgres run as the `postgres` user (spawned with its uid, so signals reach postgres itself).
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot
    ? {
        uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
        gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
      }
    : {};
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-pg-'));
  const data = path.join(dir, 'data');
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  execFileSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'], {
    stdio: 'pipe',
    cwd: dir,
    ...ids,
  });
  const port = await freePort();
  const args = ['-D', data, '-k', dir, '-h', '127.0.0.1', '-p', String(port), '-c', 'fsync=off', '-c', 'max_connections=200'];
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const launch = (): ChildProcess => spawn(path.join(bin, 'postgres'), args, { stdio: 'ignore', cwd: dir, ...ids });
  let child = launch();
  await answering(url, port, child);
  const halt = async () => {
    // SIGINT: PostgreSQL's fast shutdown (clients disconnected); SIGQUIT if it has not gone within 5 s.
    const exited = new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', r)));
    child.kill('SIGINT');
    const late = setTimeout(() => child.kill('SIGQUIT'), 5_000);
    await exited;
    clearTimeout(late);
  };
  return {
    url,
    pids() {
      const ids = [child.pid!];
      try {
        const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' });
        ids.push(...children.split('\n').filter(Boolean).map(Number));
      } catch {
        // no children listed
      }
      return ids;
    },
    pause: halt,
    async resume() {
      child = launch();
      await answering(url, port, child);
    },
    async stop() {
      await halt();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once the server at `url` answers a query (accepting TCP is not yet accepting queries). */
async function answering(url: string, port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const sock = net.connect(port, '127.0.0.1', () => {
        sock.end();
        resolve(true);
      });
      sock.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`PostgreSQL did not start on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // Accepting TCP is not yet accepting queries: wait for a real answer.
  const { default: pg } = await import('pg');
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      break;
    } catch (err) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
