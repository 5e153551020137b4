import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { ImageStore } from './image-store.js';
import { writeFileAtomic } from './atomic.js';

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-store-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('ImageStore', () => {
  it('keeps every image of many concurrent uploads, with distinct names', async () => {
    const store = new ImageStore(root);
    await store.init();
    const names = await Promise.all(
      Array.from({ length: 60 }, (_, i) => store.save(i % 2 ? 'ada' : 'alan', new Uint8Array([i, 1, 2, 3]), 'jpeg')),
    );
    expect(new Set(names).size).toBe(60);
    expect(await store.labels()).toEqual([
      { label: 'ada', images: 30 },
      { label: 'alan', images: 30 },
    ]);
    const stored = await Promise.all(names.map((n, i) => fs.readFile(path.join(root, i % 2 ? 'ada' : 'alan', n))));
    stored.forEach((bytes, i) => {
      expect(bytes[0]).toBe(i);
    });
  });

  it('removes a label and says how many images went; unknown labels remove nothing', async () => {
    const store = new ImageStore(root);
    await store.init();
    await store.save('ada', new Uint8Array([1]), 'png');
    await store.save('ada', new Uint8Array([2]), 'png');
    expect(await store.remove('ada')).toBe(2);
    expect(await store.remove('ada')).toBe(0);
    expect(await store.list('ada')).toBeNull();
  });

  it('removes one image, leaving the others; the last one takes the label along', async () => {
    const store = new ImageStore(root);
    await store.init();
    const first = await store.save('ada', new Uint8Array([1]), 'png');
    const second = await store.save('ada', new Uint8Array([2]), 'png');
    expect(await store.removeOne('ada', first)).toBe(1);
    expect((await store.list('ada'))!.map((i) => i.filename)).toEqual([second]);
    expect(await store.removeOne('ada', first)).toBeNull();
    expect(await store.removeOne('ada', second)).toBe(0);
    expect(await store.labels()).toEqual([]);
    await expect(fs.stat(path.join(root, 'ada'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await store.removeOne('nobody', first)).toBeNull();
  });

  it('removes one image only under a name of its own: no path, no dot file, no temporary file', async () => {
    const store = new ImageStore(root);
    await store.init();
    const kept = await store.save('ada', new Uint8Array([1]), 'png');
    await store.save('bob', new Uint8Array([2]), 'png');
    await fs.writeFile(path.join(root, 'ada', '.tmp-upload-1.png'), 'half');
    await fs.writeFile(path.join(root, 'top.png'), 'beside the labels');
    for (const name of ['../top.png', `../bob/${kept}`, '.tmp-upload-1.png', '..', '.', '', 'a/b.png', 'a\\b.png']) {
      expect(await store.removeOne('ada', name), name).toBeNull();
    }
    expect(await fs.readdir(path.join(root, 'ada'))).toHaveLength(2);
    expect(await fs.readFile(path.join(root, 'top.png'), 'utf8')).toBe('beside the labels');
    expect(await store.labels()).toEqual([
      { label: 'ada', images: 1 },
      { label: 'bob', images: 1 },
    ]);
  });

  it('ignores temp files a crash left behind and cleans them at start', async () => {
    await fs.mkdir(path.join(root, 'ada'));
    await fs.writeFile(path.join(root, 'ada', '.tmp-dead-1.jpg'), 'half');
    await fs.writeFile(path.join(root, 'ada', '1-a.jpg'), 'whole');
    const store = new ImageStore(root);
    await store.init();
    expect((await store.list('ada'))!.map((i) => i.filename)).toEqual(['1-a.jpg']);
    expect(await fs.readdir(path.join(root, 'ada'))).toEqual(['1-a.jpg']);
  });

  it('ignores folders whose names are not valid labels', async () => {
    await fs.mkdir(path.join(root, 'Not A Label'));
    await fs.writeFile(path.join(root, 'Not A Label', 'x.jpg'), 'x');
    const store = new ImageStore(root);
    await store.init();
    expect(await store.labels()).toEqual([]);
  });

  it('finds only plain file names inside the label folder', async () => {
    const store = new ImageStore(root);
    await store.init();
    const name = await store.save('ada', new Uint8Array([1]), 'png');
    expect(await store.find('ada', name)).toBe(path.join(root, 'ada', name));
    expect(await store.find('ada', `../ada/${name}`)).toBeNull();
    expect(await store.find('ada', 'missing.png')).toBeNull();
  });
});

describe('writeFileAtomic', () => {
  it('replaces the whole file and leaves no temp file', async () => {
    const target = path.join(root, 'model.bin');
    await writeFileAtomic(target, 'old');
    await writeFileAtomic(target, 'new content');
    expect(await fs.readFile(target, 'utf8')).toBe('new content');
    expect(await fs.readdir(root)).toEqual(['model.bin']);
  });

  it('leaves the previous file intact when the write fails', async () => {
    const target = path.join(root, 'model.bin');
    await writeFileAtomic(target, 'old');
    // A directory as the target makes the final rename fail after the temp file was fully written.
    const dirTarget = path.join(root, 'sub');
    await fs.mkdir(path.join(dirTarget, 'x'), { recursive: true });
    await expect(writeFileAtomic(dirTarget, 'new')).rejects.toThrow();
    expect(await fs.readFile(target, 'utf8')).toBe('old');
    expect((await fs.readdir(root)).sort()).toEqual(['model.bin', 'sub']);
  });
});

describe('ImageStore captures', () => {
  it('stores a capture id once; concurrent and later repeats are duplicates with the same name', async () => {
    const store = new ImageStore(root);
    await store.init();
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.saveCapture('ada', new Uint8Array([i]), 'jpeg', 'capture-0001')),
    );
    expect(outcomes.filter((o) => !o.duplicate)).toHaveLength(1);
    expect(new Set(outcomes.map((o) => o.filename))).toEqual(new Set(['capture-0001.jpg']));
    expect(await store.saveCapture('ada', new Uint8Array([9]), 'png', 'capture-0001')).toEqual({
      filename: 'capture-0001.jpg',
      duplicate: true,
    });
    expect(await fs.readdir(path.join(root, 'ada'))).toEqual(['capture-0001.jpg']);
    // The first upload's bytes are the ones kept.
    const first = outcomes.findIndex((o) => !o.duplicate);
    expect((await fs.readFile(path.join(root, 'ada', 'capture-0001.jpg')))[0]).toBe(first);
    // Per label: the same capture id under another label is another image.
    expect(await store.saveCapture('alan', new Uint8Array([1]), 'jpeg', 'capture-0001')).toEqual({
      filename: 'capture-0001.jpg',
      duplicate: false,
    });
  });

  it('lists images oldest first even when capture ids do not sort by time', async () => {
    const store = new ImageStore(root);
    await store.init();
    await store.saveCapture('ada', new Uint8Array([1]), 'jpeg', 'zzzz-first');
    await new Promise((r) => setTimeout(r, 15));
    await store.saveCapture('ada', new Uint8Array([2]), 'jpeg', 'aaaa-second');
    expect((await store.list('ada'))!.map((i) => i.filename)).toEqual(['zzzz-first.jpg', 'aaaa-second.jpg']);
  });
});

