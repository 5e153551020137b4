import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../../test/helpers/databases.js';
import { createLogger } from '../logger.js';
import type { RgbImage } from '../../shared/image/types.js';
import type { Rect } from '../../shared/image/types.js';
import {
  COPY_MAX_SIDE,
  copyFace,
  cropRegion,
  type Describe,
  descriptorDistance,
  type FaceDecision,
  iou,
  SightingRecorder,
} from './sighting-recorder.js';
import { descriptorFrom, SightingStore } from './sighting-store.js';

/** A decoded image, as recognition holds it: flat grey RGB. */
const grey = (width: number, height: number): RgbImage => ({
  width,
  height,
  channels: 3,
  data: new Uint8Array(width * height * 3).fill(0xa0),
});
const IMAGE = grey(400, 300);

/** A 400 x 300 grey picture with a 60 x 60 square of each colour where its face is (the faces' boxes of `face`). */
function scene(...faces: { x: number; y: number; rgb: [number, number, number] }[]): RgbImage {
  const image = grey(400, 300);
  for (const { x, y, rgb } of faces) {
    for (let row = y; row < y + 60; row++) {
      for (let col = x; col < x + 60; col++) image.data.set(rgb, (row * 400 + col) * 3);
    }
  }
  return image;
}
const RED: [number, number, number] = [200, 30, 30];
const BLUE: [number, number, number] = [30, 30, 200];

/**
 * A stand-in for the embedding worker: a face's descriptor is the mean colour of its box (0..1), so faces of one
 * colour are one person wherever they are, and two colours two people.
 */
