import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  cropVersion,
  decodeFeatures,
  encodeFeatures,
  FeatureStore,
  featureVersionsOf,
  featureWork,
  type ImageFeatures,
  imageHash,
} from './feature-store.js';
import { lbpHistogram } from '../../shared/lbph/lbph.js';
import { noiseCrop } from '../../test/helpers/noise-crop.js';
import { ImageStore } from './image-store.js';

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-features-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

function sample(seed = 1, over: Partial<ImageFeatures> = {}): ImageFeatures {
  const histogram = Float32Array.from({ length: 16384 }, (_, i) => ((i * seed) % 97) / 97);
  const descriptor = Float32Array.from({ length: 128 }, (_, i) => Math.sin(i + seed));
  return {
    image: imageHash(new Uint8Array([seed])),
    detector: 'haar:abc:1.1,5,30',
    face: { x: 10, y: 20, width: 100, height: 100 },
    crop: cropVersion('eye xml'),
    histogram,
    faceAlignment: 'eye-tilt-v1',
    descriptorModel: 'face-api-128|face-api 1',
    descriptor,
    ...over,
  };
}

describe('feature files', () => {
  it('round-trip every field bit for bit, also without face or descriptor', () => {
    for (const f of [
      sample(3),
      sample(4, { descriptorModel: null, descriptor: null }),
      sample(5, { face: null, crop: null, histogram: null }),
    ]) {
      const back = decodeFeatures(encodeFeatures(f));
      expect(back).toEqual(f);
    }
    const withoutLandmarks = sample(6, { descriptor: null });
    expect(decodeFeatures(encodeFeatures(withoutLandmarks))).toEqual(withoutLandmarks);
  });

  it('keeps an LBPH histogram sparse, bit for bit, in under a fifth of its dense 64 KB', () => {
    const f = sample(8, { histogram: lbpHistogram(noiseCrop(8)) });
    const bytes = encodeFeatures(f);
    const back = decodeFeatures(bytes);
    expect(back).toEqual(f);
    expect(Buffer.from(back.histogram!.buffer).equals(Buffer.from(f.histogram!.buffer))).toBe(true);
    expect(bytes.length).toBeLessThan((16384 * 4) / 5);
  });

  it('reads the dense first format (LKFEAT1) that earlier versions wrote, so an upgrade recomputes nothing', async () => {
    // Written by the encoder of commit b079f62 from the crop noiseCrop(12345) (a 66 KB file).
    const bytes = await fs.readFile(new URL('../../test/fixtures/features/lkfeat1.feat', import.meta.url));
    expect(bytes.subarray(0, 8).toString('latin1')).toBe('LKFEAT1\n');
    const f = decodeFeatures(bytes);
    expect(Buffer.from(f.histogram!.buffer).equals(Buffer.from(lbpHistogram(noiseCrop(12345)).buffer))).toBe(true);
    expect(f.descriptor).toEqual(Float32Array.from({ length: 128 }, (_, i) => Math.sin(i + 7)));
    expect(f).toMatchObject({ detector: 'haar:abc:1.1,5,30', crop: 'crop-v1', faceAlignment: 'eye-tilt-v1', face: { x: 10, y: 20 } });
    const torn = Uint8Array.from(bytes);
    torn[5000] ^= 1;
    expect(() => decodeFeatures(torn)).toThrow(/checksum/);
  });

  it('refuses a torn, corrupt or foreign file instead of trusting it', () => {
    const bytes = encodeFeatures(sample());
    expect(() => decodeFeatures(bytes.subarray(0, bytes.length - 100))).toThrow(/checksum/);
    expect(() => decodeFeatures(bytes.subarray(0, 10))).toThrow(/not a feature file/);
    const flipped = Uint8Array.from(bytes);
    flipped[2000] ^= 1;
    expect(() => decodeFeatures(flipped)).toThrow(/checksum/);
    expect(() => decodeFeatures(new TextEncoder().encode('%YAML:1.0\n'))).toThrow();
  });
});

