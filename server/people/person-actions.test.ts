/**
 * #36 2: a merge or a move never loses a photo. The photos are linked under the other person before the database is
 * changed; when that change fails (here: the transaction throws, as a crash or a lost connection would end it), the
 * copies go and every original is where it was, byte for byte.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../db/database.js';
import { createLogger } from '../logger.js';
import { ImageStore } from '../storage/image-store.js';
import { PersonActions } from './person-actions.js';

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-person-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** A database with nobody's row, whose transactions fail. */
const failingDb = {
  query: async () => [],
  transaction: async () => {
    throw new Error('the connection was lost');
  },
} as unknown as Database;

describe('PersonActions', () => {
  it('keeps every photo where it was when the merge cannot be recorded', async () => {
    const images = new ImageStore(root);
    await images.init();
    const theirs = [
      await images.save('g-hopper', new Uint8Array([1, 2, 3]), 'jpeg'),
      await images.save('g-hopper', new Uint8Array([4, 5]), 'jpeg'),
    ];
    const hers = await images.save('grace-hopper', new Uint8Array([9]), 'jpeg');
    const actions = new PersonActions({
      db: failingDb,
      images,
      log: createLogger('silent'),
      trainedLabels: () => new Set(),
      trainingRunning: () => false,
    });
    await expect(actions.merge('g-hopper', 'grace-hopper', 'root')).rejects.toThrow('the connection was lost');
    expect((await images.list('g-hopper'))?.map((i) => i.filename).sort()).toEqual([...theirs].sort());
    expect((await images.list('grace-hopper'))?.map((i) => i.filename)).toEqual([hers]);
    expect([...(await fs.readFile(path.join(root, 'g-hopper', theirs[0])))]).toEqual([1, 2, 3]);
    await expect(actions.move('g-hopper', [theirs[1]], 'ada', 'Ada', 'root')).rejects.toThrow('the connection was lost');
    expect(await images.list('ada')).toBeNull();
    expect((await images.list('g-hopper'))?.length).toBe(2);
  });

  it('copies before it removes: after copyInto both labels hold the photo, after removeMoved only the new one', async () => {
    const images = new ImageStore(root);
    await images.init();
    const name = await images.save('ada', new Uint8Array([7, 7]), 'png');
    await images.save('alan', new Uint8Array([8]), 'png');
    const copied = await images.copyInto('ada', 'alan', [name, 'missing.png']);
    expect([...copied.keys()]).toEqual([name]);
    expect(await images.find('ada', name)).not.toBeNull();
    expect([...(await fs.readFile(path.join(root, 'alan', copied.get(name) as string)))]).toEqual([7, 7]);
    expect(await images.removeMoved('ada', [name])).toBe(1);
    expect(await images.list('ada')).toBeNull();
    expect((await images.list('alan'))?.length).toBe(2);
  });
});
