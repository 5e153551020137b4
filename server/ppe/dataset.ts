/**
 * Training data from PPE checks (PPE_DATASET_DIR): each checked frame is saved as `images/<id>.jpg` (the JPEG the
 * detector saw) with `labels/<id>.txt` in YOLO format, one line per detector detection:
 * `class_index cx cy w h`, the box's centre and size as fractions 0..1 of the image. Class indices are the line
 * numbers (from 0) of `classes.txt`, which lists the detector's class names in the order they were first seen;
 * it only grows, is written atomically before any label that uses a new index, and is read back at start, so
 * indices stay the same across restarts.
 *
 * `zip()` streams the set as a zip (fflate): `classes.txt`, then each image and its label. A label is written
 * after its image, and only pairs whose label exists when the zip starts are included, so the zip never holds a
 * frame without its label.
 */
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Zip, ZipDeflate, ZipPassThrough } from 'fflate';
import type { PpeDetection } from '../../shared/ppe/rule.js';
import type { Logger } from '../logger.js';
import { removeStaleTemps, TEMP_PREFIX, writeFileAtomic } from '../storage/atomic.js';
import { privateDir } from '../storage/private-modes.js';

export const CLASSES_FILE = 'classes.txt';

/** A class name as one line of classes.txt (no line breaks). */
const asLine = (name: string) => name.replace(/[\r\n]+/g, ' ').trim();

const fraction = (v: number) => {
  const clamped = Math.min(1, Math.max(0, v));
  return Number(clamped.toFixed(6)).toString();
};

/** One YOLO label line: `index cx cy w h`, normalised to the image and clipped to it. */
export function yoloLine(index: number, bbox: PpeDetection['bbox'], width: number, height: number): string {
  const x1 = Math.min(width, Math.max(0, bbox.x1));
  const x2 = Math.min(width, Math.max(0, bbox.x2));
  const y1 = Math.min(height, Math.max(0, bbox.y1));
  const y2 = Math.min(height, Math.max(0, bbox.y2));
  return [
    index,
    fraction((x1 + x2) / 2 / width),
    fraction((y1 + y2) / 2 / height),
    fraction((x2 - x1) / width),
    fraction((y2 - y1) / height),
  ].join(' ');
}

export class PpeDataset {
  private classes: string[] = [];
  private readonly index = new Map<string, number>();
  /** classes.txt changes one at a time. */
  private classLock: Promise<unknown> = Promise.resolve();
  private imageCount = 0;

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  get images(): number {
    return this.imageCount;
  }

  async init(): Promise<void> {
    const imagesDir = path.join(this.dir, 'images');
    const labelsDir = path.join(this.dir, 'labels');
    await Promise.all([privateDir(imagesDir), privateDir(labelsDir)]);
    await Promise.all([removeStaleTemps(this.dir), removeStaleTemps(imagesDir), removeStaleTemps(labelsDir)]);
    try {
      const text = await fs.readFile(path.join(this.dir, CLASSES_FILE), 'utf8');
      for (const line of text.split('\n')) {
        const name = line.replace(/\r$/, '');
        if (name === '') continue;
        if (!this.index.has(name)) this.index.set(name, this.classes.length);
        // A repeated line still takes its index, so the indices of the lines after it stay what they were.
        this.classes.push(name);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    this.imageCount = (await this.labelIds()).length;
  }

  /** The index of each name, adding the new ones to classes.txt (on disk before this resolves). */
  private indicesOf(names: string[]): Promise<Map<string, number>> {
    const run = this.classLock.then(async () => {
      const fresh = [...new Set(names.map(asLine))].filter((n) => !this.index.has(n));
      if (fresh.length) {
        const next = [...this.classes, ...fresh];
        await writeFileAtomic(path.join(this.dir, CLASSES_FILE), `${next.join('\n')}\n`);
        for (const n of fresh) {
          this.index.set(n, this.classes.length);
          this.classes.push(n);
        }
      }
      return new Map(names.map((n) => [n, this.index.get(asLine(n))!]));
    });
    this.classLock = run.catch(() => {});
    return run;
  }

  /** Saves one frame and its labels. */
  async add(id: string, jpeg: Uint8Array, detections: readonly PpeDetection[], width: number, height: number): Promise<void> {
    const indices = await this.indicesOf(detections.map((d) => d.class_name));
    const lines = detections.map((d) => yoloLine(indices.get(d.class_name)!, d.bbox, width, height));
    await writeFileAtomic(path.join(this.dir, 'images', `${id}.jpg`), jpeg);
    await writeFileAtomic(path.join(this.dir, 'labels', `${id}.txt`), lines.length ? `${lines.join('\n')}\n` : '');
    this.imageCount++;
  }

  /** Ids of the frames whose label is written (their image was written first). */
  private async labelIds(): Promise<string[]> {
    const names = await fs.readdir(path.join(this.dir, 'labels'));
    return names
      .filter((n) => n.endsWith('.txt') && !n.startsWith(TEMP_PREFIX))
      .map((n) => n.slice(0, -4))
      .sort();
  }

  /** The set as a zip, streamed: classes.txt, images/<id>.jpg, labels/<id>.txt. */
  async zip(): Promise<ReadableStream<Uint8Array>> {
    const ids = await this.labelIds();
    // Read after the labels were listed: it holds every index they use (it only grows).
    const classes = await fs.readFile(path.join(this.dir, CLASSES_FILE)).catch(() => Buffer.alloc(0));
    const files: { name: string; file?: string; data?: Uint8Array; compress: boolean }[] = [
      { name: CLASSES_FILE, data: classes, compress: true },
    ];
    for (const id of ids) {
      files.push({ name: `images/${id}.jpg`, file: path.join(this.dir, 'images', `${id}.jpg`), compress: false });
      files.push({ name: `labels/${id}.txt`, file: path.join(this.dir, 'labels', `${id}.txt`), compress: true });
    }
    const log = this.log;
    let zip: Zip;
    let next = 0;
    return new ReadableStream<Uint8Array>({
      start(controller) {
        zip = new Zip((err, chunk, final) => {
          if (err) {
            controller.error(err);
            return;
          }
          if (chunk.length) controller.enqueue(chunk);
          if (final) controller.close();
        });
      },
      // One file per pull: the zip is never held in memory whole.
      async pull(controller) {
        if (next >= files.length) {
          zip.end();
          return;
        }
        const f = files[next++];
        const entry = f.compress ? new ZipDeflate(f.name, { level: 6 }) : new ZipPassThrough(f.name);
        zip.add(entry);
        try {
          if (f.data) entry.push(f.data, true);
          else {
            let pending: Buffer | null = null;
            for await (const piece of createReadStream(f.file!)) {
              if (pending) entry.push(pending);
              pending = piece as Buffer;
            }
            entry.push(pending ?? new Uint8Array(0), true);
          }
        } catch (err) {
          log.error(`ppe dataset: ${f.name} could not be read for the zip (${err instanceof Error ? err.message : String(err)})`);
          controller.error(err);
        }
      },
    });
  }
}