describe('ImageStore and symbolic links', () => {
  let outside: string;
  beforeEach(async () => {
    outside = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-outside-'));
    await fs.writeFile(path.join(outside, 'secret.jpg'), 'not yours');
  });
  afterEach(async () => {
    await fs.rm(outside, { recursive: true, force: true });
  });

  it('does not list, find, read or count a link inside a label folder, and deletes the link, never its target', async () => {
    const store = new ImageStore(root);
    await store.init();
    const name = await store.save('ada', new Uint8Array([1]), 'png');
    await fs.symlink(path.join(outside, 'secret.jpg'), path.join(root, 'ada', 'link.jpg'));
    expect((await store.list('ada'))!.map((i) => i.filename)).toEqual([name]);
    expect(await store.find('ada', 'link.jpg')).toBeNull();
    expect(await store.read('ada', 'link.jpg')).toBeNull();
    expect(await store.read('ada', name)).toEqual(new Uint8Array([1]));
    expect((await store.all()).map((r) => r.filename)).toEqual([name]);
    // One image: the link is no image, so nothing is deleted (neither the link nor its target).
    expect(await store.removeOne('ada', 'link.jpg')).toBeNull();
    expect(await fs.readFile(path.join(outside, 'secret.jpg'), 'utf8')).toBe('not yours');
    expect(await store.remove('ada')).toBe(1);
    expect(await fs.readFile(path.join(outside, 'secret.jpg'), 'utf8')).toBe('not yours');
  });

  it('refuses to read an image that became a link after it was listed for training', async () => {
    const store = new ImageStore(root);
    await store.init();
    await store.save('ada', new Uint8Array([1]), 'png');
    const [ref] = await store.all();
    await fs.rm(ref.path);
    await fs.symlink(path.join(outside, 'secret.jpg'), ref.path);
    await expect(store.readRef(ref)).rejects.toMatchObject({ code: 'ELOOP' });
  });

  it('treats a label folder that is a link as no label: not listed, not deleted through, not written through', async () => {
    await fs.symlink(outside, path.join(root, 'eve'));
    const store = new ImageStore(root);
    await store.init();
    expect(await store.labels()).toEqual([]);
    expect(await store.list('eve')).toBeNull();
    expect(await store.read('eve', 'secret.jpg')).toBeNull();
    expect(await store.remove('eve')).toBe(0);
    expect(await store.removeOne('eve', 'secret.jpg')).toBeNull();
    await expect(store.save('eve', new Uint8Array([1]), 'png')).rejects.toThrow(/not a folder/);
    await expect(store.saveCapture('eve', new Uint8Array([1]), 'png', 'capture-0001')).rejects.toThrow(/not a folder/);
    expect(await fs.readdir(outside)).toEqual(['secret.jpg']);
  });
});

