import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../test/helpers/seeded-random.js';
import { type EmbeddingModel, rankEmbedding } from '../embedding/matcher.js';
import type { GrayImage } from '../image/types.js';
import { LBPH_DEFAULTS, type LbphModel, rankLbph } from '../lbph/lbph.js';
import { atPrecision, toHalfBits } from '../embedding/quantise.js';
import {
  assembleEmbedding,
  COMPACT_FORMAT,
  crc32,
  assembleLbph,
  CompactModelError,
  cellPixelsOf,
  decodeSegment,
  embeddingSegments,
  encodeEmbeddingSegment,
  encodeLbphSegment,
  lbphBins,
  lbphSegments,
} from './compact-model.js';
import { realisticDescriptors, realisticHistograms } from './compact-model-data.js';

const FIX = join(process.cwd(), 'test/fixtures/opencv/lbph');
const expected = JSON.parse(readFileSync(join(FIX, 'expected.json'), 'utf8')) as {
  histograms: Record<string, { size: number; idx: number[]; val: number[] }>;
  altParams: { radius: number; neighbors: number; gridX: number; gridY: number };
  altHistograms: Record<string, { size: number; idx: number[]; val: number[] }>;
};

function dense(h: { size: number; idx: number[]; val: number[] }): Float32Array {
  const out = new Float32Array(h.size);
  h.idx.forEach((i, k) => {
    out[i] = h.val[k];
  });
  return out;
}

