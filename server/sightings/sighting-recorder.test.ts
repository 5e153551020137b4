import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../../test/helpers/databases.js';
import { createLogger } from '../logger.js';
import type { RgbImage } from '../../shared/image/types.js';
import { COPY_MAX_SIDE, copyFace, cropRegion, type FaceDecision, iou, SightingRecorder } from './sighting-recorder.js';
import { SightingStore } from './sighting-store.js';

/** A decoded image, as recognition holds it: flat grey RGB. */
const grey = (width: number, height: number): RgbImage => ({
  width,
  height,
  channels: 3,
  data: new Uint8Array(width * height * 3).fill(0xa0),
});
const IMAGE = grey(400, 300);

const face = (x: number, y: number, label: string | null = null): FaceDecision => ({
  box: { x, y, w: 60, h: 60 },
  label,
  candidate: null,
  distance: null,
  confidence: 0,
  certainty: null,
  reason: label ? null : 'no_match',
});

describe('face tracks and crops', () => {
  it('measures overlap and widens the face box by 40% each side within the image', () => {
    expect(iou({ x: 0, y: 0, w: 10, h: 10 }, { x: 0, y: 0, w: 10, h: 10 })).toBe(1);
    expect(iou({ x: 0, y: 0, w: 10, h: 10 }, { x: 20, y: 0, w: 10, h: 10 })).toBe(0);
    expect(iou({ x: 0, y: 0, w: 10, h: 10 }, { x: 5, y: 0, w: 10, h: 10 })).toBeCloseTo(1 / 3);
    expect(cropRegion({ x: 100, y: 100, w: 50, h: 50 }, 400, 300)).toEqual({ left: 80, top: 80, width: 90, height: 90 });
    expect(cropRegion({ x: 0, y: 260, w: 50, h: 50 }, 400, 300)).toEqual({ left: 0, top: 240, width: 70, height: 60 });
    expect(cropRegion({ x: 500, y: 0, w: 50, h: 50 }, 400, 300)).toBeNull();
  });

  it('copies a crop region out of a decoded image: small whatever the face, the face box mapped into it', () => {
    // A large face in a large image: the copy is at most COPY_MAX_SIDE a side, the stored JPEG at most 160 px.
    const image = grey(2000, 1500);
    image.data.fill(0x20, 0, 2000 * 3 * 750); // the upper half darker
    const big = copyFace(image, { x: 500, y: 500, w: 1000, h: 1000 })!;
    expect([big.rgb.width, big.rgb.height]).toEqual([COPY_MAX_SIDE, 249]);
    expect(big.rgb.data.length).toBe(COPY_MAX_SIDE * 249 * 3);
    expect(big.jpeg).toEqual({ width: 160, height: 124 });
    const scale = 1800 / COPY_MAX_SIDE;
    expect(big.box.x).toBeCloseTo(400 / scale);
    expect(big.box.w).toBeCloseTo(1000 / scale);
    // The region's rows: 100..1499, dark above row 750, grey below.
    expect(big.rgb.data[0]).toBe(0x20);
    expect(big.rgb.data[(248 * COPY_MAX_SIDE + 5) * 3]).toBe(0xa0);
    // A small face is copied pixel for pixel; one outside the image is nothing.
    const small = copyFace(IMAGE, { x: 100, y: 100, w: 50, h: 50 })!;
    expect([small.rgb.width, small.rgb.height, small.box.x, small.box.w]).toEqual([90, 90, 20, 50]);
    expect(copyFace(IMAGE, { x: 500, y: 0, w: 50, h: 50 })).toBeNull();
  });
});