function colourDescriber(calls: { n: number }): Describe {
  return async (rgb, boxes: Rect[]) =>
    boxes.map((b) => {
      calls.n++;
      const sum = [0, 0, 0];
      let n = 0;
      for (let y = b.y + 2; y < b.y + b.height - 2; y++) {
        for (let x = b.x + 2; x < b.x + b.width - 2; x++) {
          for (let c = 0; c < 3; c++) sum[c] += rgb.data[(y * rgb.width + x) * 3 + c];
          n++;
        }
      }
      return Float32Array.from(sum, (v) => v / n / 255);
    });
}

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

  async function setup(
    settings: {
      enabled?: boolean;
      sources?: string[];
      intervalS?: number;
      describe?: Describe;
      describeForGrouping?: Describe;
      trackMax?: number;
    } = {},
  ) {
    const t = await open();
    opened.push(t);
    const store = new SightingStore({ db: t.db, dir: path.join(t.dataDir, 'sightings'), retentionDays: 30, max: 1000 });
    let now = Date.parse('2026-03-01T10:00:00.000Z');
    const recorder = new SightingRecorder({
      store,
      settings: { enabled: settings.enabled ?? true, sources: settings.sources ?? ['api', 'camera'], intervalS: settings.intervalS ?? 10 },
      describe: settings.describe ? () => settings.describe! : null,
      ...(settings.describeForGrouping ? { describeForGrouping: () => settings.describeForGrouping! } : {}),
      ...(settings.trackMax !== undefined ? { trackMax: () => settings.trackMax! } : {}),
      log: createLogger('silent'),
      now: () => now,
    });
    const frame = (faces: FaceDecision[], source: 'api' | 'camera' = 'camera', camera = 'door', image = IMAGE) =>
      recorder.recordImage({ source, client: null, camera, recognizer: 'lbph', model_version: null, image, faces });
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

  it('#36 1: keeps a grouping descriptor for each unknown face when the recognition descriptor is of another model', async () => {
    // The recognition model's descriptor (3 values here) and the grouping model's (128) come from two describers.
    const grouping = { n: 0 };
    const describeForGrouping: Describe = async (_rgb, boxes) =>
      boxes.map(() => {
        grouping.n++;
        return new Float32Array(128).fill(0.25);
      });
    const { store, frame, kept, recorder } = await setup({
      describe: colourDescriber({ n: 0 }),
      describeForGrouping,
      sources: ['api', 'browser'],
    });
    frame([face(10, 10), face(150, 10, 'ada')], 'api');
    const crop = await sharp({ create: { width: 80, height: 80, channels: 3, background: '#888' } })
      .jpeg()
      .toBuffer();
    recorder.recordCrops({
      source: 'browser',
      client: null,
      camera: null,
      recognizer: 'embedding',
      model_version: null,
      faces: [{ ...face(0, 0), crop }],
    });
    expect(await kept()).toBe(3);
    const rows = await store.db.query<{
      label: string | null;
      source: string;
      descriptor: Uint8Array | null;
      group_descriptor: Uint8Array | null;
    }>('SELECT label, source, descriptor, group_descriptor FROM sightings ORDER BY source, label NULLS FIRST');
    expect(
      rows.map((r) => [r.source, r.label, descriptorFrom(r.descriptor)?.length ?? null, descriptorFrom(r.group_descriptor)?.[0] ?? null]),
    ).toEqual([
      ['api', null, 3, 0.25],
      // A named face is never grouped: no second descriptor is computed for it.
      ['api', 'ada', 3, null],
      ['browser', null, 3, 0.25],
    ]);
    expect(grouping.n).toBe(2);
    // Where the recognition descriptor is the grouping one (no second describer), none is kept.
    const same = await setup({ describe: colourDescriber({ n: 0 }) });
    same.frame([face(10, 10)], 'api');
    expect(await same.kept()).toBe(1);
    const [row] = await same.store.db.query<{ group_descriptor: Uint8Array | null }>('SELECT group_descriptor FROM sightings');
    expect(row.group_descriptor).toBeNull();
  });

  it('#36 1: describes for grouping, from their crops, the unknown faces kept before grouping descriptors existed', async () => {
    // Kept by a server without grouping descriptors: its own (3-value) descriptors only; one of them in a group.
    const { store, frame, kept } = await setup({ describe: colourDescriber({ n: 0 }), sources: ['api'] });
    frame(
      [face(10, 10), face(150, 10, 'ada'), face(300, 200)],
      'api',
      'door',
      scene({ x: 10, y: 10, rgb: RED }, { x: 300, y: 200, rgb: BLUE }),
    );
    expect(await kept()).toBe(3);
    await store.db.query("UPDATE sightings SET group_id = 'g-old' WHERE label IS NULL");
    // The server after the change: a grouping describer (here the crop's mean colour, spread over 128 values).
    const calls = { n: 0 };
    const colour = colourDescriber(calls);
    const recorder = new SightingRecorder({
      store,
      settings: { enabled: true, sources: ['api'], intervalS: 10 },
      describe: () => colourDescriber({ n: 0 }),
      describeForGrouping: () => async (rgb, boxes) =>
        (await colour(rgb, boxes)).map((d) => (d ? Float32Array.from({ length: 128 }, (_, i) => d[i % 3]) : null)),
      log: createLogger('silent'),
    });
    expect(await recorder.backfillGrouping()).toBe(2);
    const rows = await store.db.query<{ label: string | null; group_id: string | null; group_descriptor: Uint8Array | null }>(
      'SELECT label, group_id, group_descriptor FROM sightings ORDER BY label NULLS FIRST, box',
    );
    const described = rows.map((r) => [r.label, r.group_id, descriptorFrom(r.group_descriptor)?.length ?? null]);
    // Both unknown faces: 128 values each, out of their old group (the next grouping pass places them); Ada untouched.
    expect(described).toEqual([
      [null, null, 128],
      [null, null, 128],
      ['ada', null, null],
    ]);
    // The two faces' colours came from their crops: red and blue, told apart.
    const [a, b] = rows.slice(0, 2).map((r) => descriptorFrom(r.group_descriptor)!);
    expect(new Set([Math.round(a[0] * 10), Math.round(b[0] * 10)]).size).toBe(2);
    expect(calls.n).toBe(2);
    // Nothing left: a later call describes nothing.
    expect(await recorder.backfillGrouping()).toBe(0);
    expect(calls.n).toBe(2);
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

describe.each(DATABASES.slice(0, 1))('camera face tracks by descriptor (store on %s)', (_name, open) => {
  const opened: TestDatabase[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.dispose()));
  });

  /** A recorder of camera frames whose faces are described by colour (colourDescriber), or not at all. */
  async function setup(describe: Describe | null, intervalS = 10) {
    const t = await open();
    opened.push(t);
    const store = new SightingStore({ db: t.db, dir: path.join(t.dataDir, 'sightings'), retentionDays: 30, max: 1000 });
    let now = Date.parse('2026-03-01T10:00:00.000Z');
    const recorder = new SightingRecorder({
      store,
      settings: { enabled: true, sources: ['camera'], intervalS },
      describe: describe ? () => describe : null,
      // Colours as descriptors: RED and BLUE are about 0.93 apart, one colour seen anywhere about 0.
      trackMax: () => 0.1,
      log: createLogger('silent'),
      now: () => now,
    });
    /**
     * One frame: each face a coloured square at (x, y), unknown unless given a label. `frameNow` hands it over and
     * returns; `frame` also waits until it is decided (a camera whose frames come slower than they are described).
     */
    const frameNow = (
      ...faces: { x: number; y: number; rgb: [number, number, number]; label?: string; descriptor?: Float32Array | null }[]
    ) =>
      recorder.recordImage({
        source: 'camera',
        client: null,
        camera: 'door',
        recognizer: 'embedding',
        model_version: null,
        image: scene(...faces),
        // `descriptor`: what the recognition computed (the embedding recognizer), passed on with the face.
        faces: faces.map((f) => ({
          ...face(f.x, f.y, f.label ?? null),
          ...(f.descriptor !== undefined ? { descriptor: f.descriptor } : {}),
        })),
      });
    const frame = async (...faces: Parameters<typeof frameNow>) => {
      frameNow(...faces);
      await recorder.idle();
    };
    const kept = async () => {
      await recorder.idle();
      return store.count();
    };
    return { store, recorder, frame, frameNow, kept, tick: (s: number) => (now += s * 1000) };
  }

  it('keeps one sighting per interval of a face that moves farther between frames than the overlap gate', async () => {
    const calls = { n: 0 };
    const { frame, kept, tick } = await setup(colourDescriber(calls));
    await frame({ x: 10, y: 10, rgb: RED });
    expect(await kept()).toBe(1);
    // Across the picture within a second or two (no overlap at all with where it was): the same track.
    for (const [x, y] of [
      [300, 200],
      [150, 10],
      [10, 220],
    ]) {
      tick(2);
      await frame({ x, y, rgb: RED });
      expect(await kept()).toBe(1);
    }
    // The interval since its sighting is over: one more, wherever it is now.
    tick(5);
    await frame({ x: 320, y: 20, rgb: RED });
    expect(await kept()).toBe(2);
    // Each face of each frame was described once, for the tracks and the sighting alike.
    expect(calls.n).toBe(5);

    // Without descriptors the same moves are new tracks each time (the overlap gate): one sighting per frame.
    const plain = await setup(null);
    await plain.frame({ x: 10, y: 10, rgb: RED });
    for (const [x, y] of [
      [300, 200],
      [150, 10],
    ]) {
      plain.tick(2);
      await plain.frame({ x, y, rgb: RED });
    }
    expect(await plain.kept()).toBe(3);
  });

  it('makes two different strangers at the same place two tracks, and follows each where they go', async () => {
    const { store, frame, kept, tick } = await setup(colourDescriber({ n: 0 }));
    await frame({ x: 100, y: 100, rgb: RED });
    tick(1);
    // Someone else where the first stranger stood a second ago: a new track, kept at once.
    await frame({ x: 100, y: 100, rgb: BLUE });
    expect(await kept()).toBe(2);
    tick(1);
    // Both together, having changed places, then the first one alone back at the start: the same two tracks.
    await frame({ x: 100, y: 100, rgb: RED }, { x: 250, y: 150, rgb: BLUE });
    tick(1);
    await frame({ x: 250, y: 150, rgb: RED }, { x: 100, y: 100, rgb: BLUE });
    tick(1);
    await frame({ x: 100, y: 100, rgb: RED });
    expect(await kept()).toBe(2);
    // Each sighting keeps the descriptor it was tracked with (the Faces page groups by it): one red, one blue.
    const described = await store.unknownWithDescriptors();
    expect(described.map((s) => Math.round((s.descriptor?.[0] ?? 0) * 255))).toEqual([200, 30]);
    // Without descriptors the second stranger continued the first one's track (same box): one sighting.
    const plain = await setup(null);
    await plain.frame({ x: 100, y: 100, rgb: RED });
    plain.tick(1);
    await plain.frame({ x: 100, y: 100, rgb: BLUE });
    expect(await plain.kept()).toBe(1);
  });

  it('tracks named faces by name and descriptor: a stranger given the same name beside her is a track of their own', async () => {
    const { frame, kept, tick } = await setup(colourDescriber({ n: 0 }));
    await frame({ x: 10, y: 10, rgb: RED, label: 'ada' }, { x: 200, y: 100, rgb: BLUE, label: 'ada' });
    expect(await kept()).toBe(2);
    tick(2);
    await frame({ x: 300, y: 200, rgb: RED, label: 'ada' }, { x: 20, y: 20, rgb: BLUE, label: 'ada' });
    expect(await kept()).toBe(2);
    // The same face decided unknown is a track of that decision (its sightings say what was decided).
    await frame({ x: 300, y: 200, rgb: RED });
    expect(await kept()).toBe(3);
  });

  it('falls back to the overlap for a face the nets cannot describe', async () => {
    const colour = colourDescriber({ n: 0 });
    // The first frame is described, the next ones not (no landmarks found, say).
    let describable = true;
    const { frame, kept, tick } = await setup(async (rgb, boxes) => (describable ? colour(rgb, boxes) : boxes.map(() => null)));
    await frame({ x: 100, y: 100, rgb: RED });
    describable = false;
    tick(1);
    await frame({ x: 110, y: 105, rgb: RED });
    expect(await kept()).toBe(1);
    tick(1);
    await frame({ x: 300, y: 200, rgb: RED });
    expect(await kept()).toBe(2);
  });

  it('describes at most one waiting frame a camera: newer frames replace it while the worker is busy', async () => {
    const colour = colourDescriber({ n: 0 });
    const described: number[] = [];
    let release: () => void = () => undefined;
    let busy: Promise<void> = new Promise((r) => (release = r));
    const { frameNow, kept, tick } = await setup(async (rgb, boxes) => {
      described.push(boxes.length);
      await busy;
      return colour(rgb, boxes);
    });
    frameNow({ x: 10, y: 10, rgb: RED });
    await new Promise((r) => setTimeout(r, 20));
    expect(described).toEqual([1]);
    // While the first frame is being described, three more come: only the newest waits, then is described.
    for (const x of [60, 120, 180]) {
      tick(1);
      frameNow({ x, y: 10, rgb: RED }, { x, y: 200, rgb: BLUE });
    }
    await new Promise((r) => setTimeout(r, 20));
    expect(described).toEqual([1]);
    busy = Promise.resolve();
    release();
    expect(await kept()).toBe(2);
    // Frame 1 (red), then the last frame's two faces: red continued its track, blue is new.
    expect(described).toEqual([1, 1, 1]);
  });
});

