/**
 * #28 finding 7a: a password typed into the username field is neither logged nor kept. The IdP logs and stores (in
 * `attempts-password.json`) the usernames of users that exist; an unknown name only as a keyed hash, which still
 * locks that name after its failures.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSignedUpUsers, APP_REDIRECT, authorizeUrl, pkce, startTestIdp, type TestIdp } from '../helpers/idp.js';
import { Browser } from './browser.js';

let idp: TestIdp;
const logLines: string[] = [];

beforeAll(async () => {
  idp = await startTestIdp({ logLines });
  await addSignedUpUsers(idp.users, [['bob', false]]);
});

afterAll(async () => {
  await idp?.close();
});

async function password(username: string, secret: string): Promise<number> {
  const browser = new Browser();
  const origin = new URL(idp.url).origin;
  const login = await browser.follow(authorizeUrl(idp.issuer, APP_REDIRECT, pkce().challenge), origin);
  const res = await browser.postForm(`${login.url}/password`, { username, password: secret });
  await res.arrayBuffer();
  return res.status;
}

describe('what the IdP keeps of a failed password', () => {
  it('never logs or stores an unknown username (a password typed in its field), yet locks it', async () => {
    const typo = 'Tr0ub4dor&3-Correct-Horse';
    for (let i = 0; i < 10; i++) expect(await password(typo, 'bobs-own-password')).toBe(401);
    expect(await password(typo, 'bobs-own-password')).toBe(429);
    expect(await password('bob', 'not-bobs-password')).toBe(401);

    const stored = await readFile(path.join(idp.dataDir, 'attempts-password.json'), 'utf8');
    const logs = logLines.join('\n');
    for (const text of [stored, logs]) {
      expect(text.toLowerCase()).not.toContain('tr0ub4dor');
      expect(text.toLowerCase()).not.toContain('correct-horse');
    }
    const keys = Object.keys(JSON.parse(stored).failures);
    expect(keys).toContain('bob');
    expect(keys).toHaveLength(2);
    expect(keys.find((k) => k !== 'bob')).toMatch(/^unknown:[0-9a-f]{32}$/);
    expect(logs).toMatch(/event=password username=bob result=rejected/);
  });
});
