/**
 * Training features kept per stored image (#27 §1), so a training costs the images that changed, not the gallery:
 * `<root>/<label>/<filename>.feat` mirrors `images/<label>/<filename>` (the image folders hold only images: the
 * original service and `GET /api/images` read them). One file holds the face box, the LBPH histogram and the
 * embedding descriptor, each with the version of what made it (detector, crop/alignment, descriptor model), and
 * the SHA-256 of the image bytes it came from.
 *
 * Never trusted blindly: a file is used only when its own checksum holds (a torn or corrupt file is recomputed),
 * its image hash is the image's now (a capture id stored again with other bytes), and its versions are this run's.
 * Written atomically (server/storage/atomic.ts) by training only, under the training lock; removed with the image
 * or the person (ImageStore), and a file whose image is gone (a delete on another replica racing a training) is
 * removed by the next training's sweep. Hence a stale file can cost a recomputation, never a wrong sample.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DetectionMethod } from '../../shared/api/index.js';
import type { Rect } from '../../shared/image/types.js';
import { LBPH_DEFAULTS } from '../../shared/lbph/lbph.js';
import { decodeHistogram, encodeHistogram } from '../../shared/recognition/compact-model.js';
import { FACE_ALIGNMENT } from '../../shared/vision/eye-alignment.js';
import { FACE_SIZE } from '../../shared/vision/face-region.js';
import type { Logger } from '../logger.js';
import { removeStaleTemps, TEMP_PREFIX, writeFileAtomic } from './atomic.js';
import type { SharedFiles } from './shared-files.js';
import { localFilesAbove, removeEmptyFolder, wroteNew } from './store-hooks.js';
import { privateDir } from './private-modes.js';

/** What a training image's features are made with now; a stored part made with another version is recomputed. */
export interface FeatureVersions {
  /**
   * The face detector (cascade, its parameters; the remote model server and model), by detection method. A training
   * with `remote` adds the served model's versions, platform and tensors, asked at its start (RemoteEngine.modelIdentity).
   */
  detector: Record<DetectionMethod, string>;
  /** How a face becomes an LBPH histogram: crop size, eye alignment, LBPH parameters. */
  crop: string;
}

/** One image's features. `face: null`: no face was found (a `no_face` skip, reused as such). */
export interface ImageFeatures {
  /** SHA-256 (hex) of the image's bytes. */
  image: string;
  detector: string;
  face: Rect | null;
  /** The crop version the histogram was made with; null with no histogram. */
  crop: string | null;
  histogram: Float32Array | null;
  /** FACE_ALIGNMENT when the histogram's face was turned upright by its eyes. */
  faceAlignment?: string;
  /** The descriptor model the descriptor was made with; null: none was asked for (the recognizer was off). */
  descriptorModel: string | null;
  /** Null with a descriptor model: the nets found no landmarks on that face. */
  descriptor: Float32Array | null;
}

/** Which parts of an image's features a training must compute; none: the stored ones serve whole. */
export interface FeatureWork {
  detect: boolean;
  histogram: boolean;
  descriptor: boolean;
}

const hex = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

/** The SHA-256 an image's features are tied to. */
export function imageHash(bytes: Uint8Array): string {
  return hex(bytes);
}

/**
 * The versions of this server's detection and crop, from what makes them: the cascades' text (a changed XML is
 * another detector), the CASCADE_* parameters, the remote model server and model.
 */
export function featureVersionsOf(opts: {
  cascadeXml: string;
  cascade: { scaleFactor: number; minNeighbors: number; minSize: number };
  eyeCascadeXml?: string;
  remote: { url: string; modelName: string; confidenceThreshold: number };
}): FeatureVersions {
  const { scaleFactor, minNeighbors, minSize } = opts.cascade;
  const { url, modelName, confidenceThreshold } = opts.remote;
  return {
    detector: {
      local: `haar:${hex(opts.cascadeXml).slice(0, 16)}:${scaleFactor},${minNeighbors},${minSize}`,
      remote: `remote:${url}|${modelName}|${confidenceThreshold}`,
    },
    crop: cropVersion(opts.eyeCascadeXml),
  };
}

/** The crop version: face size, LBPH parameters, and the eye cascade that aligns (none: the plain crop). */
export function cropVersion(eyeCascadeXml?: string): string {
  const { radius, neighbors, gridX, gridY } = LBPH_DEFAULTS;
  const align = eyeCascadeXml ? `${FACE_ALIGNMENT}:${hex(eyeCascadeXml).slice(0, 16)}` : 'plain';
  return `face${FACE_SIZE}|lbph${radius},${neighbors},${gridX}x${gridY}|${align}`;
}

