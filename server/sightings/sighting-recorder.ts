/**
 * Decides which faces a recognition keeps as sightings, and keeps them off the request path.
 *
 * - Nothing with SIGHTINGS_ENABLED=false, nothing from a source not in SIGHTINGS_SOURCES.
 * - `camera` (live frames): one sighting per face track per SIGHTINGS_INTERVAL_S. A track is one source + client +
 *   camera and one decided label (null for unknown faces). When the embedding worker runs, a face continues the
 *   track whose last descriptor is nearest, within `trackMax` (the embedding rule's limit): a face that moved far
 *   between frames is still the same track, and a second stranger where the first one stood is a new one. Without
 *   a descriptor, a named face continues its label's track and an unknown one the track whose last box it overlaps
 *   most (IoU >= 0.3). Each track takes at most one face of a frame. The decisions are made in the order frames are
 *   answered (at once without descriptors, in the queue with them), so concurrent frames never both keep one.
 * - Describing every face of every frame costs the embedding worker one descriptor a face: a camera has at most
 *   one frame waiting to be described, a newer frame replaces it (the newest is the one that counts for its
 *   tracks), so a busy worker makes the recorder skip frames instead of falling behind. The descriptors of the
 *   faces kept are the sightings' own (not computed twice). When the embedding recognizer named the faces, its
 *   descriptors come with them (same worker, same model): nothing is described again, and such a frame is tracked
 *   at once (after its camera's frames still being described, if any), only its kept faces copied.
 * - The crop is the face box widened by 40% each side, longest side at most 160 px, JPEG. Its pixels are copied from
 *   the recognition's own decoded image while the request still holds it (a small copy, at most 320 px a side, made
 *   at once: about 0.2 ms a face), so the recorder never decodes an image again and never holds any of the pixel
 *   budget: requests are never refused because a sighting is being kept. The JPEG, the descriptor (when the
 *   embedding worker runs) and the row are made after the answer was sent: a recognition never waits for a sighting
 *   and never fails because of one (errors are logged).
 * - #36 4: that work runs below recognition's priority. On 2 cores a descriptor (~50 ms) and a row (~20 ms in the
 *   embedded database's thread) computed beside recognitions made /api/recognize's p50 1.5x slower. Each step of a
 *   job waits until recognitions are quiet (RecognitionActivity: none running, none in the last 100 ms, no worker
 *   job waiting). The queue is bounded (QUEUE_MAX jobs, QUEUE_MAX_BYTES of copies): while recognitions keep the
 *   workers busy the oldest jobs are dropped and counted (stats(), GET /metrics), never held; still one job a
 *   MAX_WAIT_MS starts in a gap between two recognitions, so a camera that never pauses keeps its sightings (at a
 *   cost of a few % of 2 cores). Camera frames are
 *   coalesced per camera while they wait (the newest frame replaces the waiting one; its tracks keep one sighting
 *   per interval). At shutdown the queue runs at once for at most DRAIN_MS, the rest is dropped and counted.
 * - The purge (retention days and count cap) runs at start and every hour.
 */
import sharp from 'sharp';
import type { SightingSource } from '../../shared/api/sightings.js';
import type { Rect, RgbImage } from '../../shared/image/types.js';
import { decodeImage } from '../imaging/decode.js';
import type { Logger } from '../logger.js';
import { RecognitionActivity } from './recognition-activity.js';
import { GROUPING_DESCRIPTOR_BYTES, type NewSighting, type SightingBox, type SightingStore } from './sighting-store.js';
import { type FacePixels, copyFace, CROP_MARGIN, CROP_MAX_SIDE, toJpeg } from './sighting-crop.js';
import { type FaceDecision, matchTrack, type Track, type Tracked } from './sighting-tracks.js';

export { COPY_MAX_SIDE, CROP_MARGIN, CROP_MAX_SIDE, copyFace, cropRegion, type FacePixels } from './sighting-crop.js';
export { decisionOf, descriptorDistance, type FaceDecision, iou, TRACK_IOU } from './sighting-tracks.js';

