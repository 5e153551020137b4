/**
 * The audit log and template access over real HTTP on 127.0.0.1, under AUTH_MODE=oidc against an issuer double
 * (tokens shaped as Keycloak writes them): enroll, train, verify, template download and delete are recorded with
 * who did it (a user, a client-credentials client) and the outcome, refused ones included; the log is read by an
 * administrator only, filtered and paged, and no endpoint changes it. The trained models are downloaded by a
 * `biometric-device` or an administrator, never by a plain `biometric-user`; a person kept out of the kiosk gallery
 * (`PUT /api/people/{label}` `{ kiosk: false }`) is in neither downloaded model, and the server still recognises them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEmbeddingFile } from '../../shared/embedding/model-file.js';
import { decodeLbphFile } from '../../shared/recognition/model-files.js';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { startIssuer, type IssuerDouble } from '../helpers/oidc-issuer.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const ENV = { WORKERS: '1', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };

describe('the audit log and template access under AUTH_MODE=oidc', () => {
  let issuer: IssuerDouble;
  let server: TestServer;
  let admin: string;
  let user: string;
  let device: string;
  let service: string;

  async function call(path: string, token: string | null, init: RequestInit = {}) {
    const headers = new Headers(init.headers);
    if (token) headers.set('authorization', `Bearer ${token}`);
    if (typeof init.body === 'string') headers.set('content-type', 'application/json');
    const res = await fetch(`${server.url}${path}`, { ...init, headers });
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // A model file (YAML).
    }
    return { status: res.status, body, headers: res.headers };
  }

  async function enroll(token: string, label: string, person: 'grace' | 'eileen' | 'lionel') {
    for (const capture of await trainingCaptures(person)) {
      const form = new FormData();
      form.set('label', label);
      form.set('file', new Blob([new Uint8Array(capture)]), 'capture.jpg');
      const res = await call('/api/images', token, { method: 'POST', body: form });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
  }

  const audit = async (query = '') => {
    const res = await call(`/api/audit${query}`, admin);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { entries: any[]; next_cursor: string | null; retention_days: number };
  };

  beforeAll(async () => {
    issuer = await startIssuer();
    server = await startTestServer({ ...ENV, AUTH_MODE: 'oidc', OIDC_ISSUER: issuer.issuer, OIDC_JWKS_COOLDOWN_MS: '0' });
    admin = await issuer.token({ roles: ['biometric-admin'], username: 'root' });
    user = await issuer.token({ roles: ['biometric-user'], username: 'alice' });
    device = await issuer.token({ roles: ['biometric-device'], username: 'kiosk-1' });
    // A client-credentials token as Keycloak (and Lookout's IdP) writes it: the service account, azp the client.
    service = await issuer.token({
      roles: ['biometric-admin'],
      username: 'service-account-lookout-service',
      claims: { azp: 'lookout-service', client_id: 'lookout-service' },
    });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await issuer?.close();
  });

  it('records enrolls (a user and a client), a training and verifications with who, from where and on whom', async () => {
    await enroll(admin, 'grace', 'grace');
    await enroll(service, 'eileen', 'eileen');
    await enroll(admin, 'lionel', 'lionel');
    expect((await call('/api/train', admin, { method: 'POST' })).status).toBe(200);
    // #35: a user verifies their own label only.
    const grace = await issuer.token({ roles: ['biometric-user'], username: 'grace' });
    const verified = await call('/api/verify', grace, {
      method: 'POST',
      body: JSON.stringify({ label: 'grace', image: base64(await photo('grace')) }),
    });
    expect(verified.status).toBe(200);

    const { entries, retention_days } = await audit('?limit=200');
    expect(retention_days).toBe(365);
    const enrolls = entries.filter((e) => e.action === 'enroll');
    expect(enrolls).toHaveLength(12);
    expect(enrolls.find((e) => e.target === 'grace')).toMatchObject({ outcome: 'ok', actor: 'root', actor_kind: 'user', ip: '127.0.0.1' });
    expect(enrolls.find((e) => e.target === 'eileen')).toMatchObject({ outcome: 'ok', actor: 'lookout-service', actor_kind: 'client' });
    expect(entries.find((e) => e.action === 'train')).toMatchObject({ outcome: 'ok', actor: 'root', target: null });
    expect(entries.find((e) => e.action === 'verify')).toMatchObject({
      outcome: 'ok',
      actor: 'grace',
      actor_kind: 'user',
      target: 'grace',
      detail: { method: 'POST', endpoint: 'verify', status: 200 },
    });
    // Newest first, and never an image: nothing but the few fields above.
    const ids = entries.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(JSON.stringify(entries)).not.toMatch(/base64|\/9j\/|descriptor/);
  }, 180_000);

  it('gives the trained models to a device and an administrator, and 403 to a plain user (recorded as denied)', async () => {
    for (const path of ['/api/models/trained', '/api/models/trained/lbph', '/api/models/trained/embedding']) {
      const refused = await call(path, user);
      expect(refused.status, path).toBe(403);
      expect(refused.body.error.code).toBe('insufficient_role');
      expect(refused.body.error.message).toMatch(/needs the role biometric-device/);
      expect((await call(path, device)).status, path).toBe(200);
      expect((await call(path, admin)).status, path).toBe(200);
    }
    // The device still does what a user does.
    expect((await call('/api/labels', device)).status).toBe(200);
    // The list of the models (no template), and asking again with the version it has (304), are not rows.
    const before = (await audit('?action=template_download&limit=200')).entries.length;
    const index = await call('/api/models/trained', device);
    const again = await call('/api/models/trained/lbph', device, { headers: { 'if-none-match': index.headers.get('etag')! } });
    expect(again.status).toBe(304);
    const downloads = (await audit('?action=template_download&limit=200')).entries;
    expect(downloads.length).toBe(before);
    expect(downloads.filter((e) => e.actor === 'kiosk-1').map((e) => e.detail.endpoint)).toEqual(['trainedEmbedding', 'trainedLbph']);
    expect(downloads.filter((e) => e.actor === 'alice')).toHaveLength(3);
    expect(
      downloads.filter((e) => e.actor === 'alice').every((e) => e.outcome === 'denied' && e.detail.error === 'insufficient_role'),
    ).toBe(true);
    expect(downloads.find((e) => e.actor === 'kiosk-1' && e.detail.endpoint === 'trainedEmbedding')).toMatchObject({ outcome: 'ok' });
  });

  it('keeps a person out of the kiosk gallery: absent from both downloaded models, still recognised by the server', async () => {
    const before = await call('/api/models/trained', device);
    expect(before.body.labels).toEqual(['eileen', 'grace', 'lionel']);
    const full = decodeLbphFile((await call('/api/models/trained/lbph', device)).body);
    const eileenSamples = full.model.labels.filter((id) => id === full.labelIds.eileen).length;
    expect(eileenSamples).toBeGreaterThan(0);
    // Only an administrator, and only someone enrolled.
    expect((await call('/api/people/eileen', user, { method: 'PUT', body: JSON.stringify({ kiosk: false }) })).status).toBe(403);
    const unknown = await call('/api/people/nobody', admin, { method: 'PUT', body: JSON.stringify({ kiosk: false }) });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('label_not_found');
    const set = await call('/api/people/Eileen', service, { method: 'PUT', body: JSON.stringify({ kiosk: false }) });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toEqual({ label: 'eileen', display_name: expect.any(String), kiosk: false });

    const after = await call('/api/models/trained', device);
    expect(after.body.labels).toEqual(['grace', 'lionel']);
    expect(after.body.version).not.toBe(before.body.version);
    // The device's old version is not "not modified" any more.
    const stale = await call('/api/models/trained', device, { headers: { 'if-none-match': before.headers.get('etag')! } });
    expect(stale.status).toBe(200);

    const lbph = await call('/api/models/trained/lbph', device);
    expect(lbph.headers.get('x-model-version')).toBe(after.body.version);
    const fromYaml = decodeLbphFile(lbph.body);
    expect(Object.keys(fromYaml.labelIds).sort()).toEqual(['grace', 'lionel']);
    expect(fromYaml.model.histograms).toHaveLength(full.model.histograms.length - eileenSamples);
    expect([...new Set(fromYaml.model.labels)].sort()).toEqual(Object.values(fromYaml.labelIds).sort());
    const embedding = decodeEmbeddingFile(JSON.stringify((await call('/api/models/trained/embedding', device)).body));
    expect(embedding.labels.map((l) => l.name).sort()).toEqual(['grace', 'lionel']);
    expect(embedding.model.labels.length).toBeGreaterThan(0);
    expect(JSON.stringify(embedding.labels)).not.toContain('eileen');

    // The server's own recognition still knows her; the audit log says who changed the gallery.
    const recognized = await call('/api/recognize', user, {
      method: 'POST',
      body: JSON.stringify({ image: base64(await photo('eileen')) }),
    });
    expect(recognized.body.faces.map((f: { label: string }) => f.label)).toContain('eileen');
    expect((await audit('?action=person_update')).entries[0]).toMatchObject({
      outcome: 'ok',
      actor: 'lookout-service',
      actor_kind: 'client',
      target: 'eileen',
    });

    // Back in the gallery: the first version again.
    expect((await call('/api/people/eileen', admin, { method: 'PUT', body: JSON.stringify({ kiosk: true }) })).status).toBe(200);
    expect((await call('/api/models/trained', device)).body.version).toBe(before.body.version);
  }, 60_000);

  it('records deletions and refused attempts, filters by action, actor and time, and pages', async () => {
    expect((await call('/api/images/lionel', user, { method: 'DELETE' })).status).toBe(403);
    expect((await call('/api/images/lionel', admin, { method: 'DELETE' })).status).toBe(200);
    expect((await call('/api/images/nobody', admin, { method: 'DELETE' })).status).toBe(404);
    const deletes = (await audit('?action=delete')).entries;
    expect(deletes.map((e) => [e.outcome, e.actor, e.target])).toEqual([
      ['refused', 'root', 'nobody'],
      ['ok', 'root', 'lionel'],
      ['denied', 'alice', 'lionel'],
    ]);

    const alice = (await audit('?actor=alice&limit=200')).entries;
    expect(alice.length).toBeGreaterThan(0);
    expect(alice.every((e) => e.actor === 'alice')).toBe(true);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await audit(`?from=${encodeURIComponent(future)}`)).entries).toEqual([]);
    expect((await audit(`?to=${encodeURIComponent(future)}&action=train`)).entries).toHaveLength(1);

    // Pages of 5: every entry once, in order.
    const all = (await audit('?limit=200')).entries.map((e) => e.id);
    const paged: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { entries: any[]; next_cursor: string | null } = await audit(`?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...page.entries.map((e) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(paged).toEqual(all);
    const bad = await call('/api/audit?cursor=not-one', admin);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/cursor/);
  }, 60_000);

  it('is for administrators, and append-only: no endpoint changes it, and the database refuses to', async () => {
    expect((await call('/api/audit', user)).status).toBe(403);
    expect((await call('/api/audit', device)).status).toBe(403);
    expect((await call('/api/audit', null)).status).toBe(401);
    for (const method of ['POST', 'PUT', 'DELETE']) expect((await call('/api/audit', admin, { method })).status, method).toBe(405);
    const { db } = server.service.ctx;
    await expect(db.query("UPDATE audit_log SET actor = 'someone-else'")).rejects.toThrow(/append-only/);
    await expect(db.query('DELETE FROM audit_log')).rejects.toThrow(/append-only/);
    expect((await audit('?actor=someone-else')).entries).toEqual([]);
  });

  it('#35 4: counts requests refused without a verified principal per source and minute, not one row each', async () => {
    const before = (await audit('?limit=200')).entries.length;
    const garbage = 'not-a-token';
    const expired = await issuer.token({ roles: ['biometric-admin'], username: 'root', expiresIn: -60 });
    const sent: number[] = [];
    for (let i = 0; i < 100; i++) {
      const token = i % 3 === 0 ? null : i % 3 === 1 ? garbage : expired;
      const path = i % 2 ? '/api/models/trained/lbph' : '/api/images/grace';
      sent.push((await call(path, token, { method: i % 2 ? 'GET' : 'DELETE' })).status);
    }
    expect(sent.every((status) => status === 401)).toBe(true);
    const entries = (await audit('?limit=200')).entries;
    // A handful at most (one per minute this took), never one per request.
    const added = entries.slice(0, entries.length - before);
    expect(added.length).toBeGreaterThanOrEqual(1);
    expect(added.length).toBeLessThanOrEqual(3);
    const rows = (await audit('?action=anonymous_refused')).entries;
    expect(rows.length).toBe(added.length);
    expect(rows.reduce((n, e) => n + e.detail.count, 0)).toBe(100);
    for (const row of rows) {
      expect(row).toMatchObject({ outcome: 'denied', actor: null, actor_kind: 'anonymous', ip: '127.0.0.1', target: null });
      expect(new Date(row.at).getTime() % 60_000).toBe(0);
      expect(row.detail).toMatchObject({ count: expect.any(Number), last_status: 401 });
    }
    // Refusals of a known caller are still one row each, with who it was.
    const denied = await call('/api/models/trained/lbph', user);
    expect(denied.status).toBe(403);
    expect((await audit('?actor=alice')).entries[0]).toMatchObject({ action: 'template_download', outcome: 'denied', actor: 'alice' });
    // The count is the one update the table lets through, and only the server's own (the setting it runs under).
    const { db } = server.service.ctx;
    await expect(
      db.query("UPDATE audit_log SET detail = jsonb_set(detail, '{count}', '1') WHERE action = 'anonymous_refused'"),
    ).rejects.toThrow(/append-only/);
  }, 60_000);

  it('#35 5: records each change of the model settings with who made it, the old and the new values; the log line names them', async () => {
    const lines: string[] = [];
    const log = server.service.ctx.log;
    const info = log.info;
    log.info = (message, fields) => {
      lines.push(message);
      info(message, fields);
    };
    try {
      const put = (path: string, token: string, body: unknown) => call(path, token, { method: 'PUT', body: JSON.stringify(body) });
      const thresholds = (await call('/api/models/thresholds', admin)).body;
      const lbphMax = thresholds.lbph.max;
      expect((await put('/api/models/thresholds', admin, { recognizer: 'lbph', max: 70 })).status).toBe(200);
      expect((await put('/api/models/thresholds', service, { recognizer: 'lbph', max: null })).status).toBe(200);
      const config = (await call('/api/models/config', admin)).body;
      const other = config.recognition_model === 'lbph' ? 'embedding' : 'lbph';
      expect((await put('/api/models/config', admin, { recognition_model: other })).status).toBe(200);
      expect((await put('/api/models/config', admin, { recognition_model: config.recognition_model })).status).toBe(200);
      expect((await put('/api/models/detection', admin, { detection_method: 'local' })).status).toBe(200);
      expect((await put('/api/models/thresholds', user, { recognizer: 'lbph', max: 70 })).status).toBe(403);
      expect((await put('/api/models/thresholds', admin, { recognizer: 'embedding', max: 2, verify_max: 2 })).status).toBe(400);

      const rows = (await audit('?action=settings_change')).entries;
      expect(rows.map((e) => [e.detail.endpoint, e.outcome, e.actor])).toEqual([
        ['setThresholds', 'refused', 'root'],
        ['setThresholds', 'denied', 'alice'],
        ['setDetection', 'ok', 'root'],
        ['setModelsConfig', 'ok', 'root'],
        ['setModelsConfig', 'ok', 'root'],
        ['setThresholds', 'ok', 'lookout-service'],
        ['setThresholds', 'ok', 'root'],
      ]);
      const [refused, , detection, back, switched, reset, saved] = rows;
      // The limit moved drags the sure and verification bounds along: they are changes too.
      expect(saved).toMatchObject({
        target: 'lbph',
        actor_kind: 'user',
        detail: { method: 'PUT', status: 200, 'old.max': lbphMax, 'new.max': 70 },
      });
      expect(saved.detail['new.sure_max']).toBe(70);
      expect(saved.detail).not.toHaveProperty('old.ratio_max');
      expect(reset).toMatchObject({ actor_kind: 'client', detail: { 'old.max': 70, 'new.max': lbphMax } });
      expect(switched.detail).toMatchObject({ 'old.recognition_model': config.recognition_model, 'new.recognition_model': other });
      expect(back.detail).toMatchObject({ 'old.recognition_model': other, 'new.recognition_model': config.recognition_model });
      expect(detection.detail).toMatchObject({ 'old.detection_method': 'local', 'new.detection_method': 'local' });
      // A refused change says what was asked for.
      expect(refused).toMatchObject({
        target: 'embedding',
        detail: { status: 400, 'new.max': 2, 'new.verify_max': 2, descriptor_model: 'faceapi-128' },
      });
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^thresholds of lbph saved by root: max \d+ -> 70/),
          expect.stringMatching(/^thresholds of lbph saved by lookout-service \(client\): max 70 -> \d+/),
          `recognition model saved by root: recognition_model ${config.recognition_model} -> ${other}`,
          'detection method saved by root: detection_method local -> local',
        ]),
      );
    } finally {
      log.info = info;
    }
  }, 60_000);
});

describe('the audit log with auth off', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ ...ENV, EMBEDDING_ENABLED: 'false' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('records the operations as anonymous', async () => {
    const res = await fetch(`${server.url}/api/images/nobody`, { method: 'DELETE' });
    expect(res.status).toBe(404);
    const log = (await (await fetch(`${server.url}/api/audit`)).json()) as { entries: any[] };
    expect(log.entries).toEqual([
      expect.objectContaining({ action: 'delete', outcome: 'refused', actor: null, actor_kind: 'anonymous', target: 'nobody' }),
    ]);
  });
});