describe('ImageStore folders named before NFC-after-lower-casing', () => {
  it('merges a folder whose name is its label in another normalisation form, keeping every image', async () => {
    await fs.mkdir(path.join(root, 't\u0308'));
    await fs.writeFile(path.join(root, 't\u0308', '1-a.jpg'), 'one');
    await fs.writeFile(path.join(root, 't\u0308', '2-b.jpg'), 'two');
    await fs.mkdir(path.join(root, '\u1e97'));
    await fs.writeFile(path.join(root, '\u1e97', '1-a.jpg'), 'already here');
    const lines: string[] = [];
    const store = new ImageStore(
      root,
      createLogger('info', (l) => lines.push(l)),
    );
    await store.init();
    expect(await fs.readdir(root)).toEqual(['\u1e97']);
    const images = (await store.list('\u1e97'))!;
    expect(images).toHaveLength(3);
    const contents = await Promise.all(images.map((i) => fs.readFile(path.join(root, '\u1e97', i.filename), 'utf8')));
    expect(contents.sort()).toEqual(['already here', 'one', 'two']);
    expect(lines.join('')).toMatch(/moved 2 images/);
  });

  it('leaves other folders alone, with a warning', async () => {
    await fs.mkdir(path.join(root, 'Ada'));
    await fs.mkdir(path.join(root, 'x\u202ey'));
    const lines: string[] = [];
    const store = new ImageStore(
      root,
      createLogger('info', (l) => lines.push(l)),
    );
    await store.init();
    expect((await fs.readdir(root)).sort()).toEqual(['Ada', 'x\u202ey']);
    expect(lines.join('')).toMatch(/not a label folder.*left as it is/);
  });
});