/** Jobs waiting at most, and their images' bytes at most; past either the oldest are dropped (counted) rather than held in memory. */
export const QUEUE_MAX = 256;
const QUEUE_MAX_BYTES = 64 * 1024 * 1024;
/** While recognitions never pause, one job still starts per this long, in a gap between two of them (no starving). */
export const MAX_WAIT_MS = 1_000;
/** At shutdown the queue runs at once for at most this long; what is left is dropped (counted and logged). */
const DRAIN_MS = 5_000;
const PURGE_INTERVAL_MS = 3_600_000;

/** Descriptors of the given faces of an image, in order (null where none could be made). */
export type Describe = (rgb: RgbImage, boxes: Rect[]) => Promise<(Float32Array | null | undefined)[]>;

interface Common {
  source: SightingSource;
  client: string | null;
  camera: string | null;
  recognizer: string;
  model_version: string | null;
  /** Default now. */
  seen_at?: Date;
}

/**
 * A recognition on the server: its decoded image (upright RGB, as recognition saw it; only read while
 * `recordImage` runs) and the faces it found, each with its descriptor when the recognition computed one with the
 * model `describe` uses (null: the nets could not describe it; absent: described here when needed).
 */
export interface ImageRecognition extends Common {
  image: RgbImage;
  faces: Tracked[];
}

/** Faces whose crop pixels were copied while their image was decoded (POST /api/verify's first frame). */
export interface CopiedRecognition extends Common {
  /** `descriptor`: already computed (null: none could be); absent: described when stored. */
  faces: (FaceDecision & { pixels: FacePixels; descriptor?: Float32Array | null })[];
}

/** Faces recognised elsewhere (a browser) that came with their own crops. */
export interface CroppedRecognition extends Common {
  faces: (FaceDecision & { crop: Uint8Array; id?: string })[];
}

export interface RecorderSettings {
  enabled: boolean;
  sources: readonly string[];
  intervalS: number;
}

