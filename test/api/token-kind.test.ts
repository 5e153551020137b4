/**
 * Clients are told from users by what the token says about its grant, never by a name a user can choose (#35
 * item 3), over real HTTP under AUTH_MODE=oidc: a user named `service-account-evil`, whose label was deleted, is
 * refused (401) and audited under their own name as a user, while a real client-credentials token (Keycloak's
 * service-account `client_id`) still works and is audited as its client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { startIssuer, type IssuerDouble } from '../helpers/oidc-issuer.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const LIGHT = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };

describe('a user named service-account-*', () => {
  let issuer: IssuerDouble;
  let server: TestServer;
  let admin: string;

  async function call(path: string, token: string, init: RequestInit = {}) {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    if (typeof init.body === 'string') headers.set('content-type', 'application/json');
    const res = await fetch(`${server.url}${path}`, { ...init, headers });
    return { status: res.status, body: (await res.json()) as any };
  }

  beforeAll(async () => {
    issuer = await startIssuer();
    server = await startTestServer({ ...LIGHT, AUTH_MODE: 'oidc', OIDC_ISSUER: issuer.issuer, OIDC_JWKS_COOLDOWN_MS: '0' });
    admin = await issuer.token({ roles: ['biometric-admin'], username: 'root' });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await issuer?.close();
  });

  it('is refused once their label is deleted, and audited as the user they are', async () => {
    // A user token (azp the web app, no service-account client_id) whose name mimics a service account.
    const evil = await issuer.token({ roles: ['biometric-user'], username: 'service-account-evil' });
    const form = new FormData();
    form.set('label', 'service-account-evil');
    form.set('file', new Blob([new Uint8Array((await trainingCaptures('grace'))[0])]), 'capture.jpg');
    expect((await call('/api/images', admin, { method: 'POST', body: form })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100)); // the token's `iat` a whole second before the deletion
    expect((await call('/api/images/service-account-evil', admin, { method: 'DELETE' })).status).toBe(200);

    expect((await call('/api/labels', evil)).status).toBe(401);
    const refused = await call('/api/verify', evil, {
      method: 'POST',
      body: JSON.stringify({ label: 'service-account-evil', image: base64(await photo('grace')) }),
    });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('invalid_token');
    expect(refused.body.error.message).toMatch(/removed/);

    const log = await call('/api/audit?action=verify&limit=50', admin);
    expect(log.status).toBe(200);
    expect(log.body.entries[0]).toMatchObject({ outcome: 'denied', actor: 'service-account-evil', actor_kind: 'user' });
    expect(JSON.stringify(log.body.entries)).not.toContain('lookout-app');
  }, 60_000);

  it('leaves a client-credentials token working, audited as its client', async () => {
    const service = await issuer.token({
      roles: ['biometric-admin', 'biometric-verifier'],
      username: 'service-account-lookout-service',
      claims: { azp: 'lookout-service', client_id: 'lookout-service' },
    });
    expect((await call('/api/labels', service)).status).toBe(200);
    const verified = await call('/api/verify', service, {
      method: 'POST',
      body: JSON.stringify({ label: 'grace', image: base64(await photo('grace')) }),
    });
    expect(verified.status).toBe(200);
    const log = await call('/api/audit?action=verify&limit=50', admin);
    expect(log.body.entries[0]).toMatchObject({ outcome: 'ok', actor: 'lookout-service', actor_kind: 'client' });
  }, 60_000);
});
