/**
 * The audit log's store on both databases (embedded PGlite and PostgreSQL): entries back newest first, filtered and
 * paged; the table refuses updates and deletes (append-only), except the retention purge, which deletes only what
 * is older than AUDIT_RETENTION_DAYS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { DATABASES, type TestDatabase } from '../../test/helpers/databases.js';
import { AuditLog, type AuditEntry, InvalidCursorError } from './audit-log.js';
import { auditActionOf, outcomeOf } from './audit-middleware.js';

const DAY = 86_400_000;
const entry = (over: Partial<AuditEntry> = {}): AuditEntry => ({
  action: 'enroll',
  outcome: 'ok',
  actor: 'root',
  actor_kind: 'user',
  ip: '127.0.0.1',
  target: 'grace',
  detail: { method: 'POST', endpoint: 'uploadImage', status: 200 },
  ...over,
});

describe.each(DATABASES)('the audit log on %s', (_name, open) => {
  let t: TestDatabase;
  let log: AuditLog;
  const now = new Date('2026-06-01T12:00:00.000Z');

  beforeAll(async () => {
    t = await open();
    log = new AuditLog(t.db, { retentionDays: 30, log: createLogger('silent') });
    await log.record(entry({ target: 'old' }), new Date(now.getTime() - 31 * DAY));
    await log.record(entry({ action: 'train', target: null }), new Date(now.getTime() - 2 * DAY));
    await log.record(entry({ action: 'verify', actor: 'lookout-service', actor_kind: 'client' }), new Date(now.getTime() - DAY));
    await log.record(entry({ action: 'delete', outcome: 'denied', actor: 'alice' }), now);
  }, 60_000);
  afterAll(async () => {
    log?.stop();
    await t?.dispose();
  });

  it('lists newest first, filtered by action, actor and time', async () => {
    const all = await log.list();
    expect(all.entries.map((e) => e.target ?? e.action)).toEqual(['grace', 'grace', 'train', 'old']);
    expect(all.entries[0]).toMatchObject({ action: 'delete', outcome: 'denied', actor: 'alice', at: now.toISOString() });
    expect(all.next_cursor).toBeNull();
    expect((await log.list({ action: 'verify' })).entries).toEqual([
      expect.objectContaining({ actor: 'lookout-service', actor_kind: 'client' }),
    ]);
    expect((await log.list({ actor: 'alice' })).entries).toHaveLength(1);
    const window = await log.list({ from: new Date(now.getTime() - 3 * DAY), to: now });
    expect(window.entries.map((e) => e.action)).toEqual(['verify', 'train']);
  });

  it('pages with an opaque cursor, and refuses one it did not make', async () => {
    const first = await log.list({ limit: 3 });
    expect(first.entries).toHaveLength(3);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await log.list({ limit: 3, cursor: first.next_cursor! });
    expect(second.entries.map((e) => e.target)).toEqual(['old']);
    expect(second.next_cursor).toBeNull();
    await expect(log.list({ cursor: 'bm9wZQ' })).rejects.toThrow(InvalidCursorError);
  });

  it('is append-only: the database refuses updates and deletes', async () => {
    await expect(t.db.query("UPDATE audit_log SET actor = 'mallory'")).rejects.toThrow(/append-only/);
    await expect(t.db.query('DELETE FROM audit_log')).rejects.toThrow(/append-only/);
    expect((await log.list()).entries).toHaveLength(4);
  });

  it('purges only the entries older than the retention', async () => {
    expect(await log.purge(now)).toBe(1);
    expect((await log.list()).entries.map((e) => e.target ?? e.action)).toEqual(['grace', 'grace', 'train']);
    expect(await log.purge(now)).toBe(0);
    // Outside the purge's transaction, deletes are refused again.
    await expect(t.db.query('DELETE FROM audit_log')).rejects.toThrow(/append-only/);
  });

  it('records a target or detail the database cannot hold as such (U+0000, half a surrogate pair) with U+FFFD', async () => {
    // From a path such as DELETE /api/images/%00 (the fuzz run's labels): the attempt is kept, not lost.
    await log.record(entry({ action: 'delete', target: 'a\u0000b', detail: { method: 'DELETE', filename: 'x\ud800.jpg' } }), now);
    const [latest] = (await log.list({ action: 'delete' })).entries;
    expect(latest).toMatchObject({ target: 'a\ufffdb', detail: { method: 'DELETE', filename: 'x\ufffd.jpg' } });
  });
});

describe.each(DATABASES)('#35: refusals without a verified principal on %s', (_name, open) => {
  let t: TestDatabase;
  let log: AuditLog;
  const minute = new Date('2026-06-01T12:00:00.000Z');
  const refuse = (ip: string, at: Date = new Date(minute.getTime() + 10_000)) =>
    log.recordAnonymousRefusal({ ip, endpoint: 'trainedLbph', status: 401 }, at);

  beforeAll(async () => {
    t = await open();
    log = new AuditLog(t.db, { retentionDays: 30, log: createLogger('silent'), anonymousRowsPerMinute: 3 });
  }, 60_000);
  afterAll(async () => {
    log?.stop();
    await t?.dispose();
  });

  it('counts them in one row per address and minute, at once from everywhere, with one overflow row past the cap', async () => {
    const ips = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5'];
    // Sent at once (replicas, or one busy server): every refusal counted once, no address twice.
    await Promise.all([...ips, ...ips, ...ips].map((ip) => refuse(ip)));
    await refuse('10.0.0.1', new Date(minute.getTime() + 70_000));
    const rows = (await log.list({ action: 'anonymous_refused' })).entries;
    expect(rows).toHaveLength(5);
    const inFirst = rows.filter((r) => r.at === minute.toISOString());
    expect(inFirst.reduce((n, r) => n + Number(r.detail.count), 0)).toBe(15);
    const overflow = inFirst.filter((r) => r.detail.overflow === true);
    expect(overflow).toHaveLength(1);
    expect(overflow[0]).toMatchObject({ ip: null, actor: null, actor_kind: 'anonymous', outcome: 'denied' });
    const sources = inFirst.filter((r) => r.detail.overflow === undefined);
    expect(sources).toHaveLength(3);
    expect(new Set(sources.map((r) => r.ip)).size).toBe(3);
    expect(sources.every((r) => r.detail.count === 3 && r.detail.last_endpoint === 'trainedLbph' && r.detail.last_status === 401)).toBe(
      true,
    );
    expect(overflow[0].detail.count).toBe(6);
    // The next minute starts again.
    expect(rows.find((r) => r.at === new Date(minute.getTime() + 60_000).toISOString())).toMatchObject({
      ip: '10.0.0.1',
      detail: { count: 1 },
    });
  });

  it('lets nothing but the count change, and only under the setting the server uses', async () => {
    const bump = "UPDATE audit_log SET detail = jsonb_set(detail, '{count}', '1000') WHERE action = 'anonymous_refused'";
    await expect(t.db.query(bump)).rejects.toThrow(/append-only/);
    const under = (sql: string) =>
      t.db.transaction(async (tx) => {
        await tx.query("SELECT set_config('lookout.audit_count', 'on', true)");
        await tx.query(sql);
      });
    await expect(under("UPDATE audit_log SET actor = 'someone' WHERE action = 'anonymous_refused'")).rejects.toThrow(/append-only/);
    await expect(
      under("UPDATE audit_log SET detail = jsonb_set(detail, '{count}', '0') WHERE action = 'anonymous_refused'"),
    ).rejects.toThrow(/append-only/);
    await expect(under("UPDATE audit_log SET detail = detail || '{\"extra\": 1}' WHERE action = 'anonymous_refused'")).rejects.toThrow(
      /append-only/,
    );
    await log.record(entry());
    await expect(under("UPDATE audit_log SET detail = jsonb_set(detail, '{count}', '5') WHERE action = 'enroll'")).rejects.toThrow(
      /append-only/,
    );
  });
});

describe('which requests are audited', () => {
  it('maps the route table to operations', () => {
    expect(auditActionOf('uploadImage', 'post', '/images')).toBe('enroll');
    expect(auditActionOf('trainedEmbedding', 'get', '/models/trained/embedding')).toBe('template_download');
    expect(auditActionOf('trainedCorrections', 'get', '/models/trained/corrections')).toBe('template_download');
    expect(auditActionOf('trainedCompactSegments', 'get', '/models/trained/compact/segments')).toBe('template_download');
    expect(auditActionOf('sightingCrop', 'get', '/sightings/{id}/crop')).toBe('sighting_access');
    expect(auditActionOf('deleteSighting', 'delete', '/sightings/{id}')).toBe('delete');
    expect(auditActionOf('reviewAssign', 'post', '/review/assign')).toBe('enroll');
    expect(auditActionOf('reviewDismiss', 'post', '/review/dismiss')).toBe('review');
    expect(auditActionOf('createCorrection', 'post', '/corrections')).toBe('correction');
    expect(auditActionOf('recognize', 'post', '/recognize')).toBeNull();
    expect(auditActionOf('labels', 'get', '/labels')).toBeNull();
    // #35: what decides who is named.
    expect(auditActionOf('setThresholds', 'put', '/models/thresholds')).toBe('settings_change');
    expect(auditActionOf('setModelsConfig', 'put', '/models/config')).toBe('settings_change');
    expect(auditActionOf('setDetection', 'put', '/models/detection')).toBe('settings_change');
    expect(auditActionOf('previewThresholds', 'post', '/models/thresholds/preview')).toBeNull();
  });

  it('gives the outcome by status', () => {
    expect([200, 304, 401, 403, 404, 409, 500, 503].map(outcomeOf)).toEqual([
      'ok',
      'ok',
      'denied',
      'denied',
      'refused',
      'refused',
      'error',
      'error',
    ]);
  });
});
