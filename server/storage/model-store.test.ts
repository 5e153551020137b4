import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LBPH_DEFAULTS, type LbphModel, lbpHistogram } from '../../shared/lbph/lbph.js';
import { encodeLabelMapPickle } from '../../shared/lbph/pickle.js';
import { encodeLbphFile } from '../../shared/recognition/model-files.js';
import { noiseCrop } from '../../test/helpers/noise-crop.js';
import { FileLock } from './file-lock.js';
import {
  LABELS_FILE,
  LBPH_SOURCE_FILE,
  ModelStore,
  PLACE_LOCK_FILE,
  TRAINING_FILE,
  TRAINING_SOURCE_NOTE,
  YamlSuperseded,
} from './model-store.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-models-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

function model(labels: number[]): LbphModel {
  const bins = LBPH_DEFAULTS.gridX * LBPH_DEFAULTS.gridY * 256;
  return {
    ...LBPH_DEFAULTS,
    histograms: labels.map((l, i) => Float32Array.from({ length: bins }, (_, k) => ((k * 7 + i * 13 + l) % 97) / 97)),
    labels: Int32Array.from(labels),
  };
}

describe('ModelStore', () => {
  it('round-trips a model with its label names', async () => {
    const store = new ModelStore(dir);
    await store.init();
    expect(await store.loadLbph()).toBeNull();
    await store.saveLbph(model([0, 0, 1]), { ada: 0, alan: 1 });
    const loaded = (await store.loadLbph())!;
    expect(loaded.labelIds).toEqual({ ada: 0, alan: 1 });
    expect(Array.from(loaded.model.labels)).toEqual([0, 0, 1]);
    expect(loaded.model.histograms[2]).toEqual(model([0, 0, 1]).histograms[2]);
  });

  it('a crash between the two renames (new training.yml, old model.pickle) still loads consistently', async () => {
    const store = new ModelStore(dir);
    await store.init();
    await store.saveLbph(model([0, 1]), { ada: 0, alan: 1 });
    const oldPickle = await fs.readFile(path.join(dir, LABELS_FILE));
    await store.saveLbph(model([0, 1, 2]), { ada: 0, alan: 1, grace: 2 });
    await fs.writeFile(path.join(dir, LABELS_FILE), oldPickle); // as if the pickle's rename never happened
    const loaded = (await store.loadLbph())!;
    expect(loaded.labelIds).toEqual({ ada: 0, alan: 1, grace: 2 });
  });

  it('ignores and removes half-written temp files left by a crash', async () => {
    const store = new ModelStore(dir);
    await store.init();
    await store.saveLbph(model([0]), { ada: 0 });
    await fs.writeFile(path.join(dir, `.tmp-123-${TRAINING_FILE}`), '%YAML:1.0\n---\nopencv_lbphfaces:\n   thres');
    const restarted = new ModelStore(dir);
    await restarted.init();
    expect((await restarted.loadLbph())!.labelIds).toEqual({ ada: 0 });
    expect((await fs.readdir(dir)).sort()).toEqual([LABELS_FILE, LBPH_SOURCE_FILE, TRAINING_FILE, TRAINING_SOURCE_NOTE].sort());
  });

  it('loads a training.yml written by OpenCV, with names from model.pickle', async () => {
    const script = [
      'import cv2, numpy as np',
      'rng = np.random.default_rng(7)',
      'faces = [rng.integers(0, 256, (60, 60), dtype=np.uint8) for _ in range(3)]',
      'r = cv2.face.LBPHFaceRecognizer_create()',
      'r.train(faces, np.array([0, 1, 1]))',
      `r.write(${JSON.stringify(path.join(dir, TRAINING_FILE))})`,
    ].join('\n');
    execFileSync('/usr/bin/python3', ['-c', script]);
    await fs.writeFile(path.join(dir, LABELS_FILE), encodeLabelMapPickle({ ada: 0, alan: 1 }));
    const loaded = (await new ModelStore(dir).loadLbph())!;
    expect(loaded.labelIds).toEqual({ ada: 0, alan: 1 });
    expect(Array.from(loaded.model.labels)).toEqual([0, 1, 1]);
  });

  it('refuses a model whose label ids have no names', async () => {
    const store = new ModelStore(dir);
    await store.init();
    await store.saveLbph(model([0, 1]), { ada: 0, alan: 1 });
    // Strip the names from the YAML and give a pickle without id 1.
    const yml = await fs.readFile(path.join(dir, TRAINING_FILE), 'utf8');
    await fs.writeFile(path.join(dir, TRAINING_FILE), yml.replace(/labelsInfo:[\s\S]*$/, 'labelsInfo: []\n'));
    await fs.writeFile(path.join(dir, LABELS_FILE), encodeLabelMapPickle({ ada: 0 }));
    await expect(store.loadLbph()).rejects.toThrow(/label ids 1/);
  });

  it('returns the exact bytes it wrote, and reads the same bytes back (the downloadable set)', async () => {
    const store = new ModelStore(dir);
    await store.init();
    const written = await store.saveLbph(model([0, 1]), { ada: 0, alan: 1 });
    const onDisk = await fs.readFile(path.join(dir, TRAINING_FILE));
    expect(Buffer.from(written.yaml.bytesSync()).equals(onDisk)).toBe(true);
    expect(written.yaml.size).toBe(onDisk.length);
    expect(written.yaml.sha256).toBe(createHash('sha256').update(onDisk).digest('hex'));
    expect(Buffer.from(written.pickle).equals(await fs.readFile(path.join(dir, LABELS_FILE)))).toBe(true);
    const loaded = (await store.loadLbph())!;
    expect(Buffer.from(loaded.files.lbph!.bytesSync()).equals(onDisk)).toBe(true);
    expect(loaded.files.lbph!.sha256).toBe(written.yaml.sha256);
    expect(Buffer.from(loaded.files.labelMap!).equals(Buffer.from(written.pickle))).toBe(true);
  });

  it('keeps serving the bytes it wrote after a later training renamed new files over them', async () => {
    const store = new ModelStore(dir);
    await store.init();
    const first = await store.saveLbph(model([0, 1]), { ada: 0, alan: 1 });
    const firstBytes = await fs.readFile(path.join(dir, TRAINING_FILE));
    const loaded = (await store.loadLbph())!;
    await store.saveLbph(model([0, 1, 2]), { ada: 0, alan: 1, grace: 2 });
    expect((await fs.readFile(path.join(dir, TRAINING_FILE))).equals(firstBytes)).toBe(false);
    // Both still read the first training's inode, in pieces or whole.
    for (const file of [first.yaml, loaded.files.lbph!]) {
      const pieces: Uint8Array[] = [];
      for await (const piece of file.chunks()) pieces.push(piece);
      expect(Buffer.concat(pieces).equals(firstBytes)).toBe(true);
      expect(Buffer.from(file.bytesSync()).equals(firstBytes)).toBe(true);
    }
  });
});

