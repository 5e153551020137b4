/**
 * Decides which faces a recognition keeps as sightings, and keeps them off the request path.
 *
 * - Nothing with SIGHTINGS_ENABLED=false, nothing from a source not in SIGHTINGS_SOURCES.
 * - `camera` (live frames): one sighting per face track per SIGHTINGS_INTERVAL_S. A track is one source + client +
 *   camera, and the same decided label or, for an unknown face, a box overlapping the track's last box (IoU >= 0.3).
 *   The decision is made at once, in the order frames are answered, so concurrent frames never both keep one.
 * - The crop is the face box widened by 40% each side, longest side at most 160 px, JPEG. Its pixels are copied from
 *   the recognition's own decoded image while the request still holds it (a small copy, at most 320 px a side, made
 *   at once), so the recorder never decodes an image again and never holds any of the pixel budget: requests are
 *   never refused because a sighting is being kept. The JPEG, the descriptor (when the embedding worker runs) and
 *   the row are made after the answer was sent, in a bounded queue: a recognition never waits for a sighting and
 *   never fails because of one (errors are logged).
 * - The purge (retention days and count cap) runs at start and every hour.
 */
import sharp from 'sharp';
import type { FaceResult } from '../../shared/api/common.js';
import type { SightingSource } from '../../shared/api/sightings.js';
import type { Rect, RgbImage } from '../../shared/image/types.js';
import type { Logger } from '../logger.js';
import type { NewSighting, SightingBox, SightingStore } from './sighting-store.js';

/** Each side of the face box is widened by this share of its size. */
export const CROP_MARGIN = 0.4;
/** The crop's longest side, at most. */
export const CROP_MAX_SIDE = 160;
/** The copy of a crop's pixels kept until it is stored: longest side at most this (the descriptor wants the face at 150 px or more). */
export const COPY_MAX_SIDE = 2 * CROP_MAX_SIDE;
/** A face box overlapping a track's last box by at least this (intersection over union) continues the track. */
export const TRACK_IOU = 0.3;
/** Jobs waiting at most, and their images' bytes at most; more are dropped (and logged) rather than held in memory. */
const QUEUE_MAX = 256;
const QUEUE_MAX_BYTES = 64 * 1024 * 1024;
const PURGE_INTERVAL_MS = 3_600_000;

/** The decision about one face, as a sighting keeps it. */
export type FaceDecision = Pick<NewSighting, 'box' | 'label' | 'candidate' | 'distance' | 'confidence' | 'certainty' | 'reason'>;

/** A recognition's face as a sighting's decision: `unknown` is no label. */
export function decisionOf(face: FaceResult): FaceDecision {
  return {
    box: { x: face.x, y: face.y, w: face.w, h: face.h },
    label: face.label === 'unknown' ? null : face.label,
    candidate: face.candidate?.label ?? null,
    distance: face.distance ?? face.candidate?.distance ?? null,
    confidence: face.confidence,
    certainty: face.certainty ?? null,
    reason: face.reason ?? null,
  };
}

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
 * `recordImage` runs) and the faces it found.
 */
export interface ImageRecognition extends Common {
  image: RgbImage;
  faces: FaceDecision[];
}

/** A face's crop pixels, copied out of its decoded image (copyFace). */
export interface FacePixels {
  /** The crop region, at most COPY_MAX_SIDE a side (3 channels). */
  rgb: RgbImage;
  /** The face box within `rgb`. */
  box: SightingBox;
  /** The stored JPEG's size: the crop region's at most CROP_MAX_SIDE a side. */
  jpeg: { width: number; height: number };
}

/** Faces whose crop pixels were copied while their image was decoded (POST /api/verify's first frame). */
export interface CopiedRecognition extends Common {
  faces: (FaceDecision & { pixels: FacePixels })[];
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
  log: Logger;
  /** The clock (tests). */
  now?: () => number;
}

interface Track {
  label: string | null;
  box: SightingBox;
  keptAt: number;
  seenAt: number;
}

export function iou(a: SightingBox, b: SightingBox): number {
  const x1 = Math.max(a.x, b.x);
  const y1 = Math.max(a.y, b.y);
  const x2 = Math.min(a.x + a.w, b.x + b.w);
  const y2 = Math.min(a.y + a.h, b.y + b.h);
  const inter = Math.max(0, x2 - x1) * Math.max(0, y2 - y1);
  const union = a.w * a.h + b.w * b.h - inter;
  return union > 0 ? inter / union : 0;
}