/**
 * What must be computed for an image: everything when there is no valid record, it is another image's, or another
 * detector's; else only the parts made with another version (the box stays: the crop and the descriptor are made
 * from it). `descriptorModel`: the running descriptor model, or null when this run makes no descriptors.
 */
export function featureWork(
  stored: ImageFeatures | null,
  image: string,
  detector: string,
  crop: string,
  descriptorModel: string | null,
): FeatureWork {
  if (!stored || stored.image !== image || stored.detector !== detector)
    return { detect: true, histogram: true, descriptor: descriptorModel !== null };
  if (!stored.face) return { detect: false, histogram: false, descriptor: false };
  return {
    detect: false,
    histogram: stored.crop !== crop || !stored.histogram,
    descriptor: descriptorModel !== null && stored.descriptorModel !== descriptorModel,
  };
}

// File layout: MAGIC, u32 header length, header JSON, zero padding to 4 bytes, the descriptor as little-endian
// float32, the histogram in the compact model's sparse form (encodeHistogram: lossless, about a fifth of its
// 64 KB dense), then the SHA-256 of everything before it. Files of the first format (LKFEAT1: the histogram dense,
// before the descriptor) are still read; a training writes the new one only for the images it computes.
const MAGIC = Buffer.from('LKFEAT2\n', 'latin1');
const MAGIC_DENSE = Buffer.from('LKFEAT1\n', 'latin1');
const DIGEST = 32;
// Float32 bytes are copied whole on a little-endian host (every host Node runs on here), one by one elsewhere.
const LITTLE_ENDIAN = os.endianness() === 'LE';

interface Header {
  image: string;
  detector: string;
  face: { x: number; y: number; width: number; height: number } | null;
  crop: string | null;
  /** The histogram's bins; -1: none. */
  histogram: number;
  /** The sparse histogram's bytes (LKFEAT2 only). */
  histogramBytes?: number;
  faceAlignment?: string;
  descriptorModel: string | null;
  descriptor: number;
}

/** The bytes of a feature file. */
export function encodeFeatures(f: ImageFeatures): Uint8Array {
  const sparse = f.histogram ? encodeHistogram(f.histogram) : null;
  const header: Header = {
    image: f.image,
    detector: f.detector,
    face: f.face ? { x: f.face.x, y: f.face.y, width: f.face.width, height: f.face.height } : null,
    crop: f.crop,
    histogram: f.histogram?.length ?? -1,
    histogramBytes: sparse?.length ?? 0,
    ...(f.faceAlignment ? { faceAlignment: f.faceAlignment } : {}),
    descriptorModel: f.descriptorModel,
    descriptor: f.descriptor?.length ?? -1,
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const start = MAGIC.length + 4 + json.length;
  const floatsAt = start + ((4 - (start % 4)) % 4);
  const descriptorBytes = Math.max(0, header.descriptor) * 4;
  const out = Buffer.alloc(floatsAt + descriptorBytes + (sparse?.length ?? 0) + DIGEST);
  MAGIC.copy(out, 0);
  out.writeUInt32LE(json.length, MAGIC.length);
  json.copy(out, MAGIC.length + 4);
  let at = floatsAt;
  const values = f.descriptor;
  if (values && LITTLE_ENDIAN) {
    out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), at);
    at += values.byteLength;
  } else if (values) {
    for (const v of values) {
      out.writeFloatLE(v, at);
      at += 4;
    }
  }
  if (sparse) {
    out.set(sparse, at);
    at += sparse.length;
  }
  createHash('sha256').update(out.subarray(0, at)).digest().copy(out, at);
  return out;
}