describe('ModelStore and symbolic links', () => {
  it('does not read model files through a link (they would be served to browsers), and a training replaces the link', async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-outside-'));
    try {
      const real = new ModelStore(outside);
      await real.init();
      await real.saveLbph(model([0]), { ada: 0 });
      const store = new ModelStore(dir);
      await store.init();
      await fs.symlink(path.join(outside, TRAINING_FILE), path.join(dir, TRAINING_FILE));
      await fs.symlink(path.join(outside, LABELS_FILE), path.join(dir, LABELS_FILE));
      expect(await store.loadLbph()).toBeNull();
      await store.saveLbph(model([0, 1]), { ada: 0, alan: 1 });
      expect((await fs.lstat(path.join(dir, TRAINING_FILE))).isFile()).toBe(true);
      expect((await store.loadLbph())!.labelIds).toEqual({ ada: 0, alan: 1 });
      // The files the links pointed at are untouched.
      expect((await real.loadLbph())!.labelIds).toEqual({ ada: 0 });
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });
});

describe('ModelStore: training.yml written after the model is saved (#27)', () => {
  const yamlOf = (m: LbphModel, ids: Record<string, number>) => Buffer.from(encodeLbphFile(m, ids));

  it('a stop after training.lbph, before training.yml: the new model loads, and training.yml is due', async () => {
    const store = new ModelStore(dir);
    await store.init();
    await store.saveLbph(model([0, 1]), { ada: 0, alan: 1 });
    const old = await fs.readFile(path.join(dir, TRAINING_FILE));
    await store.saveSource(model([0, 1, 2]), { ada: 0, alan: 1, grace: 2 }); // then a kill -9
    const loaded = (await new ModelStore(dir).loadLbph())!;
    expect(loaded.labelIds).toEqual({ ada: 0, alan: 1, grace: 2 });
    expect(loaded.model.histograms).toEqual(model([0, 1, 2]).histograms);
    expect(loaded.files.lbph).toBeNull(); // not the old training.yml
    expect(loaded.source).not.toBeNull();
    expect((await fs.readFile(path.join(dir, TRAINING_FILE))).equals(old)).toBe(true);
    // Written again from it: OpenCV's bytes of the new model, and a restart then reads it as current.
    const file = await store.writeYaml(loaded.model, loaded.labelIds, loaded.source!);
    const want = yamlOf(model([0, 1, 2]), { ada: 0, alan: 1, grace: 2 });
    expect(Buffer.from(file.bytesSync()).equals(want)).toBe(true);
    expect((await fs.readFile(path.join(dir, TRAINING_FILE))).equals(want)).toBe(true);
    const again = (await new ModelStore(dir).loadLbph())!;
    expect(again.files.lbph?.sha256).toBe(createHash('sha256').update(want).digest('hex'));
    expect(again.source).toEqual(loaded.source);
  });

  it('a torn training.lbph is refused, not loaded', async () => {
    const store = new ModelStore(dir);
    await store.init();
    await store.saveLbph(model([0, 1]), { ada: 0, alan: 1 });
    const file = path.join(dir, LBPH_SOURCE_FILE);
    const bytes = await fs.readFile(file);
    bytes[bytes.length - 100] ^= 1;
    await fs.writeFile(file, bytes);
    await expect(store.loadLbph()).rejects.toThrow(/checksum/);
  });

  it('keeps the histograms sparse, bit for bit: a real model in under a fifth of the dense bytes', async () => {
    const store = new ModelStore(dir);
    await store.init();
    const crops: LbphModel = {
      ...LBPH_DEFAULTS,
      histograms: [1, 2, 3].map((s) => lbpHistogram(noiseCrop(s))),
      labels: Int32Array.from([0, 0, 1]),
    };
    await store.saveSource(crops, { ada: 0, alan: 1 });
    const size = (await fs.stat(path.join(dir, LBPH_SOURCE_FILE))).size;
    expect(size).toBeLessThan((3 * 16384 * 4) / 5);
    const loaded = (await new ModelStore(dir).loadLbph())!;
    const bits = (h: Float32Array) => Buffer.from(h.buffer, h.byteOffset, h.byteLength);
    expect(loaded.model.histograms.map(bits)).toEqual(crops.histograms.map(bits));
    const bytes = await fs.readFile(path.join(dir, LBPH_SOURCE_FILE));
    // A damaged length before the first histogram: refused before a buffer that size is made.
    const json = bytes.readUInt32LE(8);
    const first = 12 + json + ((4 - ((12 + json) % 4)) % 4) + 3 * 4;
    const damaged = Buffer.from(bytes);
    damaged.writeUInt32LE(0xfffffff0, first);
    await fs.writeFile(path.join(dir, LBPH_SOURCE_FILE), damaged);
    await expect(new ModelStore(dir).loadLbph()).rejects.toThrow(/histogram 0: 4294967280 bytes do not fit/);
    // Torn inside a histogram's sparse bytes: refused by name, not loaded half.
    await fs.writeFile(path.join(dir, LBPH_SOURCE_FILE), bytes.subarray(0, bytes.length - 5000));
    await expect(new ModelStore(dir).loadLbph()).rejects.toThrow(
      /training\.lbph: (shorter than its header says|length does not match|histogram)/,
    );
  });

  it('loads a training.lbph of the dense first format, as versions before the sparse one wrote it', async () => {
    // Written by commit b079f62's saveSource from the histograms of noiseCrop(1) and noiseCrop(2), ada and alan.
    await fs.copyFile(new URL('../../test/fixtures/models/training-format1.lbph', import.meta.url), path.join(dir, LBPH_SOURCE_FILE));
    const loaded = (await new ModelStore(dir).loadLbph())!;
    expect(loaded.labelIds).toEqual({ ada: 0, alan: 1 });
    expect(Array.from(loaded.model.labels)).toEqual([0, 1]);
    const bits = (h: Float32Array) => Buffer.from(h.buffer, h.byteOffset, h.byteLength);
    expect(loaded.model.histograms.map(bits)).toEqual([1, 2].map((s) => bits(lbpHistogram(noiseCrop(s)))));
    expect(loaded.files.lbph).toBeNull(); // training.yml is due, written from it
  });

  it('a training.yml put in place by hand after it was written is the model again', async () => {
    const store = new ModelStore(dir);
    await store.init();
    await store.saveLbph(model([0, 1]), { ada: 0, alan: 1 });
    await fs.writeFile(path.join(dir, `${TRAINING_FILE}.new`), yamlOf(model([0, 0, 1]), { bo: 0, cy: 1 }));
    await fs.rename(path.join(dir, `${TRAINING_FILE}.new`), path.join(dir, TRAINING_FILE));
    const loaded = (await store.loadLbph())!;
    expect(loaded.labelIds).toEqual({ bo: 0, cy: 1 });
    expect(loaded.source).toBeNull();
  });

  it('a write overtaken by a newer model, or cancelled, gives up and puts nothing in place', async () => {
    const store = new ModelStore(dir);
    await store.init();
    const first = await store.saveSource(model([0, 1]), { ada: 0, alan: 1 });
    await store.saveSource(model([0, 1, 2]), { ada: 0, alan: 1, grace: 2 }); // a newer training saved meanwhile
    await expect(store.writeYaml(model([0, 1]), { ada: 0, alan: 1 }, first.source)).rejects.toBeInstanceOf(YamlSuperseded);
    await expect(fs.access(path.join(dir, TRAINING_FILE))).rejects.toThrow();
    // Waiting to put its file in place (another replica replacing training.lbph holds the place lock), then cancelled.
    const current = await store.saveSource(model([0]), { ada: 0 });
    const other = await new FileLock(path.join(dir, PLACE_LOCK_FILE)).acquire();
    let cancelled = false;
    const writing = store.writeYaml(model([0]), { ada: 0 }, current.source, { cancelled: () => cancelled });
    await new Promise((resolve) => setTimeout(resolve, 300));
    cancelled = true;
    await expect(writing).rejects.toBeInstanceOf(YamlSuperseded);
    await other.release();
    await expect(fs.access(path.join(dir, TRAINING_FILE))).rejects.toThrow();
    expect((await fs.readdir(dir)).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
  });
});