/** The face box widened by CROP_MARGIN each side, within the image; null when nothing of it is inside. */
export function cropRegion(
  box: SightingBox,
  width: number,
  height: number,
): { left: number; top: number; width: number; height: number } | null {
  const left = Math.max(0, Math.floor(box.x - box.w * CROP_MARGIN));
  const top = Math.max(0, Math.floor(box.y - box.h * CROP_MARGIN));
  const right = Math.min(width, Math.ceil(box.x + box.w * (1 + CROP_MARGIN)));
  const bottom = Math.min(height, Math.ceil(box.y + box.h * (1 + CROP_MARGIN)));
  if (right - left < 1 || bottom - top < 1) return null;
  return { left, top, width: right - left, height: bottom - top };
}

/** A width and height within `max` a side, the aspect kept (never enlarged). */
function fitInside(width: number, height: number, max: number): { width: number; height: number } {
  const scale = Math.min(1, max / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/**
 * Copies a face's crop region (cropRegion) out of a decoded image, at most COPY_MAX_SIDE a side: each pixel of the
 * copy the mean of up to 4 x 4 samples of its area. Synchronous and small (at most 300 KB, whatever the image), so
 * it is made while the request still holds the image, and the image is never needed again. Null when nothing of
 * the box is inside the image.
 */
export function copyFace(image: RgbImage, box: SightingBox): FacePixels | null {
  const ch = image.channels;
  if (!(image.width > 0 && image.height > 0) || image.data.length < image.width * image.height * ch) {
    throw new Error(`the decoded image's pixels do not match its size (${image.width}x${image.height}x${ch})`);
  }
  const region = cropRegion(box, image.width, image.height);
  if (!region) return null;
  const { width, height } = fitInside(region.width, region.height, COPY_MAX_SIDE);
  const sx = region.width / width;
  const sy = region.height / height;
  const taps = Math.min(4, Math.ceil(Math.max(sx, sy)));
  const n = taps * taps;
  const src = image.data;
  const out = new Uint8Array(width * height * 3);
  for (let y = 0, o = 0; y < height; y++) {
    for (let x = 0; x < width; x++, o += 3) {
      let r = 0;
      let g = 0;
      let b = 0;
      for (let ty = 0; ty < taps; ty++) {
        const py = region.top + Math.min(region.height - 1, Math.floor((y + (ty + 0.5) / taps) * sy));
        for (let tx = 0; tx < taps; tx++) {
          const px = region.left + Math.min(region.width - 1, Math.floor((x + (tx + 0.5) / taps) * sx));
          const i = (py * image.width + px) * ch;
          r += src[i];
          g += src[i + 1];
          b += src[i + 2];
        }
      }
      out[o] = Math.round(r / n);
      out[o + 1] = Math.round(g / n);
      out[o + 2] = Math.round(b / n);
    }
  }
  return {
    rgb: { width, height, channels: 3, data: out },
    box: { x: (box.x - region.left) / sx, y: (box.y - region.top) / sy, w: box.w / sx, h: box.h / sy },
    jpeg: fitInside(region.width, region.height, CROP_MAX_SIDE),
  };
}

const toJpeg = (pixels: FacePixels) =>
  sharp(pixels.rgb.data, { raw: { width: pixels.rgb.width, height: pixels.rgb.height, channels: 3 } })
    .resize({ ...pixels.jpeg, fit: 'fill' })
    .jpeg({ quality: 85 })
    .toBuffer();

export class SightingRecorder {
  private readonly tracks = new Map<string, Track[]>();
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  private pendingBytes = 0;
  private dropped = 0;
  private timer: NodeJS.Timeout | null = null;
  private purging: Promise<void> | null = null;
  private readonly now: () => number;
  private stopped = false;

  constructor(private readonly opts: SightingRecorderOptions) {
    this.now = opts.now ?? Date.now;
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
      const faces = this.select(r, r.faces);
      if (faces.length === 0) return;
      const { image, ...common } = r;
      const copied = faces
        .map((face) => ({ ...face, pixels: copyFace(image, face.box) }))
        .filter((f): f is FaceDecision & { pixels: FacePixels } => f.pixels !== null);
      this.keepCopies({ ...common, faces: copied });
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
    this.enqueue(
      () => this.storeCopies(r),
      r.faces.reduce((n, f) => n + f.pixels.rgb.data.byteLength, 0),
    );
  }

  /** Faces that came with their crops (browser results). Never throws. */
  recordCrops(r: CroppedRecognition): void {
    try {
      const faces = this.select(r, r.faces);
      if (faces.length === 0) return;
      this.enqueue(
        () => this.storeCrops({ ...r, faces }),
        faces.reduce((n, f) => n + f.crop.byteLength, 0),
      );
    } catch (err) {
      this.fail(err);
    }
  }

  /** Resolves when every sighting handed over so far is stored (or failed). */
  async idle(): Promise<void> {
    while (this.pending > 0) await this.queue;
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

  /** Stops the timer and waits for the queue and a running purge. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.idle();
    await this.purging;
  }

  /** The faces to keep: all of them, or for `camera` the first of each track per interval. */
  private select<F extends FaceDecision>(r: Common, faces: F[]): F[] {
    if (faces.length === 0 || !this.keeps(r.source)) return [];
    const intervalMs = this.opts.settings.intervalS * 1000;
    if (r.source !== 'camera' || intervalMs <= 0) return faces;
    const now = r.seen_at?.getTime() ?? this.now();
    const key = JSON.stringify([r.source, r.client, r.camera]);
    // Tracks not seen for longer than the interval have ended: a face seen again starts a new one.
    const tracks = (this.tracks.get(key) ?? []).filter((t) => now - t.seenAt <= intervalMs);
    const kept: F[] = [];
    for (const face of faces) {
      const track =
        face.label !== null
          ? tracks.find((t) => t.label === face.label)
          : tracks
              .filter((t) => t.label === null)
              .map((t) => ({ t, overlap: iou(t.box, face.box) }))
              .filter((m) => m.overlap >= TRACK_IOU)
              .sort((a, b) => b.overlap - a.overlap)[0]?.t;
      if (!track) {
        tracks.push({ label: face.label, box: face.box, keptAt: now, seenAt: now });
        kept.push(face);
        continue;
      }
      track.box = face.box;
      track.seenAt = now;
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

  private enqueue(job: () => Promise<void>, bytes: number): void {
    if (this.pending >= QUEUE_MAX || (this.pending > 0 && this.pendingBytes + bytes > QUEUE_MAX_BYTES)) {
      if (this.dropped++ % 100 === 0) this.opts.log.warn(`sightings: ${this.dropped} dropped, the queue of ${QUEUE_MAX} is full`);
      return;
    }
    this.pending++;
    this.pendingBytes += bytes;
    this.queue = this.queue
      .then(job)
      .catch((err) => this.fail(err))
      .finally(() => {
        this.pending--;
        this.pendingBytes -= bytes;
      });
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
    for (const { pixels, ...face } of r.faces) {
      try {
        const crop = await toJpeg(pixels);
        const [descriptor] = await this.describeSafely(pixels.rgb, [pixels.box]);
        await this.opts.store.add({ ...this.common(r, seenAt), ...face, crop, descriptor: descriptor ?? null });
      } catch (err) {
        this.fail(err);
      }
    }
  }

  /** Crops made elsewhere: re-encoded (upright, at most 160 px, no metadata), described, stored. */
  private async storeCrops(r: CroppedRecognition): Promise<void> {
    const seenAt = r.seen_at ?? new Date(this.now());
    for (const face of r.faces) {
      try {
        const crop = await sharp(face.crop, { failOn: 'truncated', limitInputPixels: 4_000_000 })
          .rotate()
          .resize({ width: CROP_MAX_SIDE, height: CROP_MAX_SIDE, fit: 'inside', withoutEnlargement: true })
          .jpeg({ quality: 85 })
          .toBuffer();
        let descriptor: Float32Array | null = null;
        if (this.describer()) {
          const { data, info } = await sharp(crop)
            .removeAlpha()
            .toColourspace('srgb')
            .raw({ depth: 'uchar' })
            .toBuffer({ resolveWithObject: true });
          const rgb: RgbImage = {
            width: info.width,
            height: info.height,
            channels: 3,
            data: new Uint8Array(data.buffer, data.byteOffset, data.length),
          };
          // The face is the crop's middle: the crop is its box widened by CROP_MARGIN each side.
          const share = 1 / (1 + 2 * CROP_MARGIN);
          const w = info.width * share;
          const h = info.height * share;
          descriptor = (await this.describeSafely(rgb, [{ x: (info.width - w) / 2, y: (info.height - h) / 2, w, h }]))[0] ?? null;
        }
        const { crop: _sent, id, ...decision } = face;
        await this.opts.store.add({ ...this.common(r, seenAt), ...decision, ...(id ? { id } : {}), crop, descriptor });
      } catch (err) {
        this.fail(err);
      }
    }
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

  /** Descriptors, or none (logged) when the embedding worker is off or fails: a sighting without one is still kept. */
  private async describeSafely(rgb: RgbImage, boxes: SightingBox[]): Promise<(Float32Array | null)[]> {
    const describe = this.describer();
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
