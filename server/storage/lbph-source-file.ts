/**
 * training.lbph, the model as a training saves it (model-store.ts): a checksummed binary of our own, the histograms
 * sparse, fast to write and to read; training.yml is written from it afterwards. Written in pieces and read back in
 * chunks of a few MB, never whole.
 */
import { createHash } from 'node:crypto';
import type { LbphModel } from '../../shared/lbph/lbph.js';
import { decodeHistogram, encodeHistogram } from '../../shared/recognition/compact-model.js';
import type { LabelIds } from '../../shared/recognition/model-files.js';
import { closeFd, openNoFollow, readFd } from './model-fds.js';

/** The model as a training saved it (see the top of model-store.ts). */
export const LBPH_SOURCE_FILE = 'training.lbph';

/** What identifies a saved training.lbph. */
export interface SourceId {
  size: number;
  sha256: string;
}

// training.lbph: magic, u32 header length, JSON header padded to 4, the labels (int32), the histograms, sha256.
// Format 2 (written now) keeps each histogram as u32 length + its sparse form (encodeHistogram: lossless, about
// 8 KB of a dense histogram's 64 KB for a 100x100 face); format 1 (read still) kept them dense, float32.
const SOURCE_MAGIC = Buffer.from('LKLBPH\x00\x02', 'latin1');
const SOURCE_MAGIC_DENSE = Buffer.from('LKLBPH\x00\x01', 'latin1');
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** Sparse histograms are handed to the file writer in batches of about this many bytes (few writes). */
const SOURCE_BATCH = 1 << 20;

/** training.lbph's bytes in pieces. */
export function* sourcePieces(model: LbphModel, labelIds: LabelIds, id: { size: number; sha256: string }): Generator<Uint8Array> {
  if (!LITTLE_ENDIAN) throw new Error('training.lbph is written little-endian only');
  const bins = model.histograms[0]?.length ?? 0;
  const { radius, neighbors, gridX, gridY, threshold, faceAlignment } = model;
  const json = Buffer.from(
    JSON.stringify({
      radius,
      neighbors,
      gridX,
      gridY,
      // As text when not finite (JSON has no Infinity).
      threshold: Number.isFinite(threshold) ? threshold : String(threshold),
      faceAlignment: faceAlignment ?? null,
      faces: model.labels.length,
      bins,
      labelIds,
    }),
  );
  const head = Buffer.alloc(SOURCE_MAGIC.length + 4 + json.length + ((4 - ((json.length + SOURCE_MAGIC.length + 4) % 4)) % 4), 0x20);
  SOURCE_MAGIC.copy(head, 0);
  head.writeUInt32LE(json.length, SOURCE_MAGIC.length);
  json.copy(head, SOURCE_MAGIC.length + 4);
  const hash = createHash('sha256');
  let size = 0;
  const out = (b: Uint8Array) => {
    hash.update(b);
    size += b.length;
    return b;
  };
  yield out(head);
  yield out(new Uint8Array(Int32Array.from(model.labels).buffer));
  let batch: Uint8Array[] = [];
  let batched = 0;
  for (const h of model.histograms) {
    if (h.length !== bins) throw new Error(`training.lbph: histograms of ${h.length} and ${bins} bins`);
    const sparse = encodeHistogram(h);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(sparse.length);
    batch.push(length, sparse);
    batched += 4 + sparse.length;
    if (batched >= SOURCE_BATCH) {
      yield out(Buffer.concat(batch));
      batch = [];
      batched = 0;
    }
  }
  if (batched) yield out(Buffer.concat(batch));
  const digest = hash.digest();
  id.sha256 = digest.toString('hex');
  id.size = size + digest.length;
  yield digest;
}

/** Reads an open file from the start in chunks of a few MB, hashing what it hands out (all but the last 32 bytes). */
class ChunkedReader {
  readonly hash = createHash('sha256');
  /** Bytes handed out so far. */
  pos = 0;
  private chunk = Buffer.alloc(0);
  private at = 0;
  private filePos = 0;

  constructor(
    private readonly fd: number,
    private readonly end: number,
    private readonly fail: (why: string) => never,
  ) {}

