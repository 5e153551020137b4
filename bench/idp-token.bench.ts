/**
 * The identity provider's token endpoint (issue #17): client-credentials grants per second for `<realm>-service`,
 * through the real IdP process (`node dist/server/idp/main.js`, as `npm run idp` runs it) on 127.0.0.1, one request
 * in flight and 8, over keep-alive connections, every answer checked to be a 200 with an access token.
 *
 * References measured in the same run, alternating with the IdP round by round (the machine is shared):
 * - a bare `node:http` server in its own process that reads a POSTed form and answers a JSON of the token answer's
 *   size: the floor of HTTP, process and client, so the ratio is what the OpenID provider adds on top;
 * - jose signing the same claims as RS256 in this process: the one costly step of a grant (a 2048-bit RSA
 *   signature), so the ratio tells how close the endpoint is to that ceiling.
 * Refresh-token grants are not measured: a refresh token needs a user through the face step, which would measure
 * the backend.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt, generateKeyPair, SignJWT } from 'jose';
import { median, type BenchRow } from './types.js';

const SECRET = 'bench-service-secret-0123456789';
const ROUNDS = 3;
const ROUND_MS = 3000;
const WARMUP_MS = 1000;

interface Target {
  url: string;
  init: RequestInit;
  /** Throws when the answer is not what the target must answer. */
  check(res: Response, text: string): void;
}

/** Starts node with `args` and only `env` and resolves with the URL it prints (`listening on <url>`), once `ready` answers. */
async function startProcess(
  name: string,
  args: string[],
  env: Record<string, string>,
  ready: string,
  children: ChildProcess[],
): Promise<string> {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`bench: ${name} exited with ${child.exitCode}: ${out}`);
    const url = out.match(/listening on (http:\/\/[\d.]+:\d+)/)?.[1];
    if (url && (await fetch(`${url}${ready}`).catch(() => null))?.ok) return url;
    if (Date.now() > deadline) throw new Error(`bench: ${name} did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Completed requests per second with `inFlight` of them always outstanding, for `ms`. */
async function rate(target: Target, inFlight: number, ms: number): Promise<number> {
  let done = 0;
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        const res = await fetch(target.url, target.init);
        target.check(res, await res.text());
        done++;
      }
    }),
  );
  return done / ((performance.now() - t0) / 1000);
}

/** RS256 signatures per second of `claims` (jose, this thread), for `ms`. */
async function signRate(claims: Record<string, unknown>, ms: number): Promise<number> {
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048 });
  const sign = () => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: 'bench' }).sign(privateKey);
  for (let i = 0; i < 20; i++) await sign();
  let done = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    await sign();
    done++;
  }
  return done / ((performance.now() - t0) / 1000);
}

/** The bare reference: reads the body, answers `size` bytes of JSON. */
const BARE_SERVER = `
const http = require('node:http');
const body = JSON.stringify({ access_token: 'x'.repeat(Number(process.env.SIZE) - '{"access_token":""}'.length) });
http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}).listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port); });
`;

export async function benchIdpToken(repoRoot: string): Promise<BenchRow[]> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-idp-'));
  const children: ChildProcess[] = [];
  try {
    const idpUrl = await startProcess(
      'the IdP',
      [path.join(repoRoot, 'dist/server/idp/main.js')],
      { IDP_DATA_DIR: dataDir, IDP_PORT: '0', HOST: '127.0.0.1', IDP_SERVICE_CLIENT_SECRET: SECRET, LOG_LEVEL: 'info' },
      '/ready',
      children,
    );
    const idp: Target = {
      url: `${idpUrl}/realms/lookout/protocol/openid-connect/token`,
      init: {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`lookout-service:${SECRET}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      },
      check(res, text) {
        if (res.status !== 200 || !JSON.parse(text).access_token) throw new Error(`bench: token endpoint answered ${res.status}: ${text}`);
      },
    };
    // One grant first: its size for the bare server, its claims for the signing reference.
    const first = await fetch(idp.url, idp.init);
    const sample = await first.text();
    idp.check(first, sample);
    const claims = decodeJwt(JSON.parse(sample).access_token as string);

    const bareUrl = await startProcess('the bare server', ['-e', BARE_SERVER], { SIZE: String(Buffer.byteLength(sample)) }, '/', children);
    const bare: Target = {
      url: `${bareUrl}/token`,
      init: idp.init,
      check(res, text) {
        if (res.status !== 200 || text.length !== sample.length) throw new Error(`bench: bare server answered ${res.status}`);
      },
    };

    const rows: BenchRow[] = [];
    const concurrent: number[] = [];
    for (const inFlight of [1, 8]) {
      await rate(idp, inFlight, WARMUP_MS);
      await rate(bare, inFlight, WARMUP_MS);
      const mine: number[] = [];
      const theirs: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        mine.push(await rate(idp, inFlight, ROUND_MS));
        theirs.push(await rate(bare, inFlight, ROUND_MS));
      }
      const [m, t] = [median(mine), median(theirs)];
      if (inFlight === 8) concurrent.push(m);
      rows.push({
        name: `IdP token endpoint, client_credentials for lookout-service, ${inFlight} in flight (the IdP process, ${sample.length}-byte answers)`,
        unit: 'req/s',
        lookout: m,
        reference: t,
        referenceName: 'bare node:http process answering the same size to the same POST',
        ratio: m / t,
      });
    }
    const signs = await signRate(claims, ROUND_MS);
    rows.push({
      name: 'IdP token endpoint, 8 in flight, against its one costly step: an RS256 (2048-bit) signature of the same claims',
      unit: 'req/s',
      lookout: concurrent[0],
      reference: signs,
      referenceName: 'jose SignJWT RS256 in-process, 1 thread (signatures/s)',
      ratio: concurrent[0] / signs,
    });
    return rows;
  } finally {
    await Promise.all(
      children
        .filter((child) => child.exitCode === null)
        .map((child) => new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM'))),
    );
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