export interface SightingRecorderOptions {
  store: SightingStore;
  settings: RecorderSettings;
  /** The embedding worker's descriptors, or null when it is switched off or did not load. */
  describe: (() => Describe | null) | null;
  /**
   * #36 1: the 128-d descriptors unknown faces are grouped by, when `describe` gives another model's (faceres-1024);
   * null when `describe`'s are those (or the worker is off). Absent: none.
   */
  describeForGrouping?: () => Describe | null;
  /**
   * The largest descriptor distance at which a camera face continues a track (the embedding rule's `max`, the
   * distance at which it would name someone). Absent: camera tracks are never matched by descriptor.
   */
  trackMax?: () => number;
  log: Logger;
  /** What recognitions run (RecognitionActivity.during): sighting work waits until it is quiet. Absent: one of its own. */
  activity?: RecognitionActivity;
  /** Jobs waiting at most (tests); default QUEUE_MAX. */
  queueMax?: number;
  /** Default MAX_WAIT_MS (tests). */
  maxWaitMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

/** The sighting queue, for GET /metrics and the sightings status. */
export interface SightingQueueStats {
  /** Jobs waiting (a job: one recognition's faces to keep, or one camera's newest frame to describe). */
  queued: number;
  /** Jobs dropped since the start, the oldest first, because the queue was full (or at shutdown). */
  dropped: number;
  /** Sightings stored since the start. */
  stored: number;
  /** Sightings that could not be stored (logged). */
  failed: number;
}

/** A job of the queue: `size.bytes` it holds (may change while it waits); `dropped` undoes its bookkeeping when dropped. */
interface QueuedJob {
  run: () => Promise<void>;
  size: { bytes: number };
  dropped?: () => void;
}

/** Most faces `backfillGrouping` describes in one run, and in one job of the queue. */
const BACKFILL_MAX = 1000;
const BACKFILL_BATCH = 8;
/** A crop is at most CROP_MAX_SIDE a side; a bound for decoding one (a browser's crop before it is re-encoded). */
const CROP_MAX_PIXELS = 4_000_000;

/** A stored crop decoded, and the face's box in it: the crop's middle, its box widened by CROP_MARGIN each side. */
async function cropFace(crop: Uint8Array): Promise<{ rgb: RgbImage; box: SightingBox }> {
  const { rgb } = await decodeImage(crop, { maxPixels: CROP_MAX_PIXELS });
  const share = 1 / (1 + 2 * CROP_MARGIN);
  const w = rgb.width * share;
  const h = rgb.height * share;
  return { rgb, box: { x: (rgb.width - w) / 2, y: (rgb.height - h) / 2, w, h } };
}

/** A camera frame waiting for its descriptors: its faces' copies (and their bytes, held until it is decided). */
interface WaitingFrame {
  r: CopiedRecognition;
  size: { bytes: number };
}

/** A camera's tracks: one source, caller and camera. */
const trackKey = (r: Common) => JSON.stringify([r.source, r.client, r.camera]);

const copiedBytes = (r: CopiedRecognition) => r.faces.reduce((n, f) => n + f.pixels.rgb.data.byteLength, 0);

export class SightingRecorder {
  private readonly tracks = new Map<string, Track[]>();
  /** Per camera (track key), the newest frame waiting in the queue for its descriptors. */
  private readonly waiting = new Map<string, WaitingFrame>();
  /** Per camera, its frames queued or being described: a frame that came described waits behind them (in order). */
  private readonly describing = new Map<string, number>();
  /** Jobs waiting, oldest first; `running` works through them one at a time, each once recognition is quiet. */
  private readonly jobs: QueuedJob[] = [];
  private running: Promise<void> | null = null;
  private pendingBytes = 0;
  private dropped = 0;
  private stored = 0;
  private failed = 0;
  /** Shutdown: the queue runs without waiting for quiet. */
  private draining = false;
  /** From this time (of the activity's clock) on, the job running may take any gap between recognitions (MAX_WAIT_MS). */
  private deadline = Number.POSITIVE_INFINITY;
  private lastStart = Number.NEGATIVE_INFINITY;
  readonly activity: RecognitionActivity;
  private timer: NodeJS.Timeout | null = null;
  private purging: Promise<void> | null = null;
  private readonly now: () => number;
  private stopped = false;
  private backfilling: Promise<number> | null = null;
  /** Faces the grouping net could not describe (no crop, or it failed): not tried again by this process. */
  private readonly backfillFailed = new Set<string>();

  constructor(private readonly opts: SightingRecorderOptions) {
    this.now = opts.now ?? Date.now;
    this.activity = opts.activity ?? new RecognitionActivity();
  }

  /** Runs a recognition: the sightings' work waits until recognitions are quiet (RecognitionActivity). */
  recognizing<T>(work: () => Promise<T> | T): Promise<T> {
    return this.activity.during(work);
  }

  stats(): SightingQueueStats {
    return { queued: this.jobs.length, dropped: this.dropped, stored: this.stored, failed: this.failed };
  }

  /** Whether a recognition from `source` keeps sightings at all. */
  keeps(source: SightingSource): boolean {
    return !this.stopped && this.opts.settings.enabled && this.opts.settings.sources.includes(source);
  }

  /**
   * A server recognition's faces: the crop pixels of those to keep are copied from `r.image` now (call it while
   * the image is still decoded: no reference to it is kept), and stored after this returns. Never throws.
   */
  recordImage(r: ImageRecognition): void {
    try {
      const { image, ...rest } = r;
      // Seen when recognised, not when stored after the answer.
      const common = { ...rest, seen_at: r.seen_at ?? new Date(this.now()) };
      const copy = (faces: Tracked[]) =>
        faces
          .map((face) => ({ ...face, pixels: copyFace(image, face.box) }))
          .filter((f): f is Tracked & { pixels: FacePixels } => f.pixels !== null);
      // A frame whose faces the recognition described is tracked at once, unless one of its camera's earlier frames
      // is still being described (decisions follow the order of the answers).
      const described = r.faces.every((f) => f.descriptor !== undefined) && !this.describing.get(trackKey(r));
      if (!described && this.tracksByDescriptor(r)) {
        // Which faces are kept is decided once they are described: every face is copied now.
        this.waitForDescriptors({ ...common, faces: copy(r.faces) });
        return;
      }
      const faces = this.select(common, r.faces);
      if (faces.length === 0) return;
      this.keepCopies({ ...common, faces: copy(faces) });
    } catch (err) {
      this.fail(err);
    }
  }