describe.each(DATABASES.slice(0, 1))('descriptors that came with the recognition (store on %s)', (_name, open) => {
  const opened: TestDatabase[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.dispose()));
  });
  /** The colour describer's descriptor of a square of `rgb` (what the embedding recognizer computed, here). */
  const descriptorOf = (rgb: [number, number, number]) => Float32Array.from(rgb, (v) => v / 255);

  async function setup(describe: Describe) {
    const t = await open();
    opened.push(t);
    const store = new SightingStore({ db: t.db, dir: path.join(t.dataDir, 'sightings'), retentionDays: 30, max: 1000 });
    let now = Date.parse('2026-03-01T10:00:00.000Z');
    const recorder = new SightingRecorder({
      store,
      settings: { enabled: true, sources: ['camera', 'api'], intervalS: 10 },
      describe: () => describe,
      trackMax: () => 0.1,
      log: createLogger('silent'),
      now: () => now,
    });
    const frameNow = (
      source: 'camera' | 'api',
      ...faces: { x: number; y: number; rgb: [number, number, number]; descriptor?: Float32Array | null }[]
    ) =>
      recorder.recordImage({
        source,
        client: null,
        camera: 'door',
        recognizer: 'embedding',
        model_version: null,
        image: scene(...faces),
        faces: faces.map((f) => ({ ...face(f.x, f.y), ...(f.descriptor !== undefined ? { descriptor: f.descriptor } : {}) })),
      });
    const kept = async () => {
      await recorder.idle();
      return store.count();
    };
    return { store, recorder, frameNow, kept, tick: (s: number) => (now += s * 1000) };
  }

  it('describes nothing again: tracks and sightings use the descriptors the recognition computed', async () => {
    const calls = { n: 0 };
    const { store, frameNow, kept, tick } = await setup(colourDescriber(calls));
    frameNow('camera', { x: 10, y: 10, rgb: RED, descriptor: descriptorOf(RED) });
    expect(await kept()).toBe(1);
    // Across the picture: her track by her descriptor; someone else where she stood: a new one.
    tick(2);
    frameNow('camera', { x: 300, y: 200, rgb: RED, descriptor: descriptorOf(RED) });
    tick(1);
    frameNow('camera', { x: 300, y: 200, rgb: BLUE, descriptor: descriptorOf(BLUE) });
    expect(await kept()).toBe(2);
    // A face the recognition's nets could not describe (null) is not described again either: tracked by overlap.
    tick(1);
    frameNow('camera', { x: 305, y: 205, rgb: BLUE, descriptor: null });
    expect(await kept()).toBe(2);
    // Other sources keep every face, with the recognition's descriptor.
    frameNow('api', { x: 100, y: 100, rgb: BLUE, descriptor: descriptorOf(BLUE) });
    expect(await kept()).toBe(3);
    expect(calls.n).toBe(0);
    const described = await store.unknownWithDescriptors();
    expect(described.map((s) => Math.round((s.descriptor?.[0] ?? 0) * 255))).toEqual([200, 30, 30]);
  });

  it("decides a described frame after its camera's earlier frame that is still being described", async () => {
    const calls = { n: 0 };
    const colour = colourDescriber(calls);
    let release: () => void = () => undefined;
    const busy = new Promise<void>((r) => (release = r));
    const { frameNow, kept, tick } = await setup(async (rgb, boxes) => {
      await busy;
      return colour(rgb, boxes);
    });
    // Frame 1 came without descriptors (the LBPH recognizer answered it): described here, slowly.
    frameNow('camera', { x: 10, y: 10, rgb: RED });
    await new Promise((r) => setTimeout(r, 20));
    // Frame 2, an interval later, came described. In order, frame 1 starts the track and frame 2 is the next
    // sighting of it (2); decided first, frame 2 would start it and frame 1 would fall within its interval (1).
    tick(11);
    frameNow('camera', { x: 300, y: 200, rgb: RED, descriptor: descriptorOf(RED) });
    release();
    expect(await kept()).toBe(2);
    expect(calls.n).toBe(1);
  });
});

it('measures the distance between descriptors of one model, and none between two models', () => {
  expect(descriptorDistance(Float32Array.of(0, 0), Float32Array.of(3, 4))).toBe(5);
  expect(descriptorDistance(Float32Array.of(0, 0), Float32Array.of(0, 0, 0))).toBe(Number.POSITIVE_INFINITY);
});