function sameBits(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

let crops: GrayImage[] = [];
beforeAll(async () => {
  const files = readdirSync(FIX).filter((f) => f.endsWith('.png'));
  crops = await Promise.all(
    files.map(async (f) => {
      const { data, info } = await sharp(join(FIX, f)).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
      return { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
    }),
  );
});

describe('compact LBPH segments', () => {
  it("give back OpenCV's own histograms bit for bit, as counts", () => {
    for (const [set, params] of [
      [expected.histograms, LBPH_DEFAULTS],
      [expected.altHistograms, expected.altParams],
    ] as const) {
      const hs = Object.values(set).map(dense);
      for (const h of hs) expect(cellPixelsOf(h)).not.toBeNull();
      const seg = encodeLbphSegment('someone', hs);
      const back = decodeSegment(seg, lbphBins(params));
      expect(back.name).toBe('someone');
      expect(back.histograms?.length).toBe(hs.length);
      expect(hs.every((h, i) => sameBits(back.histograms![i], h))).toBe(true);
    }
  });

  it('give back every fixture crop jittered 300 times bit for bit', () => {
    const hs = realisticHistograms(crops, 300, seededRandom(7));
    const back = decodeSegment(encodeLbphSegment('x', hs), lbphBins(LBPH_DEFAULTS)).histograms!;
    let exact = 0;
    hs.forEach((h, i) => {
      if (sameBits(back[i], h)) exact++;
    });
    expect(exact).toBe(300);
  });

  it('keep a histogram that is not counts (a model made elsewhere) as float32, bit for bit', () => {
    const random = seededRandom(3);
    const h = new Float32Array(lbphBins(LBPH_DEFAULTS));
    for (let i = 0; i < h.length; i += 7) h[i] = random() * 0.3;
    h[5] = -0;
    expect(cellPixelsOf(h)).toBeNull();
    const back = decodeSegment(encodeLbphSegment('y', [h]), h.length).histograms![0];
    expect(sameBits(back, h)).toBe(true);
  });

  it('refuse a torn or altered segment, another format and a short one, in words', () => {
    const seg = encodeLbphSegment('z', realisticHistograms(crops, 2, seededRandom(1)));
    const altered = seg.slice();
    altered[20] ^= 1;
    expect(() => decodeSegment(altered, 16384)).toThrow(/checksum/);
    expect(() => decodeSegment(seg.subarray(0, seg.length - 9), 16384)).toThrow(CompactModelError);
    expect(() => decodeSegment(new Uint8Array(4), 16384)).toThrow(/too short/);
  });
});

describe('compact models', () => {
  it('an LBPH model split per person and assembled again ranks every query the same', () => {
    const random = seededRandom(11);
    const people = 20;
    const hs = realisticHistograms(crops, people * 3, random);
    // Ids not in name order and not from 0, as a trained model may have them.
    const labelIds = Object.fromEntries(Array.from({ length: people }, (_, p) => [`person-${people - p}`, p * 2 + 5]));
    const model: LbphModel = {
      ...LBPH_DEFAULTS,
      faceAlignment: 'eyes-v1',
      histograms: hs,
      labels: Int32Array.from(hs, (_, i) => Math.floor(i / 3) * 2 + 5),
    };
    const segments = lbphSegments(model, labelIds);
    expect(segments.map((s) => s.samples)).toEqual(Array(people).fill(3));
    const { model: back, labelIds: ids } = assembleLbph(
      model,
      segments.map((s) => s.bytes),
    );
    expect(back.faceAlignment).toBe('eyes-v1');
    const nameOf = (ids: Record<string, number>) => new Map(Object.entries(ids).map(([n, i]) => [i, n]));
    const before = nameOf(labelIds);
    const after = nameOf(ids);
    for (const q of realisticHistograms(crops, 40, random)) {
      const a = rankLbph(model, q, 5).map((r) => [before.get(r.labelId), r.distance]);
      const b = rankLbph(back, q, 5).map((r) => [after.get(r.labelId), r.distance]);
      expect(b).toEqual(a);
    }
  });

  it('an embedding model split per person and assembled again is the same float32 descriptors, when asked for float32', () => {
    const random = seededRandom(5);
    const d = realisticDescriptors(30, 3, 128, random);
    const model: EmbeddingModel = { dim: 128, descriptors: d, labels: Int32Array.from({ length: 90 }, (_, i) => Math.floor(i / 3)) };
    const labelIds = Object.fromEntries(Array.from({ length: 30 }, (_, p) => [`p${p}`, p]));
    const { model: back } = assembleEmbedding(
      128,
      embeddingSegments(model, labelIds, 'float32').map((s) => s.bytes),
    );
    expect(sameBits(back.descriptors, d)).toBe(true);
    expect([...back.labels]).toEqual([...model.labels]);
    const q = realisticDescriptors(1, 1, 128, random);
    expect(rankEmbedding(back, q)).toEqual(rankEmbedding(model, q));
  });

  it("the browser's embedding segments are float16 (format 2): half the bytes, each value the nearest half", () => {
    const random = seededRandom(6);
    const d = realisticDescriptors(30, 3, 128, random);
    const model: EmbeddingModel = { dim: 128, descriptors: d, labels: Int32Array.from({ length: 90 }, (_, i) => Math.floor(i / 3)) };
    const labelIds = Object.fromEntries(Array.from({ length: 30 }, (_, p) => [`p${p}`, p]));
    const half = embeddingSegments(model, labelIds);
    const full = embeddingSegments(model, labelIds, 'float32');
    expect(half[0].bytes[4]).toBe(2);
    expect(full[0].bytes[4]).toBe(1);
    half.forEach((s, i) => {
      expect(s.bytes.length).toBe(full[i].bytes.length - 3 * 128 * 2);
    });
    expect(decodeSegment(half[0].bytes).precision).toBe('float16');
    const { model: back } = assembleEmbedding(
      128,
      half.map((s) => s.bytes),
    );
    expect(sameBits(back.descriptors, atPrecision(d, 128, 'float16'))).toBe(true);
    // At most half an ulp of a half: 2^-11 of the value, or 2^-25 for a value under 2^-14 (a subnormal half).
    let over = 0;
    d.forEach((v, i) => {
      if (Math.abs(back.descriptors[i] - v) > Math.max(2 ** -11 * Math.abs(v), 2 ** -25)) over++;
    });
    expect(over).toBe(0);
  });

  it('float32 segments are byte for byte what format 1 wrote, and a stored format-1 segment still decodes', () => {
    // Made by the format-1 encoder (commit 86c84f3), values past float16's range included.
    const v1 = Buffer.from('4c4b43530102047a6fc3ab0402000000003e000080bd9a99993e82a87bb70ad7233ccdcc4c3e333333bf00208047eeff3a91', 'hex');
    const values = new Float32Array([0.125, -0.0625, 0.3, -1.5e-5, 0.01, 0.2, -0.7, 65600]);
    const back = decodeSegment(new Uint8Array(v1));
    expect(back).toMatchObject({ kind: 'embedding', name: 'zoë', dim: 4, precision: 'float32' });
    expect(sameBits(back.descriptors!, values)).toBe(true);
    expect(Buffer.from(encodeEmbeddingSegment('zoë', 4, values))).toEqual(v1);
    // float16 cannot hold 65600: that person's segment stays float32 (format 1), exact.
    expect(Buffer.from(encodeEmbeddingSegment('zoë', 4, values, 'float16'))).toEqual(v1);
    expect(assembleEmbedding(4, [new Uint8Array(v1)]).model.descriptors).toEqual(values);
  });

  it('refuse float16 in a format-1 segment and a format from a newer build, in words', () => {
    const half = encodeEmbeddingSegment('a', 2, new Float32Array([0.5, -0.25]), 'float16');
    expect([...half.subarray(half.length - 8, half.length - 4)]).toEqual([toHalfBits(0.5) & 0xff, toHalfBits(0.5) >> 8, 0x00, 0xb4]);
    const reseal = (bytes: Uint8Array, at: number, value: number) => {
      const out = bytes.slice();
      out[at] = value;
      new DataView(out.buffer).setUint32(out.length - 4, crc32(out.subarray(0, out.length - 4)), true);
      return out;
    };
    expect(() => decodeSegment(reseal(half, 4, 1))).toThrow(/descriptor type 1 is not one this build reads in format 1/);
    expect(() => decodeSegment(reseal(half, 4, COMPACT_FORMAT + 1))).toThrow(/format 3 is not one this build reads/);
    const altered = half.slice();
    altered[half.length - 6] ^= 1;
    expect(() => decodeSegment(altered)).toThrow(/checksum/);
  });

  it('refuse segments of the wrong kind, size or a person twice', () => {
    const e = encodeEmbeddingSegment('a', 4, new Float32Array(8));
    expect(() => assembleEmbedding(8, [e])).toThrow(/4 values/);
    expect(() => assembleEmbedding(4, [e, e])).toThrow(/two segments/);
    expect(() => assembleLbph(LBPH_DEFAULTS, [e])).toThrow(/not an LBPH segment/);
  });

  // The figures of #27 section 2 (targets: 1,000 people x 3 photos <= 20 MB LBPH, <= 4 MB embedding, gzipped).
  it('1,000 people x 3 photos fit the wire targets', () => {
    const random = seededRandom(2026);
    const people = 1000;
    const hs = realisticHistograms(crops, people * 3, random);
    const d = realisticDescriptors(people, 3, 128, random);
    let lbphRaw = 0;
    let lbphGz = 0;
    let embRaw = 0;
    let embGz = 0;
    let halfRaw = 0;
    let halfGz = 0;
    for (let p = 0; p < people; p++) {
      const seg = encodeLbphSegment(`person-${p}`, hs.slice(p * 3, p * 3 + 3));
      lbphRaw += seg.length;
      lbphGz += gzipSync(seg).length;
      const e = encodeEmbeddingSegment(`person-${p}`, 128, d.subarray(p * 384, p * 384 + 384));
      embRaw += e.length;
      embGz += gzipSync(e).length;
      const h = encodeEmbeddingSegment(`person-${p}`, 128, d.subarray(p * 384, p * 384 + 384), 'float16');
      halfRaw += h.length;
      halfGz += gzipSync(h).length;
    }
    const yaml = hs.reduce((n, h) => n + h.length, 0) * 7; // at least 7 characters per value in training.yml
    console.log(
      `compact model, 1,000 people x 3: LBPH ${(lbphRaw / 1e6).toFixed(2)} MB (${(lbphGz / 1e6).toFixed(2)} MB gzipped per segment; ` +
        `training.yml over ${(yaml / 1e6).toFixed(0)} MB), embedding 128-d float32 ${(embRaw / 1e6).toFixed(2)} MB (${(embGz / 1e6).toFixed(2)} MB gzipped), ` +
        `float16 ${(halfRaw / 1e6).toFixed(2)} MB (${(halfGz / 1e6).toFixed(2)} MB gzipped)`,
    );
    expect(halfGz).toBeLessThan(embGz * 0.6);
    expect(lbphGz).toBeLessThanOrEqual(20e6);
    expect(embGz).toBeLessThanOrEqual(4e6);
  });
});