  /** Faces whose crop pixels were copied already (copyFace): those to keep are stored after this returns. Never throws. */
  recordCopies(r: CopiedRecognition): void {
    try {
      this.keepCopies({ ...r, faces: this.select(r, r.faces) });
    } catch (err) {
      this.fail(err);
    }
  }

  private keepCopies(r: CopiedRecognition): void {
    if (r.faces.length === 0) return;
    this.enqueue(() => this.storeCopies(r), { bytes: copiedBytes(r) });
  }

  /** Camera frames are tracked by descriptor when the embedding worker runs and a limit is known. */
  private tracksByDescriptor(r: Common & { faces: unknown[] }): boolean {
    return (
      r.source === 'camera' &&
      r.faces.length > 0 &&
      this.keeps(r.source) &&
      this.opts.settings.intervalS > 0 &&
      this.opts.trackMax !== undefined &&
      this.describer() !== null
    );
  }

  /**
   * A camera frame to describe, then track: queued, or in place of the camera's frame that still waits (the newer
   * one counts), so the embedding worker describes at most one frame a camera at a time for the sightings.
   */
  private waitForDescriptors(r: CopiedRecognition): void {
    const key = trackKey(r);
    const waiting = this.waiting.get(key);
    const bytes = copiedBytes(r);
    if (waiting) {
      this.pendingBytes += bytes - waiting.size.bytes;
      waiting.size.bytes = bytes;
      waiting.r = r;
      return;
    }
    const frame: WaitingFrame = { r, size: { bytes } };
    // Run or dropped: the camera's next frame waits in a job of its own.
    const done = () => {
      if (this.waiting.get(key) === frame) this.waiting.delete(key);
      const left = (this.describing.get(key) ?? 1) - 1;
      if (left > 0) this.describing.set(key, left);
      else this.describing.delete(key);
    };
    this.waiting.set(key, frame);
    this.describing.set(key, (this.describing.get(key) ?? 0) + 1);
    this.enqueue(
      async () => {
        // From now on a newer frame of this camera queues behind this one.
        if (this.waiting.get(key) === frame) this.waiting.delete(key);
        try {
          await this.describeAndKeep(frame.r);
        } finally {
          done();
        }
      },
      frame.size,
      done,
    );
  }

  /**
   * A camera frame's faces described (one descriptor each: those the recognition described keep theirs), tracked
   * with them, and the ones to keep stored.
   */
  private async describeAndKeep(r: CopiedRecognition): Promise<void> {
    const faces: CopiedRecognition['faces'] = [];
    for (const face of r.faces) {
      if (face.descriptor === undefined) await this.yieldToRecognition();
      const [descriptor] =
        face.descriptor !== undefined ? [face.descriptor] : await this.describeSafely(face.pixels.rgb, [face.pixels.box]);
      faces.push({ ...face, descriptor: descriptor ?? null });
    }
    const kept = this.select(r, faces);
    if (kept.length > 0) await this.storeCopies({ ...r, faces: kept });
  }

  /** Faces that came with their crops (browser results). Never throws. */
  recordCrops(r: CroppedRecognition): void {
    try {
      const faces = this.select(r, r.faces);
      if (faces.length === 0) return;
      this.enqueue(() => this.storeCrops({ ...r, faces }), { bytes: faces.reduce((n, f) => n + f.crop.byteLength, 0) });
    } catch (err) {
      this.fail(err);
    }
  }

