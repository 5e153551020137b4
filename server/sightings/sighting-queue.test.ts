/**
 * #36 4: the sighting queue runs below recognition's priority: its work waits while recognitions run, a camera's
 * frames are coalesced while they wait, the backlog is bounded (the oldest dropped, counted), and shutdown stores
 * or counts what is pending. Behaviour only: no timing is asserted.
 */
import { describe, expect, it } from 'vitest';
import type { RgbImage } from '../../shared/image/types.js';
import { createLogger } from '../logger.js';
import { RecognitionActivity } from './recognition-activity.js';
import { type Describe, type FaceDecision, SightingRecorder } from './sighting-recorder.js';
import type { NewSighting, SightingStore } from './sighting-store.js';

const IMAGE: RgbImage = { width: 400, height: 300, channels: 3, data: new Uint8Array(400 * 300 * 3).fill(0xa0) };

const face = (x: number, label: string | null = null): FaceDecision => ({
  box: { x, y: 10, w: 60, h: 60 },
  label,
  candidate: null,
  distance: null,
  confidence: 0,
  certainty: null,
  reason: label ? null : 'no_match',
});

/** A store that only remembers what it was given. */
function memoryStore(): { store: SightingStore; rows: NewSighting[] } {
  const rows: NewSighting[] = [];
  const store = {
    add: async (row: NewSighting) => {
      rows.push(row);
    },
    purge: async () => 0,
    db: { hasData: async () => false },
  } as unknown as SightingStore;
  return { store, rows };
}

/** A recognition held in flight until `end()`. */
function recognitionRunning(activity: RecognitionActivity): { end: () => Promise<void> } {
  let release: () => void = () => undefined;
  const done = activity.during(() => new Promise<void>((r) => (release = r)));
  return {
    end: async () => {
      release();
      await done;
    },
  };
}

const tick = () => new Promise((r) => setTimeout(r, 30));

function setup(opts: { describe?: Describe; queueMax?: number } = {}) {
  const { store, rows } = memoryStore();
  const activity = new RecognitionActivity({ quietMs: 5 });
  const recorder = new SightingRecorder({
    store,
    settings: { enabled: true, sources: ['api', 'camera'], intervalS: 10 },
    describe: opts.describe ? () => opts.describe! : null,
    trackMax: () => 0.1,
    activity,
    log: createLogger('silent'),
    ...(opts.queueMax !== undefined ? { queueMax: opts.queueMax } : {}),
  });
  const record = (source: 'api' | 'camera', faces: FaceDecision[], camera = 'door') =>
    recorder.recordImage({ source, client: null, camera, recognizer: 'lbph', model_version: null, image: IMAGE, faces });
  return { recorder, rows, activity, record };
}

describe('the sighting queue yields to recognition', () => {
  it('stores nothing (no JPEG, descriptor nor row) while a recognition runs, and everything once it is over', async () => {
    let described = 0;
    const { recorder, rows, activity, record } = setup({
      describe: async (_rgb, boxes) => {
        described += boxes.length;
        return boxes.map(() => Float32Array.of(1, 0, 0));
      },
    });
    const running = recognitionRunning(activity);
    record('api', [face(10), face(200)]);
    await tick();
    expect(rows).toHaveLength(0);
    expect(described).toBe(0);
    expect(recorder.stats()).toMatchObject({ queued: 1, stored: 0, dropped: 0 });
    await running.end();
    await recorder.idle();
    expect(rows).toHaveLength(2);
    expect(described).toBe(2);
    expect(recorder.stats()).toMatchObject({ queued: 0, stored: 2, dropped: 0 });
  });

  it("coalesces a camera's frames while they wait: the newest one is described and kept, once per track", async () => {
    const described: number[] = [];
    const { recorder, rows, activity, record } = setup({
      describe: async (_rgb, boxes) => {
        described.push(...boxes.map((b) => b.x));
        return boxes.map(() => Float32Array.of(1, 0, 0));
      },
    });
    const running = recognitionRunning(activity);
    // Ten frames of one face that moves, and one frame of another camera: two jobs wait, not eleven.
    for (let x = 0; x < 10; x++) record('camera', [face(10 + x * 5)]);
    record('camera', [face(100)], 'hall');
    await tick();
    expect(recorder.stats()).toMatchObject({ queued: 2, dropped: 0 });
    await running.end();
    await recorder.idle();
    expect(described).toHaveLength(2);
    expect(rows.map((r) => [r.camera, r.box.x])).toEqual([
      ['door', 55],
      ['hall', 100],
    ]);
  });

  it('bounds the backlog: the oldest jobs are dropped and counted, the newest stored', async () => {
    const { recorder, rows, activity, record } = setup({ queueMax: 3 });
    const running = recognitionRunning(activity);
    for (const label of ['a', 'b', 'c', 'd', 'e']) record('api', [face(10, label)]);
    expect(recorder.stats()).toMatchObject({ queued: 3, dropped: 2, stored: 0 });
    await running.end();
    await recorder.idle();
    expect(rows.map((r) => r.label)).toEqual(['c', 'd', 'e']);
    expect(recorder.stats()).toEqual({ queued: 0, dropped: 2, stored: 3, failed: 0 });
  });

  it('stores what is pending at shutdown without waiting for recognitions to end', async () => {
    const { recorder, rows, activity, record } = setup();
    recognitionRunning(activity); // never ends
    record('api', [face(10, 'a')]);
    record('api', [face(10, 'b')]);
    await tick();
    expect(rows).toHaveLength(0);
    await recorder.stop();
    expect(rows.map((r) => r.label)).toEqual(['a', 'b']);
    expect(recorder.stats()).toMatchObject({ queued: 0, dropped: 0, stored: 2 });
  });
});

describe('the sighting queue is not starved', () => {
  it('starts a job that waited long enough in a gap between recognitions that never pause', async () => {
    const { store, rows } = memoryStore();
    // Never quiet for 10 s: only the starving rule lets a job through, in a gap.
    const activity = new RecognitionActivity({ quietMs: 10_000 });
    const recorder = new SightingRecorder({
      store,
      settings: { enabled: true, sources: ['api'], intervalS: 10 },
      describe: null,
      activity,
      maxWaitMs: 50,
      log: createLogger('silent'),
    });
    const running = recognitionRunning(activity);
    recorder.recordImage({
      source: 'api',
      client: null,
      camera: null,
      recognizer: 'lbph',
      model_version: null,
      image: IMAGE,
      faces: [face(10, 'a')],
    });
    await tick();
    expect(rows).toHaveLength(0);
    await running.end();
    // Long before the 10 s of quiet: the job waited more than 50 ms and no recognition runs now.
    for (let i = 0; i < 100 && rows.length === 0; i++) await tick();
    expect(rows.map((r) => r.label)).toEqual(['a']);
  });
});