describe.each(DATABASES.slice(0, 1))('SightingRecorder (store on %s)', (_name, open) => {
  const opened: TestDatabase[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.dispose()));
  });

  async function setup(settings: { enabled?: boolean; sources?: string[]; intervalS?: number } = {}) {
    const t = await open();
    opened.push(t);
    const store = new SightingStore({ db: t.db, dir: path.join(t.dataDir, 'sightings'), retentionDays: 30, max: 1000 });
    let now = Date.parse('2026-03-01T10:00:00.000Z');
    const recorder = new SightingRecorder({
      store,
      settings: { enabled: settings.enabled ?? true, sources: settings.sources ?? ['api', 'camera'], intervalS: settings.intervalS ?? 10 },
      describe: null,
      log: createLogger('silent'),
      now: () => now,
    });
    const frame = (faces: FaceDecision[], source: 'api' | 'camera' = 'camera', camera = 'door') =>
      recorder.recordImage({ source, client: null, camera, recognizer: 'lbph', model_version: null, image: IMAGE, faces });
    const kept = async () => {
      await recorder.idle();
      return store.count();
    };
    return { store, recorder, frame, kept, tick: (s: number) => (now += s * 1000) };
  }

  it('keeps one sighting per camera face track per interval: unknown faces by overlap, named ones by name', async () => {
    const { frame, kept, tick } = await setup();
    frame([face(10, 10), face(300, 200), face(150, 10, 'ada')]);
    expect(await kept()).toBe(3);
    tick(3);
    // The same faces a little further on, Ada elsewhere in the picture: the same tracks.
    frame([face(20, 15), face(290, 195), face(30, 200, 'ada')]);
    expect(await kept()).toBe(3);
    // A new unknown face where none was, and another camera: new tracks.
    frame([face(160, 120)]);
    frame([face(20, 15)], 'camera', 'gate');
    expect(await kept()).toBe(5);
    tick(8);
    // Past the interval since each track's last sighting: one more each.
    frame([face(25, 15), face(290, 195), face(30, 200, 'ada')]);
    expect(await kept()).toBe(8);
    frame([face(25, 15), face(290, 195), face(30, 200, 'ada')]);
    expect(await kept()).toBe(8);
  });

  it('keeps every face from other sources, and every camera frame with an interval of 0', async () => {
    const { frame, kept } = await setup();
    frame([face(10, 10)], 'api');
    frame([face(10, 10)], 'api');
    expect(await kept()).toBe(2);
    const zero = await setup({ intervalS: 0 });
    zero.frame([face(10, 10)]);
    zero.frame([face(10, 10)]);
    expect(await zero.kept()).toBe(2);
  });

  it('keeps nothing when switched off or from a source left out, and never throws on a bad image', async () => {
    const off = await setup({ enabled: false });
    off.frame([face(10, 10)], 'api');
    expect(await off.kept()).toBe(0);
    const some = await setup({ sources: ['page'] });
    some.frame([face(10, 10)], 'api');
    expect(await some.kept()).toBe(0);
    const bad = await setup();
    expect(() =>
      bad.recorder.recordImage({
        source: 'api',
        client: null,
        camera: null,
        recognizer: 'lbph',
        model_version: null,
        image: { width: 400, height: 300, channels: 3, data: new Uint8Array([1, 2, 3]) },
        faces: [face(1, 1)],
      }),
    ).not.toThrow();
    expect(await bad.kept()).toBe(0);
  });

  it('crops each face as a JPEG of at most 160 px', async () => {
    const { store, frame, kept } = await setup();
    frame([{ ...face(50, 40), box: { x: 50, y: 40, w: 200, h: 200 } }], 'api');
    expect(await kept()).toBe(1);
    const [s] = (await store.list()).sightings;
    const meta = await sharp(Buffer.from((await store.crop(s.id))!)).metadata();
    expect(meta.format).toBe('jpeg');
    // 200 px widened by 80 px each side, cut to 330 x 300 by the image's edges, then at most 160 px.
    expect([meta.width, meta.height]).toEqual([160, 145]);
  });

  it('copies the crop while it is called: the image may be reused at once (it holds no reference to it)', async () => {
    const { store, recorder, kept } = await setup();
    const image = grey(400, 300);
    recorder.recordImage({
      source: 'api',
      client: null,
      camera: null,
      recognizer: 'lbph',
      model_version: null,
      image,
      faces: [face(50, 40)],
    });
    image.data.fill(0);
    expect(await kept()).toBe(1);
    const [s] = (await store.list()).sightings;
    const { data } = await sharp(Buffer.from((await store.crop(s.id))!))
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(Math.abs(data[0] - 0xa0)).toBeLessThan(8);
  });
});