  /** Resolves when every sighting handed over so far is stored (or failed, or dropped): once recognitions are quiet. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Purges now and every hour (the timer does not hold the process open). */
  start(): void {
    if (this.timer) return;
    // A database that holds nothing yet (a fresh embedded one) is not opened just to purge it.
    const purgeIfAny = async () => {
      if (await this.opts.store.db.hasData()) await this.purgeNow();
    };
    void purgeIfAny();
    this.timer = setInterval(() => void purgeIfAny(), PURGE_INTERVAL_MS);
    this.timer.unref();
  }

  /** Runs the retention purge once (logged, never throws); how many were removed. */
  async purgeNow(): Promise<number> {
    let removed = 0;
    const run = (async () => {
      try {
        removed = await this.opts.store.purge(new Date(this.now()));
        if (removed > 0) this.opts.log.info(`sightings: purged ${removed} (retention and count cap)`);
      } catch (err) {
        this.opts.log.warn(`sightings: purge failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    })();
    this.purging = run;
    await run;
    if (this.purging === run) this.purging = null;
    return removed;
  }

  /**
   * Stops the timer and works through the queue at once (no recognition follows) for at most DRAIN_MS; what is
   * still queued then is dropped, counted and logged. Waits for the job running and a running purge.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.draining = true;
    this.activity.release();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_MS)))]);
    clearTimeout(timer);
    const left = this.jobs.length;
    if (left > 0) {
      for (const job of this.jobs.splice(0)) this.drop(job);
      this.opts.log.warn(`sightings: ${left} not stored at shutdown (dropped; ${this.dropped} dropped since the start)`);
    }
    await this.idle();
    await this.purging;
  }

  /**
   * The faces to keep: all of them, or for `camera` the first of each track per interval. A face continues the
   * track of its label (null: unknown) that matchTrack finds among those no other face of the frame took.
   */
  private select<F extends Tracked>(r: Common, faces: F[]): F[] {
    if (faces.length === 0 || !this.keeps(r.source)) return [];
    const intervalMs = this.opts.settings.intervalS * 1000;
    if (r.source !== 'camera' || intervalMs <= 0) return faces;
    const now = r.seen_at?.getTime() ?? this.now();
    const key = trackKey(r);
    const max = this.opts.trackMax?.() ?? null;
    // Tracks not seen for longer than the interval have ended: a face seen again starts a new one.
    const tracks = (this.tracks.get(key) ?? []).filter((t) => now - t.seenAt <= intervalMs);
    const taken = new Set<Track>();
    const kept: F[] = [];
    for (const face of faces) {
      const descriptor = max !== null ? (face.descriptor ?? null) : null;
      const free = tracks.filter((t) => !taken.has(t) && t.label === face.label);
      const track = matchTrack(free, face, descriptor, max);
      if (!track) {
        const started: Track = { label: face.label, box: face.box, descriptor, keptAt: now, seenAt: now };
        tracks.push(started);
        taken.add(started);
        kept.push(face);
        continue;
      }
      taken.add(track);
      track.box = face.box;
      track.seenAt = now;
      if (descriptor) track.descriptor = descriptor;
      if (now - track.keptAt >= intervalMs) {
        track.keptAt = now;
        kept.push(face);
      }
    }
    this.tracks.delete(key);
    if (tracks.length) this.tracks.set(key, tracks.slice(-64));
    // Many cameras that went quiet: forget the oldest.
    if (this.tracks.size > 1000) this.tracks.delete(this.tracks.keys().next().value as string);
    return kept;
  }

  /**
   * Queues a job holding `size.bytes` (which may change while it waits). A full queue (QUEUE_MAX jobs, or
   * QUEUE_MAX_BYTES held) drops its oldest jobs: memory stays bounded while recognitions keep the workers busy.
   */
  private enqueue(run: () => Promise<void>, size: { bytes: number }, dropped?: () => void): void {
    this.jobs.push({ run, size, dropped });
    this.pendingBytes += size.bytes;
    const max = this.opts.queueMax ?? QUEUE_MAX;
    while (this.jobs.length > max || (this.jobs.length > 1 && this.pendingBytes > QUEUE_MAX_BYTES)) {
      const oldest = this.jobs.shift() as QueuedJob;
      this.drop(oldest);
      if (this.dropped % 100 === 1) {
        this.opts.log.warn(`sightings: ${this.dropped} dropped since the start (the oldest first: the queue of ${max} is full)`);
      }
    }
    this.pump();
  }

  private drop(job: QueuedJob): void {
    this.dropped++;
    this.pendingBytes -= job.size.bytes;
    job.dropped?.();
  }

  /** Works through the queue, one job at a time, each once recognitions are quiet. */
  private pump(): void {
    if (this.running || this.jobs.length === 0) return;
    this.running = (async () => {
      while (this.jobs.length > 0) {
        // A job starts when recognitions are quiet, or in a gap once the last one started MAX_WAIT_MS ago.
        this.deadline = this.lastStart + (this.opts.maxWaitMs ?? MAX_WAIT_MS);
        await this.yieldToRecognition();
        this.lastStart = this.activity.now();
        const job = this.jobs.shift();
        if (!job) break;
        try {
          await job.run();
        } catch (err) {
          this.fail(err);
        } finally {
          this.pendingBytes -= job.size.bytes;
        }
      }
    })().finally(() => {
      this.running = null;
      this.pump();
    });
  }

  /** Waits until no recognition runs or has just run (at once while shutting down). */
  private async yieldToRecognition(): Promise<void> {
    if (!this.draining) await this.activity.quiet(this.deadline);
  }

  private fail(err: unknown): void {
    this.opts.log.warn(`sightings: not kept: ${err instanceof Error ? err.message : String(err)}`);
  }

  private describer(): Describe | null {
    return this.opts.describe?.() ?? null;
  }

  /** The copied crops: each one encoded, described and stored (no image is decoded, no pixel budget held). */
  private async storeCopies(r: CopiedRecognition): Promise<void> {
    const seenAt = r.seen_at ?? new Date(this.now());
    for (const { pixels, descriptor: described, ...face } of r.faces) {
      try {
        // Each step (JPEG, descriptor, row) waits for quiet again: a recognition that came meanwhile goes first.
        await this.yieldToRecognition();
        const crop = await toJpeg(pixels);
        if (described === undefined) await this.yieldToRecognition();
        const descriptor = described !== undefined ? described : ((await this.describeSafely(pixels.rgb, [pixels.box]))[0] ?? null);
        const group_descriptor = face.label === null ? await this.describeForGrouping(pixels.rgb, pixels.box) : null;
        await this.yieldToRecognition();
        await this.opts.store.add({ ...this.common(r, seenAt), ...face, crop, descriptor, group_descriptor });
        this.stored++;
      } catch (err) {
        this.failed++;
        this.fail(err);
      }
    }
  }

  /** Crops made elsewhere: re-encoded (upright, at most 160 px, no metadata), described, stored. */
  private async storeCrops(r: CroppedRecognition): Promise<void> {
    const seenAt = r.seen_at ?? new Date(this.now());
    for (const face of r.faces) {
      try {
        await this.yieldToRecognition();
        const crop = await sharp(face.crop, { failOn: 'truncated', limitInputPixels: CROP_MAX_PIXELS })
          .rotate()
          .resize({ width: CROP_MAX_SIDE, height: CROP_MAX_SIDE, fit: 'inside', withoutEnlargement: true })
          .jpeg({ quality: 85 })
          .toBuffer();
        let descriptor: Float32Array | null = null;
        let group_descriptor: Float32Array | null = null;
        if (this.describer()) {
          const { rgb, box } = await cropFace(crop);
          await this.yieldToRecognition();
          descriptor = (await this.describeSafely(rgb, [box]))[0] ?? null;
          if (face.label === null) group_descriptor = await this.describeForGrouping(rgb, box);
        }
        const { crop: _sent, id, ...decision } = face;
        await this.yieldToRecognition();
        await this.opts.store.add({ ...this.common(r, seenAt), ...decision, ...(id ? { id } : {}), crop, descriptor, group_descriptor });
        this.stored++;
      } catch (err) {
        this.failed++;
        this.fail(err);
      }
    }
  }

  /**
   * #36 1: describes for grouping, from their stored crops, the unknown faces kept with another model's descriptor
   * only (a faceres-1024 server's, from before grouping descriptors existed), newest first, at most `max`; they are
   * grouped again at the next grouping pass. In the queue, a few faces a job, each step below recognition's priority
   * like every sighting's. One run at a time (a call meanwhile gets the running one); how many were described.
   */
  backfillGrouping(max = BACKFILL_MAX): Promise<number> {
    this.backfilling ??= this.backfill(max).finally(() => {
      this.backfilling = null;
    });
    return this.backfilling;
  }

  private async backfill(max: number): Promise<number> {
    const describe = this.opts.describeForGrouping?.() ?? null;
    if (!describe || this.stopped) return 0;
    let ids: string[];
    try {
      ids = (await this.opts.store.withoutGroupDescriptor(max + this.backfillFailed.size)).filter((id) => !this.backfillFailed.has(id));
    } catch (err) {
      this.fail(err);
      return 0;
    }
    let described = 0;
    for (let i = 0; i < Math.min(ids.length, max) && !this.stopped; i += BACKFILL_BATCH) {
      const batch = ids.slice(i, Math.min(i + BACKFILL_BATCH, max));
      // One batch in the queue at a time: the backfill never fills it (a full queue drops its oldest jobs, which
      // would be new sightings' work).
      await new Promise<void>((resolve) => {
        this.enqueue(
          async () => {
            try {
              for (const id of batch) {
                await this.yieldToRecognition();
                try {
                  const crop = await this.opts.store.crop(id);
                  const face = crop ? await cropFace(crop) : null;
                  const [d] = face ? await this.describeSafely(face.rgb, [face.box], describe) : [];
                  if (d && d.length * 4 === GROUPING_DESCRIPTOR_BYTES) {
                    if (await this.opts.store.setGroupDescriptor(id, d)) described++;
                  } else this.backfillFailed.add(id);
                } catch (err) {
                  this.backfillFailed.add(id);
                  this.fail(err);
                }
              }
            } finally {
              resolve();
            }
          },
          { bytes: 0 },
          resolve,
        );
      });
    }
    if (described > 0)
      this.opts.log.info(`sightings: ${described} unknown face(s) kept before grouping descriptors described for grouping`);
    return described;
  }

  private common(r: Common, seenAt: Date): Omit<NewSighting, keyof FaceDecision> {
    return {
      seen_at: seenAt,
      source: r.source,
      client: r.client,
      camera: r.camera,
      recognizer: r.recognizer,
      model_version: r.model_version,
    };
  }

  /**
   * An unknown face's 128-d descriptor for grouping when its own is of another model (describeForGrouping), after a
   * wait for quiet like every other step; null otherwise or on failure (logged). Named faces are never grouped.
   */
  private async describeForGrouping(rgb: RgbImage, box: SightingBox): Promise<Float32Array | null> {
    const describe = this.opts.describeForGrouping?.() ?? null;
    if (!describe) return null;
    await this.yieldToRecognition();
    return (await this.describeSafely(rgb, [box], describe))[0] ?? null;
  }

  /** Descriptors, or none (logged) when the embedding worker is off or fails: a sighting without one is still kept. */
  private async describeSafely(rgb: RgbImage, boxes: SightingBox[], describe = this.describer()): Promise<(Float32Array | null)[]> {
    if (!describe || boxes.length === 0) return [];
    try {
      const rects: Rect[] = boxes.map((b) => ({ x: Math.round(b.x), y: Math.round(b.y), width: Math.round(b.w), height: Math.round(b.h) }));
      return (await describe(rgb, rects)).map((d) => (d && d.length > 0 ? d : null));
    } catch (err) {
      this.opts.log.warn(`sightings: no descriptor: ${err instanceof Error ? err.message : String(err)}`);
      return [];
    }
  }
}
