/**
 * The compact form of the trained models for browsers (#27 section 2): one binary segment per person, so a device
 * that has a model fetches only the people a training added or changed. Not the YAML (about 118 KB per face):
 *
 *   segment  = "LKCS" u8:format u8:kind(1 lbph, 2 embedding) varint:nameBytes name(utf-8) body u32le:crc32
 *   lbph     = varint:samples, then per sample:                                                     (format 1)
 *                u8:0 (counts)  varint:cellPixels varint:nnz  nnz x varint:gap  nnz x varint:count
 *                u8:1 (float32) varint:nnz  nnz x varint:gap  nnz x f32le
 *   embedding= varint:dim varint:samples u8:dtype, then the values:
 *                dtype 0 (float32) samples*dim x f32le                                               (format 1)
 *                dtype 1 (float16) samples*dim x u16le, IEEE half, nearest (ties to even)            (format 2)
 *
 * OpenCV's histogram values are count * float32(1 / cellPixels) rounded to float32 (lbph.ts lbpHistogram), so
 * the counts and the cell's pixel count give back the very same float32 bits; a histogram for which they do not
 * (a model made elsewhere) is kept as its non-zero float32 values. Gaps are the distance from the previous
 * non-zero bin (all gaps first, then all values: it compresses better on the wire). Descriptors go as float16
 * (half the bytes): `npm run bench precision` (bench/RESULTS.md, "Descriptor precision in the browser model")
 * changed no decision on the real faces of either descriptor model nor on synthetic galleries of up to 10,000
 * people. A stored value moves by at most 2^-11 of itself (2^-25 when under 2^-14), so a distance by at most
 * about 2^-11 |x| (measured: under 1.3e-4): only a face that close to a threshold can be decided otherwise in the
 * browser than on the server, which keeps float32. int8 (one scale per descriptor) changed real decisions and is not used. A descriptor float16 cannot
 * hold (a value past 65504 or not finite, from a hand-made model) keeps float32.
 * A segment says its format: 1 for what format-1 readers read (LBPH, float32 descriptors: their bytes and
 * hashes are as before), 2 for float16 descriptors; the manifest's format_version is the newest in use, so an
 * older browser build (which reads only 1) falls back to the full model files instead of failing on them.
 * The crc32 catches a torn or altered segment; the server also names each segment by its sha256.
 *
 * The label ids are not in a segment (they change when a training adds someone); the model is assembled from
 * segments in the manifest's order, ids 0, 1, 2, ... in that order.
 */
import type { EmbeddingModel } from '../embedding/matcher.js';
import { fromHalfBits, toHalfBits } from '../embedding/quantise.js';
import type { LbphModel, LbphParams } from '../lbph/lbph.js';
import type { LabelIds } from './model-files.js';

export const COMPACT_SEGMENTS_URL = '/api/models/trained/compact/segments';
/** At most this many hashes per segments request (the URL stays a few KB). */
export const COMPACT_SEGMENTS_MAX = 200;

/** The newest segment format this build writes and reads (the manifest's format_version); it reads 1 as well. */
export const COMPACT_FORMAT = 2;
/** How the browser's copy holds descriptors (the server's own recognition keeps float32). */
export type CompactDescriptors = 'float32' | 'float16';
export const BROWSER_DESCRIPTORS: CompactDescriptors = 'float16';
const DTYPE: Record<CompactDescriptors, number> = { float32: 0, float16: 1 };
/** The largest finite float16. */
const HALF_MAX = 65504;
const MAGIC = [0x4c, 0x4b, 0x43, 0x53]; // "LKCS"
export type SegmentKind = 'lbph' | 'embedding';
const KIND_CODE: Record<SegmentKind, number> = { lbph: 1, embedding: 2 };

// ---------------------------------------------------------------- crc32 (IEEE, as zlib's)

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// ---------------------------------------------------------------- byte writer / reader

class Writer {
  private buf = new Uint8Array(1024);
  private view = new DataView(this.buf.buffer);
  length = 0;

