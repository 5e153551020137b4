import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LBPH_DEFAULTS } from '../lbph.js';
import { lbphYamlBytes, lbphYamlChunks, readLbphYaml, readLbphYamlStream, writeLbphYaml } from '../opencv-yaml.js';
import { flowStart, PackingScanner } from './packed.js';
import { parseOpenCvYaml, parsePacked } from './parser.js';

const FIX = join(process.cwd(), 'test/fixtures/opencv/lbph');
const expected = JSON.parse(readFileSync(join(FIX, 'expected.json'), 'utf8')) as { trainingYml: string };
const opencvYml = gunzipSync(readFileSync(join(FIX, expected.trainingYml))).toString('utf8');

/** The text cut at pseudo-random places, down to single characters. */
function cut(text: string, seed: number, max: number): string[] {
  const pieces: string[] = [];
  let s = seed;
  for (let at = 0; at < text.length; ) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const n = 1 + (s % max);
    pieces.push(text.slice(at, at + n));
    at += n;
  }
  return pieces;
}

const small = `%YAML:1.0
---
# a comment
opencv_lbphfaces:
   threshold: 0.
   radius: 1
   neighbors: 2
   grid_x: 1
   grid_y: 1
   histograms:
      - !!opencv-matrix
         rows: 1
         cols: 4
         dt: f
         data: [ 5.00000000e-01,
             .25, 0., 2.5e-01 ]
   labels: !!opencv-matrix
      rows: 1
      cols: 1
      dt: i
      data: [ 012 ]
   labelsInfo: [ { label: 10, value: "ten" } ]
`;

describe('reading training.yml in pieces', () => {
  it('gives the same model wherever the pieces are cut (OpenCV file, CRLF, comments, flow maps)', async () => {
    for (const text of [opencvYml, small, small.replace(/\n/g, '\r\n')]) {
      const whole = readLbphYaml(text);
      for (const [seed, max] of [
        [1, 1],
        [7, 13],
        [42, 4096],
        [3, 200_000],
      ]) {
        const back = await readLbphYamlStream(cut(text, seed, max));
        expect(back).toEqual(whole);
      }
    }
    // Bytes, cut inside multi-byte characters too.
    const bytes = new TextEncoder().encode(small.replace('"ten"', '"tén ✓"'));
    const pieces = Array.from({ length: Math.ceil(bytes.length / 5) }, (_, i) => bytes.subarray(i * 5, i * 5 + 5));
    expect((await readLbphYamlStream(pieces)).labelsInfo).toEqual([{ label: 10, value: 'tén ✓' }]);
  });

  it('writes in pieces that join to the one-string text, and reads them back', async () => {
    const model = {
      ...LBPH_DEFAULTS,
      histograms: Array.from({ length: 40 }, (_, i) => Float32Array.from({ length: 16384 }, (_, k) => ((k * 7 + i) % 13) / 144)),
      labels: Int32Array.from({ length: 40 }, (_, i) => i % 5),
      labelsInfo: [{ label: 0, value: 'ada' }],
    };
    const pieces = [...lbphYamlChunks(model)];
    expect(pieces.length).toBeGreaterThan(5);
    for (const p of pieces) {
      expect(p.length).toBeLessThanOrEqual(1 << 20);
      expect(p.endsWith('\n')).toBe(true); // whole lines: a multi-byte name is never cut
    }
    expect(pieces.join('')).toBe(writeLbphYaml(model));
    const bytes = [...lbphYamlBytes({ ...model, labelsInfo: [{ label: 0, value: 'tén ✓' }] })];
    expect(Buffer.concat(bytes).toString('utf8')).toBe(writeLbphYaml({ ...model, labelsInfo: [{ label: 0, value: 'tén ✓' }] }));
    const back = await readLbphYamlStream(pieces);
    expect(back.histograms).toEqual(model.histograms);
    expect([...back.labels]).toEqual([...model.labels]);
  });

  it('keeps the long number sequences out of the text it parses, and puts them back', () => {
    const scanner = new PackingScanner();
    for (const piece of cut(opencvYml, 5, 1000)) scanner.push(piece);
    const packed = scanner.end();
    expect(packed.skeleton.length).toBeLessThan(opencvYml.length / 50);
    expect(packed.seqs.length).toBeGreaterThan(1);
    const root = parsePacked(packed);
    const plain = parseOpenCvYaml(opencvYml);
    // The same tree, the sequences packed: integers exactly, the rest as float32.
    const lbph = (v: unknown) =>
      (v as { entries: Map<string, unknown> }).entries.get('opencv_lbphfaces') as { entries: Map<string, unknown> };
    const labels = (v: unknown) =>
      (lbph(v).entries.get('labels') as { entries: Map<string, { items: number[]; packed?: Float64Array }> }).entries.get('data');
    expect([...(labels(root)?.packed ?? [])]).toEqual(labels(plain)?.items);
  });

  it('leaves anything unusual to the ordinary parser, with its errors and line numbers', () => {
    const odd = small.replace('[ 012 ]', '[ 012 # a comment\n ]').replace('labelsInfo: [ {', 'other: [ "q", [1] ]\n   labelsInfo: [ {');
    expect(readLbphYaml(odd).labels).toEqual(Int32Array.from([10]));
    // A bad number in a packed sequence names its line, and so does an error after packed lines.
    expect(() => readLbphYaml(small.replace('.25,', '.2.5,'))).toThrow(/invalid number "\.2\.5" \(line 16\)/);
    const after = small.replace('      rows: 1\n      cols: 1', '      rows: 1\n     cols: 1');
    expect(() => readLbphYaml(after)).toThrow(/\(line 19\)/);
    expect(() => parseOpenCvYaml(after)).toThrow(/\(line 19\)/);
  });

  it('finds where a flow sequence opens, and only there', () => {
    expect(flowStart('   data: [ 1, 2 ]\n')).toBe(9);
    expect(flowStart('- [ 1 ]\n')).toBe(2);
    expect(flowStart('   x: !!tag [ 1 ]\n')).toBe(12);
    expect(flowStart('   - key: [\n')).toBe(10);
    expect(flowStart('   key: a[1]\n')).toBe(-1);
    expect(flowStart('   key:[1]\n')).toBe(-1);
    expect(flowStart('   "key": [1]\n')).toBe(-1);
    expect(flowStart('   # key: [1]\n')).toBe(-1);
    expect(flowStart('   key: { a: [1] }\n')).toBe(-1);
  });
});