/** The features in a file's bytes; throws when they are torn, corrupt or not a feature file. */
export function decodeFeatures(bytes: Uint8Array): ImageFeatures {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = buf.subarray(0, MAGIC.length);
  const dense = magic.equals(MAGIC_DENSE);
  if (buf.length < MAGIC.length + 4 + DIGEST || !(dense || magic.equals(MAGIC))) throw new Error('not a feature file');
  const body = buf.subarray(0, buf.length - DIGEST);
  if (!createHash('sha256').update(body).digest().equals(buf.subarray(body.length))) throw new Error('checksum mismatch (torn or corrupt)');
  const jsonLength = buf.readUInt32LE(MAGIC.length);
  const start = MAGIC.length + 4 + jsonLength;
  if (start > body.length) throw new Error('header runs past the end');
  const header = JSON.parse(buf.toString('utf8', MAGIC.length + 4, start)) as Header;
  const floatsAt = start + ((4 - (start % 4)) % 4);
  const histogramBytes = dense ? Math.max(0, header.histogram) * 4 : (header.histogramBytes ?? 0);
  if (floatsAt + Math.max(0, header.descriptor) * 4 + histogramBytes !== body.length) throw new Error('length does not match its header');
  let at = floatsAt;
  const read = (n: number): Float32Array | null => {
    if (n < 0) return null;
    const values = new Float32Array(n);
    if (LITTLE_ENDIAN) {
      new Uint8Array(values.buffer).set(buf.subarray(at, at + n * 4));
      at += n * 4;
    } else for (let i = 0; i < n; i++, at += 4) values[i] = buf.readFloatLE(at);
    return values;
  };
  let histogram: Float32Array | null;
  let descriptor: Float32Array | null;
  if (dense) {
    histogram = read(header.histogram);
    descriptor = read(header.descriptor);
  } else {
    descriptor = read(header.descriptor);
    histogram = header.histogram < 0 ? null : decodeHistogram(buf.subarray(at, body.length), header.histogram);
  }
  return {
    image: header.image,
    detector: header.detector,
    face: header.face,
    crop: header.crop,
    histogram,
    ...(header.faceAlignment ? { faceAlignment: header.faceAlignment } : {}),
    descriptorModel: header.descriptorModel,
    descriptor,
  };
}

const FEATURE_EXT = '.feat';

function errCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

export class FeatureStore {
  /** `shared` (#37): told of every file written or removed here (the embedded default of the folder above `root` when not given). */
  constructor(
    readonly root: string,
    private readonly log?: Logger,
    readonly shared: SharedFiles = localFilesAbove(root),
  ) {}

  private file(label: string, filename: string): string {
    return path.join(this.root, label, `${filename}${FEATURE_EXT}`);
  }

  /** An image's stored features, or null: none, or a file that is torn/corrupt (recomputed, and said so). */
  async read(label: string, filename: string): Promise<ImageFeatures | null> {
    let bytes: Buffer;
    try {
      bytes = await fs.readFile(this.file(label, filename));
    } catch (err) {
      if (errCode(err) !== 'ENOENT') this.log?.warn(`features of ${label}/${filename} unreadable, recomputed: ${String(err)}`);
      return null;
    }
    try {
      return decodeFeatures(bytes);
    } catch (err) {
      this.log?.warn(`features of ${label}/${filename} not used, recomputed: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    }
  }

  /** Writes an image's features atomically (a reader sees the old file or the new one). */
  async write(label: string, filename: string, features: ImageFeatures): Promise<void> {
    await privateDir(path.join(this.root, label));
    await writeFileAtomic(this.file(label, filename), encodeFeatures(features));
    // Features not shared are not kept: a later training computes them again.
    await wroteNew(this.shared, this.file(label, filename));
  }

  /** Removes one image's features (nothing to do when there are none). */
  async remove(label: string, filename: string): Promise<void> {
    await fs.rm(this.file(label, filename), { force: true });
    await this.shared.removed(this.file(label, filename));
    await removeEmptyFolder(this.shared, path.join(this.root, label));
  }

  /** Removes a person's features. */
  async removeLabel(label: string): Promise<void> {
    await fs.rm(path.join(this.root, label), { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
    await this.shared.removed(path.join(this.root, label));
  }

  /**
   * Removes every feature file whose image is not in `images` (`label/filename` keys of a training's snapshot),
   * leftover temporary files, and empty folders; returns how many feature files went. Run under the training lock
   * (only a training writes features), so it never removes one being written.
   */
  async sweep(images: ReadonlySet<string>): Promise<number> {
    let removed = 0;
    let labels: string[];
    try {
      labels = (await fs.readdir(this.root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch (err) {
      if (errCode(err) === 'ENOENT') return 0;
      throw err;
    }
    for (const label of labels) {
      const dir = path.join(this.root, label);
      await removeStaleTemps(dir);
      let names: string[];
      try {
        names = await fs.readdir(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        if (name.startsWith(TEMP_PREFIX)) continue;
        const image = name.endsWith(FEATURE_EXT) ? name.slice(0, -FEATURE_EXT.length) : null;
        if (image !== null && images.has(`${label}/${image}`)) continue;
        await fs.rm(path.join(dir, name), { force: true, recursive: true });
        await this.shared.removed(path.join(dir, name));
        removed++;
      }
      await removeEmptyFolder(this.shared, dir);
    }
    return removed;
  }
}