  /** Room for n more bytes (grown once, not doubled piecemeal). */
  reserve(n: number): void {
    this.room(n);
  }

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.length++] = v;
  }

  varint(v: number): void {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new Error(`compact model: ${v} is not a u32`);
    this.room(5);
    while (v >= 0x80) {
      this.buf[this.length++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.length++] = v;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  f32(v: number): void {
    this.room(4);
    this.view.setFloat32(this.length, v, true);
    this.length += 4;
  }

  u16(v: number): void {
    this.room(2);
    this.view.setUint16(this.length, v, true);
    this.length += 2;
  }

  u32(v: number): void {
    this.room(4);
    this.view.setUint32(this.length, v, true);
    this.length += 4;
  }

  done(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

/** A segment that cannot be read: the message says what and where. */
export class CompactModelError extends Error {
  constructor(message: string) {
    super(`compact model: ${message}`);
    this.name = 'CompactModelError';
  }
}

class Reader {
  at = 0;
  private readonly view: DataView;
  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  private need(n: number): void {
    if (this.at + n > this.buf.length) throw new CompactModelError(`segment ends early (at byte ${this.at})`);
  }
  u8(): number {
    this.need(1);
    return this.buf[this.at++];
  }
  varint(): number {
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const b = this.u8();
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
    throw new CompactModelError(`varint too long at byte ${this.at}`);
  }
  bytes(n: number): Uint8Array {
    this.need(n);
    const out = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  f32(): number {
    this.need(4);
    const v = this.view.getFloat32(this.at, true);
    this.at += 4;
    return v;
  }
  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.at, true);
    this.at += 2;
    return v;
  }
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder('utf-8', { fatal: true });

function header(w: Writer, kind: SegmentKind, name: string, format = 1): void {
  for (const b of MAGIC) w.u8(b);
  w.u8(format);
  w.u8(KIND_CODE[kind]);
  const n = utf8.encode(name);
  w.varint(n.length);
  w.bytes(n);
}

function sealed(w: Writer): Uint8Array {
  const body = w.done();
  const out = new Uint8Array(body.length + 4);
  out.set(body);
  new DataView(out.buffer).setUint32(body.length, crc32(body), true);
  return out;
}

// ---------------------------------------------------------------- LBPH histograms

/** Indices of the last histogram's set bins (setBins fills it; reused, so encoding allocates little). */
let SET_BINS = new Int32Array(0);

/** Fills SET_BINS with h's set bins (a -0 counts as set: it is kept); their number, and whether one is a -0. */
function setBins(h: Float32Array): { n: number; negativeZero: boolean } {
  if (SET_BINS.length < h.length) SET_BINS = new Int32Array(h.length);
  const bits = new Uint32Array(h.buffer, h.byteOffset, h.length);
  let n = 0;
  let negativeZero = false;
  for (let i = 0; i < h.length; i++) {
    const b = bits[i];
    if (b === 0) continue;
    if (b === 0x80000000) negativeZero = true;
    SET_BINS[n++] = i;
  }
  return { n, negativeZero };
}

/** cellPixelsOf over the n set bins in SET_BINS (none a -0). */
function cellPixelsOfSet(h: Float32Array, n: number): number | null {
  let min = Number.POSITIVE_INFINITY;
  for (let j = 0; j < n; j++) if (h[SET_BINS[j]] < min) min = h[SET_BINS[j]];
  if (min === Number.POSITIVE_INFINITY) return null;
  for (let k = 1; k <= 8; k++) {
    const p = Math.round(k / min);
    if (p < 1 || p > 0xffffffff) continue;
    const scale = Math.fround(1 / p);
    let ok = true;
    for (let j = 0; j < n && ok; j++) {
      const v = h[SET_BINS[j]];
      const c = Math.round(v / scale);
      ok = c > 0 && Math.fround(c * scale) === v;
    }
    if (ok) return p;
  }
  return null;
}

/**
 * The cell's pixel count P such that every value is fround(count * fround(1 / P)) for a whole count, or null.
 * The smallest value is count k / P for a small k (almost always 1). A -0 is kept as a float32 (null).
 */
export function cellPixelsOf(h: Float32Array): number | null {
  const { n, negativeZero } = setBins(h);
  return negativeZero ? null : cellPixelsOfSet(h, n);
}

function writeHistogram(w: Writer, h: Float32Array): void {
  const { n, negativeZero } = setBins(h);
  const p = negativeZero ? null : cellPixelsOfSet(h, n);
  w.reserve(11 + n * 10);
  const gaps = (): void => {
    let prev = -1;
    for (let j = 0; j < n; j++) {
      w.varint(SET_BINS[j] - prev - 1);
      prev = SET_BINS[j];
    }
  };
  if (p !== null) {
    const scale = Math.fround(1 / p);
    w.u8(0);
    w.varint(p);
    w.varint(n);
    gaps();
    for (let j = 0; j < n; j++) w.varint(Math.round(h[SET_BINS[j]] / scale));
  } else {
    w.u8(1);
    w.varint(n);
    gaps();
    for (let j = 0; j < n; j++) w.f32(h[SET_BINS[j]]);
  }
}

function readHistogram(r: Reader, size: number): Float32Array {
  const mode = r.u8();
  const out = new Float32Array(size);
  const p = mode === 0 ? r.varint() : 0;
  if (mode > 1) throw new CompactModelError(`unknown histogram encoding ${mode}`);
  if (mode === 0 && p < 1) throw new CompactModelError('a histogram has no cell pixels');
  const nnz = r.varint();
  if (nnz > size) throw new CompactModelError(`a histogram has ${nnz} values for ${size} bins`);
  const idx = new Int32Array(nnz);
  let prev = -1;
  for (let k = 0; k < nnz; k++) {
    prev += r.varint() + 1;
    if (prev >= size) throw new CompactModelError(`a histogram bin ${prev} is past its ${size} bins`);
    idx[k] = prev;
  }
  if (mode === 0) {
    const scale = Math.fround(1 / p);
    for (let k = 0; k < nnz; k++) out[idx[k]] = r.varint() * scale; // the Float32Array store rounds, as lbpHistogram's
  } else {
    for (let k = 0; k < nnz; k++) out[idx[k]] = r.f32();
  }
  return out;
}

/**
 * One histogram alone in the sparse form above (no segment header or checksum: the files that keep histograms on
 * the server, training.lbph and the feature files, checksum themselves). Lossless: decodeHistogram gives back the
 * same float32 bits, in about a fifth of the bytes of the dense histogram for a 100x100 face.
 */
export function encodeHistogram(h: Float32Array): Uint8Array {
  const w = new Writer();
  writeHistogram(w, h);
  return w.done();
}

/** A histogram of `bins` bins from encodeHistogram's bytes (all of them); throws a CompactModelError otherwise. */
export function decodeHistogram(bytes: Uint8Array, bins: number): Float32Array {
  const r = new Reader(bytes);
  const h = readHistogram(r, bins);
  if (r.at !== bytes.length) throw new CompactModelError(`${bytes.length - r.at} bytes after a histogram`);
  return h;
}

/** Bins per histogram for these parameters. */
export function lbphBins(p: Pick<LbphParams, 'gridX' | 'gridY' | 'neighbors'>): number {
  return p.gridX * p.gridY * 2 ** p.neighbors;
}

/** One person's LBPH histograms as a segment. */
export function encodeLbphSegment(name: string, histograms: readonly Float32Array[]): Uint8Array {
  const w = new Writer();
  header(w, 'lbph', name);
  w.varint(histograms.length);
  for (const h of histograms) writeHistogram(w, h);
  return sealed(w);
}

/** Whether float16 holds every value (finite, within its range). */
function halfFits(values: Float32Array): boolean {
  for (let i = 0; i < values.length; i++) if (!(Math.abs(values[i]) <= HALF_MAX)) return false;
  return true;
}

/**
 * One person's descriptors (`dim` each) as a segment, in `precision` (float32: format 1, as before; float16:
 * format 2, or float32 where float16 cannot hold a value).
 */
export function encodeEmbeddingSegment(
  name: string,
  dim: number,
  descriptors: Float32Array,
  precision: CompactDescriptors = 'float32',
): Uint8Array {
  if (dim < 1 || descriptors.length % dim !== 0)
    throw new Error(`compact model: ${descriptors.length} values are not whole ${dim}-d descriptors`);
  const dtype = precision === 'float16' && halfFits(descriptors) ? 'float16' : 'float32';
  const w = new Writer();
  header(w, 'embedding', name, dtype === 'float16' ? 2 : 1);
  w.varint(dim);
  w.varint(descriptors.length / dim);
  w.u8(DTYPE[dtype]);
  if (dtype === 'float16') for (let i = 0; i < descriptors.length; i++) w.u16(toHalfBits(descriptors[i]));
  else for (let i = 0; i < descriptors.length; i++) w.f32(descriptors[i]);
  return sealed(w);
}

export interface DecodedSegment {
  kind: SegmentKind;
  name: string;
  /** LBPH: the histograms (each `bins` values). */
  histograms?: Float32Array[];
  /** Embedding: dim and the descriptors one after the other (float16 ones decoded to float32). */
  dim?: number;
  descriptors?: Float32Array;
  /** Embedding: how the segment held them. */
  precision?: CompactDescriptors;
}

/** Reads a segment, checking its crc32 first. `bins`: the LBPH model's histogram size (needed for lbph). */
export function decodeSegment(bytes: Uint8Array, bins?: number): DecodedSegment {
  if (bytes.length < 10) throw new CompactModelError(`a segment of ${bytes.length} bytes is too short`);
  const body = bytes.subarray(0, bytes.length - 4);
  const stored = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(bytes.length - 4, true);
  if (crc32(body) !== stored) throw new CompactModelError('a segment fails its checksum (torn or altered)');
  const r = new Reader(body);
  for (const b of MAGIC) if (r.u8() !== b) throw new CompactModelError('not a compact model segment (bad magic)');
  const format = r.u8();
  if (format < 1 || format > COMPACT_FORMAT)
    throw new CompactModelError(`format ${format} is not one this build reads (1 to ${COMPACT_FORMAT})`);
  const code = r.u8();
  const kind = code === 1 ? 'lbph' : code === 2 ? 'embedding' : null;
  if (!kind) throw new CompactModelError(`unknown segment kind ${code}`);
  let name: string;
  try {
    name = fromUtf8.decode(r.bytes(r.varint()));
  } catch (err) {
    if (err instanceof CompactModelError) throw err;
    throw new CompactModelError('a segment name is not UTF-8');
  }
  let out: DecodedSegment;
  if (kind === 'lbph') {
    if (!bins) throw new CompactModelError('an LBPH segment needs the model histogram size');
    const n = r.varint();
    const histograms: Float32Array[] = [];
    for (let i = 0; i < n; i++) histograms.push(readHistogram(r, bins));
    out = { kind, name, histograms };
  } else {
    const dim = r.varint();
    const n = r.varint();
    const dtype = r.u8();
    // float16 came with format 2: a format-1 segment holding it is not one a writer made.
    const precision = dtype === 0 ? 'float32' : dtype === 1 && format >= 2 ? 'float16' : null;
    if (!precision) throw new CompactModelError(`descriptor type ${dtype} is not one this build reads in format ${format}`);
    const size = precision === 'float16' ? 2 : 4;
    if (dim < 1 || n * dim * size > body.length) throw new CompactModelError(`${n} descriptors of ${dim} values do not fit the segment`);
    const descriptors = new Float32Array(n * dim);
    if (precision === 'float16') for (let i = 0; i < descriptors.length; i++) descriptors[i] = fromHalfBits(r.u16());
    else for (let i = 0; i < descriptors.length; i++) descriptors[i] = r.f32();
    out = { kind, name, dim, descriptors, precision };
  }
  if (r.at !== body.length) throw new CompactModelError(`${body.length - r.at} bytes after the segment's data`);
  return out;
}

// ---------------------------------------------------------------- whole models <-> per-person segments

/** A model's people in label-id order, each with the indices of their samples (in the model's order). */
function people(labels: Int32Array, labelIds: LabelIds): { name: string; samples: number[] }[] {
  const byId = new Map<number, { name: string; samples: number[] }>();
  for (const [name, id] of Object.entries(labelIds)) byId.set(id, { name, samples: [] });
  labels.forEach((id, i) => {
    const p = byId.get(id);
    if (!p) throw new Error(`compact model: label id ${id} has no name`);
    p.samples.push(i);
  });
  return [...byId.entries()].sort((a, b) => a[0] - b[0]).flatMap(([, p]) => (p.samples.length ? [p] : []));
}

export interface PersonSegment {
  name: string;
  samples: number;
  bytes: Uint8Array;
}

export function lbphSegments(model: LbphModel, labelIds: LabelIds): PersonSegment[] {
  return people(model.labels, labelIds).map((p) => ({
    name: p.name,
    samples: p.samples.length,
    bytes: encodeLbphSegment(
      p.name,
      p.samples.map((i) => model.histograms[i]),
    ),
  }));
}

/** The embedding model's people as segments, descriptors in `precision` (the browser's: float16). */
export function embeddingSegments(
  model: EmbeddingModel,
  labelIds: LabelIds,
  precision: CompactDescriptors = BROWSER_DESCRIPTORS,
): PersonSegment[] {
  const d = model.dim;
  return people(model.labels, labelIds).map((p) => {
    const out = new Float32Array(p.samples.length * d);
    p.samples.forEach((i, k) => {
      out.set(model.descriptors.subarray(i * d, i * d + d), k * d);
    });
    return { name: p.name, samples: p.samples.length, bytes: encodeEmbeddingSegment(p.name, d, out, precision) };
  });
}

/** The LBPH model's own fields (everything but its samples), as the manifest carries them. */
export type LbphHeader = LbphParams & { faceAlignment?: string };

/** An LBPH model from its header and its people's segments, in order (label ids 0, 1, ...). */
export function assembleLbph(head: LbphHeader, segments: readonly Uint8Array[]): { model: LbphModel; labelIds: LabelIds } {
  const bins = lbphBins(head);
  const histograms: Float32Array[] = [];
  const labels: number[] = [];
  const labelIds: LabelIds = {};
  segments.forEach((bytes, id) => {
    const s = decodeSegment(bytes, bins);
    if (s.kind !== 'lbph') throw new CompactModelError(`segment ${id} (${s.name}) is not an LBPH segment`);
    if (s.name in labelIds) throw new CompactModelError(`${s.name} has two segments`);
    labelIds[s.name] = id;
    for (const h of s.histograms ?? []) {
      histograms.push(h);
      labels.push(id);
    }
  });
  const { radius, neighbors, gridX, gridY, threshold, faceAlignment } = head;
  const model: LbphModel = {
    radius,
    neighbors,
    gridX,
    gridY,
    threshold,
    histograms,
    labels: Int32Array.from(labels),
    labelsInfo: Object.entries(labelIds).map(([value, label]) => ({ label, value })),
    ...(faceAlignment ? { faceAlignment } : {}),
  };
  return { model, labelIds };
}

/** An embedding model from its people's segments, in order (label ids 0, 1, ...). */
export function assembleEmbedding(dim: number, segments: readonly Uint8Array[]): { model: EmbeddingModel; labelIds: LabelIds } {
  const parts: Float32Array[] = [];
  const labels: number[] = [];
  const labelIds: LabelIds = {};
  segments.forEach((bytes, id) => {
    const s = decodeSegment(bytes);
    if (s.kind !== 'embedding' || !s.descriptors) throw new CompactModelError(`segment ${id} (${s.name}) is not an embedding segment`);
    if (s.dim !== dim) throw new CompactModelError(`${s.name}'s descriptors have ${s.dim} values, the model's ${dim}`);
    if (s.name in labelIds) throw new CompactModelError(`${s.name} has two segments`);
    labelIds[s.name] = id;
    parts.push(s.descriptors);
    for (let i = 0; i < s.descriptors.length / dim; i++) labels.push(id);
  });
  const descriptors = new Float32Array(labels.length * dim);
  let at = 0;
  for (const p of parts) {
    descriptors.set(p, at);
    at += p.length;
  }
  return { model: { dim, descriptors, labels: Int32Array.from(labels) }, labelIds };
}
