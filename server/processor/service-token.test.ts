/**
 * The processor's client-credentials token against a token endpoint double on 127.0.0.1: the form and Basic
 * credentials it sends, one fetch shared by concurrent callers, renewal before expiry, a fresh token after a 401,
 * the secret read from a file, and a clear error for a refused client.
 */
import http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeNow, listenLocal } from '../../test/helpers/double-server.js';
import { fetchWithServiceToken, ServiceToken, ServiceTokenError } from './service-token.js';

const SECRET = 'processor-secret-0123456789';
let server: http.Server;
let tokenUrl: string;
let apiUrl: string;
let issued = 0;
const seen: { auth: string | undefined; body: string }[] = [];
/** Tokens the "API" still takes; the test revokes one to force a 401. */
const valid = new Set<string>();
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lookout-token-'));
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url === '/token') {
        seen.push({ auth: req.headers.authorization, body });
        const [id, secret] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
          .toString()
          .split(':');
        res.setHeader('content-type', 'application/json');
        if (id !== 'lookout-service' || decodeURIComponent(secret) !== SECRET) {
          res.statusCode = 401;
          return res.end(JSON.stringify({ error: 'invalid_client' }));
        }
        const token = `token-${++issued}`;
        valid.add(token);
        return res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 300 }));
      }
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      res.statusCode = valid.has(token) ? 200 : 401;
      res.end(JSON.stringify({ token }));
    });
  });
  const port = await listenLocal(server, 0);
  tokenUrl = `http://127.0.0.1:${port}/token`;
  apiUrl = `http://127.0.0.1:${port}/api/labels`;
});

afterAll(async () => {
  await closeNow(server, new Set());
  await rm(dir, { recursive: true, force: true });
});

describe('ServiceToken', () => {
  it('asks with client_credentials and Basic credentials, once for concurrent callers, and renews before expiry', async () => {
    let now = 1_000_000;
    const token = new ServiceToken({ tokenUrl, clientId: 'lookout-service', clientSecret: SECRET, timeoutMs: 5000, now: () => now });
    const first = await Promise.all([token.get(), token.get(), token.get()]);
    expect(new Set(first).size).toBe(1);
    expect(token.fetched).toBe(1);
    expect(seen.at(-1)?.body).toBe('grant_type=client_credentials');
    expect(seen.at(-1)?.auth).toBe(`Basic ${Buffer.from(`lookout-service:${SECRET}`).toString('base64')}`);
    now += 200_000; // 100 s of 300 left: still good
    expect(await token.get()).toBe(first[0]);
    now += 50_000; // 50 s left, under a fifth of the lifetime: renewed before it runs out
    expect(await token.get()).not.toBe(first[0]);
    expect(token.fetched).toBe(2);
  });

  it('reads the secret from a file, and says clearly when the client is refused', async () => {
    const file = path.join(dir, 'secret');
    await writeFile(file, `${SECRET}\n`);
    expect(await new ServiceToken({ tokenUrl, clientId: 'lookout-service', clientSecretFile: file, timeoutMs: 5000 }).get()).toMatch(
      /^token-/,
    );
    const wrong = new ServiceToken({ tokenUrl, clientId: 'lookout-service', clientSecret: 'not-the-secret', timeoutMs: 5000 });
    await expect(wrong.get()).rejects.toThrow(ServiceTokenError);
    await expect(wrong.get()).rejects.toThrow(/invalid_client/);
    const missing = new ServiceToken({ tokenUrl, clientId: 'lookout-service', clientSecretFile: path.join(dir, 'none'), timeoutMs: 5000 });
    await expect(missing.get()).rejects.toThrow(/PROCESSOR_OIDC_CLIENT_SECRET_FILE: ENOENT/);
  });

  it('sends the token and, after a 401, fetches a fresh one and tries once more', async () => {
    const token = new ServiceToken({ tokenUrl, clientId: 'lookout-service', clientSecret: SECRET, timeoutMs: 5000 });
    const authed = fetchWithServiceToken(token);
    const first = await authed(apiUrl);
    expect(first.status).toBe(200);
    const used = ((await first.json()) as { token: string }).token;
    valid.delete(used); // revoked (or signed by a key the API no longer has)
    const again = await authed(apiUrl);
    expect(again.status).toBe(200);
    expect(((await again.json()) as { token: string }).token).not.toBe(used);
    expect(token.fetched).toBe(2);
  });
});
