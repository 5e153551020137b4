/**
 * The IdP's file storage for oidc-provider: records survive a new adapter (a restart), expire, are consumed,
 * found by uid, revoked with their grant, swept, and only their owner can read them.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileAdapter } from '../../server/idp/file-adapter.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'lookout-idp-adapter-'));
});
afterEach(async () => {
  vi.useRealTimers();
  await rm(root, { recursive: true, force: true });
});

describe('FileAdapter', () => {
  it('keeps records across instances, in files only the owner can read', async () => {
    const Adapter = FileAdapter.under(root);
    await new Adapter('Session').upsert('s/1', { uid: 'u1', accountId: 'a' }, 60);
    const again = new Adapter('Session');
    expect(await again.find('s/1')).toEqual({ uid: 'u1', accountId: 'a' });
    expect(await again.findByUid('u1')).toEqual({ uid: 'u1', accountId: 'a' });
    expect(await again.findByUid('u2')).toBeUndefined();
    expect(await new Adapter('Grant').find('s/1')).toBeUndefined(); // models are separate
    for (const name of await readdir(path.join(root, 'Session'))) {
      if (name.endsWith('.json')) expect((await stat(path.join(root, 'Session', name))).mode & 0o077).toBe(0);
    }
  });

  it('answers expired records as absent and sweeps them', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const a = new FileAdapter(root, 'AuthorizationCode');
    await a.upsert('short', { grantId: 'g' }, 10);
    await a.upsert('long', { grantId: 'g' }, 1000);
    vi.setSystemTime(Date.now() + 11_000);
    expect(await a.find('short')).toBeUndefined();
    await a.upsert('short2', {}, 5);
    vi.setSystemTime(Date.now() + 6_000);
    expect(await FileAdapter.sweep(root)).toBe(1);
    expect(await a.find('long')).toEqual({ grantId: 'g' });
  });

  it('marks a record consumed, and revokes every token of a grant', async () => {
    const codes = new FileAdapter(root, 'AuthorizationCode');
    const tokens = new FileAdapter(root, 'RefreshToken');
    await codes.upsert('c1', { grantId: 'g1' }, 60);
    await tokens.upsert('r1', { grantId: 'g1' }, 60);
    await tokens.upsert('r2', { grantId: 'g2' }, 60);
    await codes.consume('c1');
    expect((await codes.find('c1'))?.consumed).toBeTypeOf('number');
    await tokens.revokeByGrantId('g1');
    expect(await codes.find('c1')).toBeUndefined();
    expect(await tokens.find('r1')).toBeUndefined();
    expect(await tokens.find('r2')).toEqual({ grantId: 'g2' });
  });

  it('drops the uid index with its record, and ignores an index left by a replaced record', async () => {
    const sessions = new FileAdapter(root, 'Session');
    await sessions.upsert('s1', { uid: 'old' }, 60);
    await sessions.upsert('s1', { uid: 'new' }, 60);
    expect(await sessions.findByUid('old')).toBeUndefined();
    expect(await sessions.findByUid('new')).toEqual({ uid: 'new' });
    await sessions.destroy('s1');
    expect(await sessions.findByUid('new')).toBeUndefined();
  });
});
