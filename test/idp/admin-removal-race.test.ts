/**
 * #35 item 2: two administrators removing each other at once, over real HTTP (the IdP's admin API with their own
 * access tokens, the real API with AUTH_MODE=oidc holding both faces). The last-administrator check refused one
 * removal only after that removal had deleted the other's face data on the API (which also ends the tokens issued
 * before it): check and act are one critical section now, so exactly one removal succeeds, and the refused one
 * deletes nothing: the survivor's face data stays on the API and their token still works. The race is run several
 * times, each time between the last round's survivor and a new administrator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainingCaptures } from '../helpers/faces.js';
import { addSignedUpUsers, serviceToken, startTestIdp, type TestIdp } from '../helpers/idp.js';
import { mintedUserToken } from '../helpers/idp-admin-token.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const ROUNDS = 6;

let idp: TestIdp;
let api: TestServer;
let faces: Buffer[];

const usersUrl = () => `${new URL(idp.url).origin}/admin/realms/lookout/users`;

async function enrollOnApi(label: string): Promise<void> {
  const authorization = `Bearer ${await serviceToken(idp.issuer)}`;
  for (const face of faces.slice(0, 2)) {
    const form = new FormData();
    form.set('label', label);
    form.set('file', new Blob([new Uint8Array(face)], { type: 'image/jpeg' }), 'capture.jpg');
    const res = await fetch(`${api.url}/api/images`, { method: 'POST', headers: { authorization }, body: form });
    expect(res.status, await res.clone().text()).toBe(200);
  }
}

/** How many images the API holds of `label` (0 when none). */
async function imagesOf(label: string): Promise<number> {
  const authorization = `Bearer ${await serviceToken(idp.issuer)}`;
  const res = await fetch(`${api.url}/api/images/${label}`, { headers: { authorization } });
  if (res.status === 404) return 0;
  expect(res.status).toBe(200);
  return ((await res.json()) as { images: unknown[] }).images.length;
}

const remove = (token: string, username: string) =>
  fetch(`${usersUrl()}/${username}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  idp = await startTestIdp({ env: { IDP_BACKEND_URL: 'http://127.0.0.1:9' }, options: { biometrics: true } });
  api = await startTestServer({
    WORKERS: '1',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENABLED: 'false',
    AUTH_MODE: 'oidc',
    OIDC_ISSUER: idp.issuer,
  });
  await idp.restart({ IDP_BACKEND_URL: api.url });
  faces = await trainingCaptures('grace');
}, 120_000);

afterAll(async () => {
  await api?.close();
  await idp?.close();
});

describe('two administrators removing each other at once (#35 item 2)', () => {
  it('lets exactly one removal through; the refused one deletes nothing', async () => {
    await addSignedUpUsers(idp.users, [['admin-0', true]]);
    await enrollOnApi('admin-0');
    let survivor = 'admin-0';
    for (let round = 1; round <= ROUNDS; round++) {
      const other = `admin-${round}`;
      await addSignedUpUsers(idp.users, [[other, true]]);
      await enrollOnApi(other);
      const tokens = { [survivor]: await mintedUserToken(idp, survivor), [other]: await mintedUserToken(idp, other) };
      const [byOld, byNew] = await Promise.all([remove(tokens[survivor], other), remove(tokens[other], survivor)]);
      // The one that waited finds its target the last administrator (409), or itself removed (403).
      const refused = byOld.status === 204 ? byNew : byOld;
      const { code } = ((await refused.clone().json()) as { error: { code: string } }).error;
      expect([[byOld.status, byNew.status].filter((s) => s === 204).length, code], `round ${round}`).toEqual([
        1,
        expect.stringMatching(/^(last_admin|insufficient_role)$/),
      ]);
      expect(refused.status).toBe(code === 'last_admin' ? 409 : 403);
      const [winner, loser] = byOld.status === 204 ? [survivor, other] : [other, survivor];

      expect(
        (await idp.users.list()).map((u) => u.username),
        `round ${round}`,
      ).toEqual([winner]);
      expect(await imagesOf(loser), `round ${round}: the removed one's face is gone`).toBe(0);
      expect(await imagesOf(winner), `round ${round}: the survivor's face is intact`).toBe(2);
      // Their token, issued before the race, still works on the API and on the admin API.
      const asWinner = { authorization: `Bearer ${tokens[winner]}` };
      expect((await fetch(`${api.url}/api/labels`, { headers: asWinner })).status, `round ${round}`).toBe(200);
      expect((await fetch(usersUrl(), { headers: asWinner })).status, `round ${round}`).toBe(200);
      survivor = winner;
    }
  }, 180_000);
});