  /** The next `bytes.length` bytes into `bytes`. */
  async into(bytes: Uint8Array): Promise<void> {
    if (this.pos + bytes.length > this.end) this.fail('shorter than its header says (torn?)');
    for (let done = 0; done < bytes.length; ) {
      if (this.at === this.chunk.length) await this.refill();
      const n = Math.min(bytes.length - done, this.chunk.length - this.at);
      bytes.set(this.chunk.subarray(this.at, this.at + n), done);
      this.at += n;
      done += n;
    }
    this.hash.update(bytes);
    this.pos += bytes.length;
  }

  private async refill(): Promise<void> {
    const size = Math.min(4 << 20, this.end - this.filePos);
    if (size <= 0) this.fail('truncated');
    const chunk = Buffer.allocUnsafe(size);
    for (let at = 0; at < size; ) {
      const { bytesRead } = await readFd(this.fd, chunk, at, size - at, this.filePos + at);
      if (bytesRead === 0) this.fail('truncated');
      at += bytesRead;
    }
    this.filePos += size;
    this.chunk = chunk;
    this.at = 0;
  }
}

/**
 * Reads training.lbph back (in chunks of a few MB: never the whole file in memory; each histogram its own array);
 * null when there is none. Throws naming the problem when it is not one whole file of ours.
 */
export async function readSource(file: string): Promise<{ model: LbphModel; labelIds: LabelIds; id: SourceId; mtime: Date } | null> {
  const opened = await openNoFollow(file);
  if (!opened) return null;
  const { fd, stat } = opened;
  const fail = (why: string): never => {
    throw new Error(`${LBPH_SOURCE_FILE}: ${why}`);
  };
  const reader = new ChunkedReader(fd, stat.size - 32, fail);
  try {
    if (stat.size < 32) fail('truncated');
    const pre = Buffer.alloc(SOURCE_MAGIC.length + 4);
    await reader.into(pre);
    const magic = pre.subarray(0, SOURCE_MAGIC.length);
    const dense = magic.equals(SOURCE_MAGIC_DENSE);
    if (!dense && !magic.equals(SOURCE_MAGIC)) fail('not a model file of this format');
    const jsonLength = pre.readUInt32LE(SOURCE_MAGIC.length);
    const json = Buffer.alloc(jsonLength + ((4 - ((pre.length + jsonLength) % 4)) % 4));
    await reader.into(json);
    const head = JSON.parse(json.toString('utf8', 0, jsonLength)) as {
      radius: number;
      neighbors: number;
      gridX: number;
      gridY: number;
      threshold: number | string;
      faceAlignment: string | null;
      faces: number;
      bins: number;
      labelIds: LabelIds;
    };
    if (dense && reader.pos + head.faces * 4 * (1 + head.bins) + 32 !== stat.size) fail('length does not match its header (torn?)');
    const labels = new Int32Array(head.faces);
    await reader.into(new Uint8Array(labels.buffer));
    // Each histogram its own buffer: views of one shared buffer would each be sent whole to a worker.
    const histograms: Float32Array[] = [];
    const length = Buffer.alloc(4);
    for (let i = 0; i < head.faces; i++) {
      if (dense) {
        const h = new Float32Array(head.bins);
        await reader.into(new Uint8Array(h.buffer));
        histograms.push(h);
        continue;
      }
      await reader.into(length);
      // A damaged length is refused before anything that size is allocated.
      const bytes = length.readUInt32LE(0);
      if (bytes > 11 + head.bins * 10 || reader.pos + bytes > stat.size - 32) fail(`histogram ${i}: ${bytes} bytes do not fit (torn?)`);
      const sparse = Buffer.alloc(bytes);
      await reader.into(sparse);
      try {
        histograms.push(decodeHistogram(sparse, head.bins));
      } catch (err) {
        fail(`histogram ${i}: ${(err as Error).message}`);
      }
    }
    if (reader.pos !== stat.size - 32) fail('length does not match its header (torn?)');
    const digest = Buffer.alloc(32);
    await readFd(fd, digest, 0, 32, reader.pos);
    const sha256 = reader.hash.digest();
    if (!sha256.equals(digest)) fail('checksum mismatch (torn or changed)');
    const model: LbphModel = {
      radius: head.radius,
      neighbors: head.neighbors,
      gridX: head.gridX,
      gridY: head.gridY,
      threshold: Number(head.threshold),
      histograms,
      labels,
      ...(head.faceAlignment ? { faceAlignment: head.faceAlignment } : {}),
    };
    return { model, labelIds: head.labelIds, id: { size: stat.size, sha256: sha256.toString('hex') }, mtime: stat.mtime };
  } finally {
    await closeFd(fd).catch(() => {});
  }
}
