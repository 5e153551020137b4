/**
 * The IdP's user administration API under attack (#28 findings 2 to 5), against a real IdP on 127.0.0.1: who may
 * manage users (never the service client), usernames compared as the IdP normalises them, the last administrator
 * kept, malformed escapes refused with 400.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PasskeyStore } from '../../server/idp/passkeys.js';
import {
  addSignedUpUsers,
  APPROVE_EVERY_FACE,
  serviceToken as issueServiceToken,
  startTestIdp,
  type TestIdp,
  userToken as issueUserToken,
} from '../helpers/idp.js';

let idp: TestIdp;

const users = () => `${new URL(idp.url).origin}/admin/realms/lookout/users`;
const as = (token: string, init: RequestInit = {}) => ({ ...init, headers: { ...init.headers, authorization: `Bearer ${token}` } });
const userToken = (username: string) => issueUserToken(idp, username, `${username}s-own-password`);
const create = (token: string, body: Record<string, unknown>) =>
  fetch(users(), as(token, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

beforeAll(async () => {
  idp = await startTestIdp({ options: { faceVerifier: APPROVE_EVERY_FACE } });
  await addSignedUpUsers(idp.users, [
    ['root', true],
    ['bob', false],
  ]);
});

afterAll(async () => {
  await idp?.close();
});

describe('malformed percent-escapes (#28 finding 4)', () => {
  it('answers 400, not 500, for a username that does not decode', async () => {
    const token = await userToken('root');
    for (const bad of ['%E0', '%', '%zz', 'ro%C3']) {
      const res = await fetch(`${users()}/${bad}`, as(token, { method: 'DELETE' }));
      expect(res.status, bad).toBe(400);
      expect((await errorOf(res)).code).toBe('invalid_path');
    }
    expect(await idp.users.byUsername('root')).toBeDefined();
  });

  it('answers no IdP route with a 500 for a malformed escape in the path or the query', async () => {
    const origin = new URL(idp.url).origin;
    const paths = [
      '/admin/realms/lookout/users/%E0',
      '/admin/realms/lookout/users?x=%E0',
      '/realms/lookout/interaction/%E0',
      '/realms/lookout/interaction/%E0/password',
      '/realms/lookout/protocol/openid-connect/auth?client_id=%E0',
      '/realms/lookout/protocol/openid-connect/certs/%E0',
      '/realms/lookout/%E0',
      '/%E0',
    ];
    for (const p of paths) {
      for (const method of ['GET', 'POST', 'DELETE']) {
        const res = await fetch(`${origin}${p}`, { method, redirect: 'manual' });
        await res.arrayBuffer();
        expect(res.status, `${method} ${p}`).toBeLessThan(500);
      }
    }
  });
});

describe('who may manage users (#28 finding 2)', () => {
  it("refuses the service client's client-credentials token, though it holds biometric-admin (403)", async () => {
    const service = await issueServiceToken(idp.issuer);
    const made = await create(service, { username: 'mallory', temporary_password: 'mallorys-temporary-1', admin: true });
    expect(made.status).toBe(403);
    expect((await errorOf(made)).code).toBe('user_token_required');
    expect(await idp.users.byUsername('mallory')).toBeUndefined();
    expect((await fetch(users(), as(service))).status).toBe(403);
    expect((await fetch(`${users()}/bob`, as(service, { method: 'DELETE' }))).status).toBe(403);
    expect(await idp.users.byUsername('bob')).toBeDefined();
  });

  it('lets a signed-in administrator manage users, as the user the IdP holds now', async () => {
    const token = await userToken('root');
    const made = await create(token, { username: 'carol', temporary_password: 'carols-temporary-1' });
    expect(made.status).toBe(201);
    expect((await fetch(`${users()}/carol`, as(token, { method: 'DELETE' }))).status).toBe(204);
  });

  it('removing a user removes their passkeys and passkey policy: a new account of that name starts with none', async () => {
    const token = await userToken('root');
    expect((await create(token, { username: 'dora', temporary_password: 'doras-temporary-1' })).status).toBe(201);
    const dora = (await idp.users.byUsername('dora'))!;
    const passkeys = new PasskeyStore(idp.dataDir);
    await passkeys.add(dora.id, {
      id: 'cred-of-dora',
      publicKey: 'AA',
      counter: 0,
      transports: [],
      createdAt: new Date().toISOString(),
      lastUsedAt: null,
    });
    await passkeys.setRequired(dora.id, true);
    expect((await fetch(`${users()}/dora`, as(token, { method: 'DELETE' }))).status).toBe(204);
    expect(await passkeys.forUser(dora.id)).toMatchObject({ required: false, credentials: [] });
    expect(JSON.stringify(JSON.parse(await readFile(path.join(idp.dataDir, 'passkeys.json'), 'utf8')))).not.toContain(dora.id);
  });
});

describe('usernames as the IdP normalises them; the last administrator kept (#28 finding 3)', () => {
  it('an administrator cannot remove their own account under another spelling (409)', async () => {
    const token = await userToken('root');
    for (const spelling of ['root', 'ROOT', 'Root', '%20root']) {
      const res = await fetch(`${users()}/${spelling}`, as(token, { method: 'DELETE' }));
      expect(res.status, spelling).toBe(409);
      expect((await errorOf(res)).code).toBe('cannot_remove_self');
    }
    expect(await idp.users.byUsername('root')).toBeDefined();
  });

  it('two administrators removing each other at once leave one (409 last_admin for the other)', async () => {
    await addSignedUpUsers(idp.users, [['eve', true]]);
    const [rootToken, eveToken] = [await userToken('root'), await userToken('eve')];
    const answers = await Promise.all([
      fetch(`${users()}/EVE`, as(rootToken, { method: 'DELETE' })),
      fetch(`${users()}/Root`, as(eveToken, { method: 'DELETE' })),
    ]);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses[0]).toBe(204);
    expect(statuses[1]).toBeGreaterThanOrEqual(400);
    const admins = (await idp.users.list()).filter((u) => u.roles.includes('biometric-admin'));
    expect(admins).toHaveLength(1);
    // Whoever is left is the last administrator: the IdP refuses to remove them, by any means.
    await expect(idp.users.remove(admins[0].username)).rejects.toMatchObject({ code: 'last_admin' });
    await addSignedUpUsers(idp.users, [[admins[0].username === 'root' ? 'eve' : 'root', true]]);
  });
});
