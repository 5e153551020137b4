import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonState } from './json-state.js';

interface Doc {
  labels: string[];
  count: number;
}

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-json-state-'));
  file = path.join(dir, 'nested', 'state.json');
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const initial = (): Doc => ({ labels: [], count: 0 });

describe('JsonState', () => {
  it('starts from the initial value when the file is missing, and says it was not on disk', async () => {
    const state = new JsonState<Doc>(file, initial);
    expect(() => state.current).toThrow(/not loaded/);
    expect(await state.load()).toEqual({ labels: [], count: 0 });
    expect(state.wasOnDisk).toBe(false);
    expect(state.current).toEqual({ labels: [], count: 0 });
    await expect(fs.access(file)).rejects.toThrow(/ENOENT/);
  });

  it('writes each update to the file (whole, through a temporary file) and a reload finds it', async () => {
    const state = new JsonState<Doc>(file, initial);
    await state.load();
    const written = await state.update((d) => {
      d.labels.push('alice');
      d.count = 1;
    });
    expect(written).toEqual({ labels: ['alice'], count: 1 });
    expect(state.current).toEqual(written);
    expect(state.wasOnDisk).toBe(true);
    expect(JSON.parse(await fs.readFile(file, 'utf8'))).toEqual(written);
    // No temporary file is left beside it.
    expect(await fs.readdir(path.dirname(file))).toEqual(['state.json']);

    const reloaded = new JsonState<Doc>(file, initial);
    expect(await reloaded.load()).toEqual({ labels: ['alice'], count: 1 });
    expect(reloaded.wasOnDisk).toBe(true);
  });

  it('changes the value in memory only once the file is written; a failing change leaves both as they were', async () => {
    const state = new JsonState<Doc>(file, initial);
    await state.load();
    await state.update((d) => {
      d.count = 1;
    });
    await expect(
      state.update((d) => {
        d.count = 99;
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(state.current.count).toBe(1);
    expect(JSON.parse(await fs.readFile(file, 'utf8')).count).toBe(1);
    // Later updates still run.
    await state.update((d) => {
      d.count++;
    });
    expect(state.current.count).toBe(2);
  });

  it('keeps every one of concurrent updates', async () => {
    const state = new JsonState<Doc>(file, initial);
    await state.load();
    const names = Array.from({ length: 20 }, (_, i) => `person-${i}`);
    await Promise.all(
      names.map((name) =>
        state.update((d) => {
          d.labels.push(name);
          d.count++;
        }),
      ),
    );
    expect(state.current.count).toBe(20);
    expect(state.current.labels).toEqual(names);
    const reloaded = new JsonState<Doc>(file, initial);
    expect(await reloaded.load()).toEqual({ labels: names, count: 20 });
  });

  it('refuses a corrupt file instead of starting over, and leaves it as it is', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, '{"labels": ["alice"], "count": 1');
    const state = new JsonState<Doc>(file, initial);
    await expect(state.load()).rejects.toThrow(new RegExp(`cannot read ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    expect(await fs.readFile(file, 'utf8')).toBe('{"labels": ["alice"], "count": 1');
  });

  it('refuses a file it cannot read (a directory in its place)', async () => {
    await fs.mkdir(file, { recursive: true });
    await expect(new JsonState<Doc>(file, initial).load()).rejects.toThrow(/cannot read/);
  });
});