describe('featureWork: a change recomputes what it invalidates', () => {
  const f = sample();
  const { image, detector } = f;
  const crop = f.crop!;
  const model = f.descriptorModel;
  it('reuses a record made with this run’s versions', () => {
    expect(featureWork(f, image, detector, crop, model)).toEqual({ detect: false, histogram: false, descriptor: false });
    // No descriptors this run (the recognizer is off): the stored one is left as it is.
    expect(featureWork(f, image, detector, crop, null)).toEqual({ detect: false, histogram: false, descriptor: false });
  });
  it('computes everything for a missing record, other bytes, or another detector', () => {
    const all = { detect: true, histogram: true, descriptor: true };
    expect(featureWork(null, image, detector, crop, model)).toEqual(all);
    expect(featureWork(f, imageHash(new Uint8Array([9])), detector, crop, model)).toEqual(all);
    expect(featureWork(f, image, 'haar:abc:1.1,4,30', crop, model)).toEqual(all);
    expect(featureWork(null, image, detector, crop, null)).toEqual({ ...all, descriptor: false });
  });
  it('keeps the box and recomputes only the histogram (crop) or only the descriptor (model)', () => {
    expect(featureWork(f, image, detector, cropVersion(), model)).toEqual({ detect: false, histogram: true, descriptor: false });
    expect(featureWork(f, image, detector, crop, 'faceres-1024|face-api 1')).toEqual({ detect: false, histogram: false, descriptor: true });
    // A record made while the recognizer was off gets its descriptor once it is on.
    expect(featureWork({ ...f, descriptorModel: null, descriptor: null }, image, detector, crop, model)).toEqual({
      detect: false,
      histogram: false,
      descriptor: true,
    });
  });
  it('reuses a no-face result as long as the detector is the same', () => {
    const none = sample(1, { face: null, crop: null, histogram: null, descriptorModel: null, descriptor: null });
    expect(featureWork(none, image, detector, cropVersion(), 'other')).toEqual({ detect: false, histogram: false, descriptor: false });
    expect(featureWork(none, image, 'remote:x', crop, null).detect).toBe(true);
  });
  it('versions follow the cascade text and parameters, the remote model and the eye cascade', () => {
    const base = {
      cascadeXml: '<cascade/>',
      cascade: { scaleFactor: 1.1, minNeighbors: 5, minSize: 30 },
      eyeCascadeXml: '<eye/>',
      remote: { url: 'http://127.0.0.1:8500', modelName: 'faces', confidenceThreshold: 0.5 },
    };
    const v = featureVersionsOf(base);
    expect(featureVersionsOf({ ...base }).detector).toEqual(v.detector);
    expect(featureVersionsOf({ ...base, cascadeXml: '<cascade />' }).detector.local).not.toBe(v.detector.local);
    expect(featureVersionsOf({ ...base, cascade: { ...base.cascade, minNeighbors: 4 } }).detector.local).not.toBe(v.detector.local);
    expect(featureVersionsOf({ ...base, remote: { ...base.remote, modelName: 'other' } }).detector.remote).not.toBe(v.detector.remote);
    expect(featureVersionsOf({ ...base, remote: { ...base.remote, modelName: 'other' } }).detector.local).toBe(v.detector.local);
    expect(featureVersionsOf({ ...base, eyeCascadeXml: undefined }).crop).not.toBe(v.crop);
  });
});

describe('FeatureStore', () => {
  it('reads back what it wrote; a corrupt file reads as none', async () => {
    const store = new FeatureStore(path.join(root, 'features'));
    expect(await store.read('ada', 'a.jpg')).toBeNull();
    await store.write('ada', 'a.jpg', sample(2));
    expect(await store.read('ada', 'a.jpg')).toEqual(sample(2));
    const file = path.join(root, 'features', 'ada', 'a.jpg.feat');
    const bytes = await fs.readFile(file);
    await fs.writeFile(file, bytes.subarray(0, bytes.length >> 1));
    expect(await store.read('ada', 'a.jpg')).toBeNull();
  });

  it('sweeps the features of images not in the snapshot, temporary files and empty folders', async () => {
    const store = new FeatureStore(path.join(root, 'features'));
    await store.write('ada', 'a.jpg', sample(1));
    await store.write('ada', 'b.jpg', sample(2));
    await store.write('alan', 'c.jpg', sample(3));
    await fs.writeFile(path.join(root, 'features', 'ada', '.tmp-123-a.jpg.feat'), 'torn');
    expect(await store.sweep(new Set(['ada/a.jpg']))).toBe(2);
    expect(await fs.readdir(path.join(root, 'features'))).toEqual(['ada']);
    expect(await fs.readdir(path.join(root, 'features', 'ada'))).toEqual(['a.jpg.feat']);
    expect(await new FeatureStore(path.join(root, 'none')).sweep(new Set())).toBe(0);
  });

  it('goes with its image and with its person (ImageStore), and is never kept for an image deleted meanwhile', async () => {
    const features = new FeatureStore(path.join(root, 'features'));
    const images = new ImageStore(path.join(root, 'images'), undefined, features);
    await images.init();
    const a = await images.save('ada', new Uint8Array([1]), 'jpeg');
    const b = await images.save('ada', new Uint8Array([2]), 'jpeg');
    const c = await images.save('alan', new Uint8Array([3]), 'jpeg');
    const refs = await images.all();
    for (const ref of refs) expect(await images.keepFeatures(ref, sample(1))).toBe(true);
    expect(await images.removeOne('ada', a)).toBe(1);
    expect(await features.read('ada', a)).toBeNull();
    expect(await features.read('ada', b)).not.toBeNull();
    expect(await images.remove('alan')).toBe(1);
    await expect(fs.stat(path.join(root, 'features', 'alan'))).rejects.toThrow();
    // A training that read `a` before its delete does not bring its features back.
    const gone = refs.find((r) => r.filename === a)!;
    expect(await images.keepFeatures(gone, sample(1))).toBe(false);
    expect(await features.read('ada', a)).toBeNull();
    expect(c).toBeTruthy();
    // The last image takes the person's features folder along.
    await images.removeOne('ada', b);
    await expect(fs.stat(path.join(root, 'features', 'ada'))).rejects.toThrow();
  });

  it('an ImageStore without a feature store keeps none', async () => {
    const images = new ImageStore(path.join(root, 'images'));
    await images.init();
    await images.save('ada', new Uint8Array([1]), 'jpeg');
    const [ref] = await images.all();
    expect(await images.keepFeatures(ref, sample(1))).toBe(false);
  });
});
