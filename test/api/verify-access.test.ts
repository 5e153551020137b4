/**
 * POST /api/verify is no oracle (#35 item 1), over real HTTP under AUTH_MODE=oidc with tokens of an issuer double:
 * a plain `biometric-user` verifies only their own label (403 `not_own_label` for another, before any image work)
 * and gets no distance; `biometric-verifier` (the IdP's service client) and `biometric-admin` verify anyone, with
 * the distance; verification is limited per caller and per label (429 `rate_limited` with Retry-After in seconds),
 * counted in the database; a database that cannot be reached denies (503, fail closed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { startIssuer, type IssuerDouble } from '../helpers/oidc-issuer.js';
import { postJson, startTestServer, type TestServer } from '../helpers/test-server.js';

const LIGHT = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };
const LIMITS = { VERIFY_RATE_WINDOW_S: '60', VERIFY_RATE_PER_CALLER: '3', VERIFY_RATE_PER_VERIFIER: '50', VERIFY_RATE_PER_LABEL: '6' };

describe('POST /api/verify under AUTH_MODE=oidc', () => {
  let issuer: IssuerDouble;
  let server: TestServer;
  let admin: string;

  async function verify(token: string, body: Record<string, unknown>) {
    const res = await fetch(`${server.url}/api/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any, retryAfter: res.headers.get('retry-after') };
  }

  beforeAll(async () => {
    issuer = await startIssuer();
    server = await startTestServer({ ...LIGHT, ...LIMITS, AUTH_MODE: 'oidc', OIDC_ISSUER: issuer.issuer, OIDC_JWKS_COOLDOWN_MS: '0' });
    admin = await issuer.token({ roles: ['biometric-admin'], username: 'root' });
    for (const person of ['grace', 'eileen', 'lionel'] as const) {
      for (const capture of await trainingCaptures(person)) {
        const form = new FormData();
        form.set('label', person);
        form.set('file', new Blob([new Uint8Array(capture)]), 'capture.jpg');
        const res = await fetch(`${server.url}/api/images`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
        expect(res.status).toBe(200);
      }
    }
    const trained = await fetch(`${server.url}/api/train`, { method: 'POST', headers: { authorization: `Bearer ${admin}` } });
    expect(trained.status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await issuer?.close();
  });

  it("refuses a plain user verifying someone else's label: 403 not_own_label, whatever the image", async () => {
    const grace = await issuer.token({ roles: ['biometric-user'], username: 'Grace' });
    for (const label of ['eileen', 'Eileen ', 'root']) {
      const res = await verify(grace, { label, image: base64(await photo('eileen')) });
      expect(res.status, label).toBe(403);
      expect(res.body.error.code).toBe('not_own_label');
      expect(res.body.error.message).toMatch(/only their own label \(grace\).*biometric-verifier/);
    }
    // Refused before the image is read: a broken image is refused the same way.
    const broken = await verify(grace, { label: 'eileen', image: 'bm90IGFuIGltYWdl' });
    expect(broken.status).toBe(403);
  });

  it('answers a user verifying themself with the verdict and no distance', async () => {
    const grace = await issuer.token({ roles: ['biometric-user'], username: 'grace' });
    const one = await verify(grace, { label: 'Grace', image: base64(await photo('grace')) });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ label: 'grace', reason: expect.any(String) });
    expect(typeof one.body.match).toBe('boolean');
    expect(one.body).not.toHaveProperty('distance');
    expect(one.body).not.toHaveProperty('confidence');
    const frames = await verify(grace, { label: 'grace', frames: [base64(await photo('grace')), base64(await photo('grace'))] });
    expect(frames.status).toBe(200);
    expect(frames.body).not.toHaveProperty('distance');
    expect(frames.body.frames).toHaveLength(2);
    for (const frame of frames.body.frames) {
      expect(frame).not.toHaveProperty('distance');
      expect(frame).not.toHaveProperty('confidence');
      expect(typeof frame.match).toBe('boolean');
    }
  });

  it('answers biometric-verifier and biometric-admin for anyone, with the distance', async () => {
    const verifier = await issuer.token({
      roles: ['biometric-verifier', 'biometric-user'],
      username: 'service-account-lookout-service',
      claims: { azp: 'lookout-service', client_id: 'lookout-service' },
    });
    for (const token of [verifier, admin]) {
      const res = await verify(token, { label: 'eileen', image: base64(await photo('eileen')) });
      expect(res.status).toBe(200);
      expect(res.body.match).toBe(true);
      expect(typeof res.body.distance).toBe('number');
      expect(typeof res.body.confidence).toBe('number');
    }
  });

  it('answers 429 rate_limited with Retry-After past the limit per caller', async () => {
    const lionel = await issuer.token({ roles: ['biometric-user'], username: 'lionel' });
    const image = base64(await photo('lionel'));
    for (let i = 0; i < 3; i++) expect((await verify(lionel, { label: 'lionel', image })).status, `call ${i + 1}`).toBe(200);
    const limited = await verify(lionel, { label: 'lionel', image });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.body.error.message).toMatch(/VERIFY_RATE_PER_CALLER/);
    const seconds = Number(limited.retryAfter);
    expect(Number.isInteger(seconds) && seconds >= 1 && seconds <= 60, String(limited.retryAfter)).toBe(true);
    // Another caller is not limited by lionel's count.
    const other = await issuer.token({ roles: ['biometric-user'], username: 'eileen' });
    expect((await verify(other, { label: 'eileen', image: base64(await photo('eileen')) })).status).toBe(200);
  });

  it('answers 429 past the limit per label, whoever asks, and other labels still answer', async () => {
    const callers = await Promise.all(
      ['a', 'b', 'c'].map((n) => issuer.token({ roles: ['biometric-verifier', 'biometric-user'], username: `svc-${n}` })),
    );
    // eileen: 1 by the verifier and 1 by the admin above, 1 by herself: 3 of 6 left.
    const image = base64(await photo('eileen'));
    for (let i = 0; i < 3; i++) expect((await verify(callers[i], { label: 'eileen', image })).status, `call ${i + 1}`).toBe(200);
    const limited = await verify(callers[0], { label: 'eileen', image });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.body.error.message).toMatch(/VERIFY_RATE_PER_LABEL/);
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await verify(callers[0], { label: 'grace', image: base64(await photo('grace')) })).status).toBe(200);
  });
});

describe('POST /api/verify when the rate counters cannot be read', () => {
  let server: TestServer;
  beforeAll(async () => {
    // A PostgreSQL that is not there: nothing listens on port 1.
    server = await startTestServer({ ...LIGHT, DATABASE_URL: 'postgres://lookout@127.0.0.1:1/lookout' });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('denies (503 rate_limit_unavailable), never lets the verification through', async () => {
    const res = await postJson(`${server.url}/api/verify`, { label: 'grace', image: base64(await photo('grace')) });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('rate_limit_unavailable');
  });
});
