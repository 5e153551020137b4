import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import type { GrayImage } from '../image/types.js';
import { predictLbph, trainLbph, type LbphModel } from './lbph.js';
import { parseOpenCvYaml, readLbphYaml, writeLbphYaml } from './opencv-yaml.js';

const FIX = join(process.cwd(), 'test/fixtures/opencv/lbph');
const PYTHON = '/usr/bin/python3';

interface Expected {
  train: { file: string; label: number }[];
  queries: { file: string; label: number; predicted: number; distance: number }[];
  trainingYml: string;
}
const expected = JSON.parse(readFileSync(join(FIX, 'expected.json'), 'utf8')) as Expected;
const opencvYml = gunzipSync(readFileSync(join(FIX, expected.trainingYml))).toString('utf8');

const tmp = mkdtempSync(join(tmpdir(), 'lookout-lbph-yaml-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function loadGray(file: string): Promise<GrayImage> {
  const { data, info } = await sharp(join(FIX, file)).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

/** Runs Python with cv2; the script gets argv and prints JSON. */
function python(script: string, ...args: string[]): unknown {
  const r = spawnSync(PYTHON, ['-c', script, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`python failed (${r.status}): ${r.stderr || r.error}`);
  return JSON.parse(r.stdout);
}

/** Deterministic xorshift32 stream in [0, 1). */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

describe("reading OpenCV's training.yml", () => {
  const model = readLbphYaml(opencvYml);

  it('gets the parameters, histograms, labels and label names', () => {
    expect(model).toMatchObject({ radius: 1, neighbors: 8, gridX: 8, gridY: 8, threshold: Number.MAX_VALUE });
    expect(model.histograms).toHaveLength(expected.train.length);
    for (const h of model.histograms) expect(h.length).toBe(8 * 8 * 256);
    expect([...model.labels]).toEqual(expected.train.map((t) => t.label));
    expect(model.labelsInfo?.[0]).toEqual({ label: 0, value: 'person 0 (sample1.jpg)' });
  });

  it('holds the same histograms Lookout computes from the training crops', async () => {
    const ours = trainLbph(
      await Promise.all(expected.train.map((t) => loadGray(t.file))),
      expected.train.map((t) => t.label),
    );
    model.histograms.forEach((h, i) => {
      expect(Buffer.from(h.buffer).equals(Buffer.from(ours.histograms[i].buffer))).toBe(true);
    });
  });

  it('predicts every query exactly as OpenCV did', async () => {
    for (const q of expected.queries) {
      const r = predictLbph(model, await loadGray(q.file));
      expect(r, q.file).toEqual({ label: q.predicted, distance: q.distance });
    }
  });

  it('writes it back byte for byte as OpenCV wrote it', () => {
    expect(writeLbphYaml(model)).toBe(opencvYml);
  });
});

describe("OpenCV reading Lookout's training.yml", () => {
  it('predicts the same labels and distances as Lookout', async () => {
    const model = trainLbph(
      await Promise.all(expected.train.map((t) => loadGray(t.file))),
      expected.train.map((t) => t.label),
    );
    model.labelsInfo = [{ label: 3, value: 'Zoë "the third"' }];
    const path = join(tmp, 'training.yml');
    writeFileSync(path, writeLbphYaml(model));
    const files = expected.queries.map((q) => join(FIX, q.file));
    const theirs = python(
      `import sys, json, cv2
cv2.setNumThreads(1)
r = cv2.face.LBPHFaceRecognizer_create()
r.read(sys.argv[1])
out = [list(r.predict(cv2.imread(f, cv2.IMREAD_GRAYSCALE))) for f in sys.argv[2:]]
print(json.dumps({'pred': out, 'info': r.getLabelInfo(3), 'n': len(r.getHistograms())}))`,
      path,
      ...files,
    ) as { pred: [number, number][]; info: string; n: number };
    expect(theirs.n).toBe(model.histograms.length);
    expect(theirs.info).toBe('Zoë "the third"');
    let maxRel = 0;
    for (let i = 0; i < expected.queries.length; i++) {
      const ours = predictLbph(model, await loadGray(expected.queries[i].file));
      const [label, distance] = theirs.pred[i];
      expect(label).toBe(ours.label);
      maxRel = Math.max(maxRel, Math.abs(distance - ours.distance) / distance);
      expect(distance).toBe(ours.distance);
    }
    expect(maxRel).toBeLessThan(0.01);
  });

  it("reads a model that carries Lookout's face alignment key, which Lookout reads back", async () => {
    const model = trainLbph(
      await Promise.all(expected.train.map((t) => loadGray(t.file))),
      expected.train.map((t) => t.label),
    );
    model.faceAlignment = 'eye-tilt-v1';
    const path = join(tmp, 'aligned.yml');
    const text = writeLbphYaml(model);
    expect(text).toMatch(/\n {3}lookout_face_alignment: eye-tilt-v1\n$/);
    writeFileSync(path, text);
    const theirs = python(
      `import sys, json, cv2
r = cv2.face.LBPHFaceRecognizer_create()
r.read(sys.argv[1])
print(json.dumps({'n': len(r.getHistograms()), 'p': list(r.predict(cv2.imread(sys.argv[2], cv2.IMREAD_GRAYSCALE)))}))`,
      path,
      join(FIX, expected.queries[0].file),
    ) as { n: number; p: [number, number] };
    expect(theirs.n).toBe(model.histograms.length);
    const ours = predictLbph(model, await loadGray(expected.queries[0].file));
    expect(theirs.p).toEqual([ours.label, ours.distance]);
    expect(readLbphYaml(text).faceAlignment).toBe('eye-tilt-v1');
    expect(readLbphYaml(writeLbphYaml({ ...model, faceAlignment: undefined })).faceAlignment).toBeUndefined();
  });

  it('round-trips odd floats, thresholds and label names through OpenCV byte for byte', () => {
    const rand = rng(42);
    const h = new Float32Array(2 * 2 * 16); // grid 2x2, 4 neighbours
    for (let i = 0; i < h.length; i++) h[i] = rand() < 0.4 ? 0 : (rand() - 0.2) * 10 ** Math.floor(rand() * 12 - 8);
    h.set([1234567.125, 0.5, -0, 1e-45, 3e38, Infinity, -Infinity, NaN, 2 ** 31, -(2 ** 31), 16777216, 0.1, 2.5, 1 / 3], 0);
    const names = ['9lives', 'Ann Lee', "o'k:#", 'Zoë "Q" 12\\x', 'tab\there', 'line\nbreak', ' lead', '-dash', 'a/b+(c);d_e', ''];
    for (const threshold of [Number.MAX_VALUE, 123.456, Infinity, 100, 1e-300]) {
      const model: LbphModel = {
        radius: 2,
        neighbors: 4,
        gridX: 2,
        gridY: 2,
        threshold,
        histograms: [h, h.map((v) => v * 2)],
        labels: new Int32Array([7, -3]),
        labelsInfo: names.map((value, i) => ({ label: i - 2, value })),
      };
      const text = writeLbphYaml(model);
      const path = join(tmp, 'odd.yml');
      const again = join(tmp, 'odd-opencv.yml');
      writeFileSync(path, text);
      python(
        `import sys, cv2
r = cv2.face.LBPHFaceRecognizer_create()
r.read(sys.argv[1])
r.write(sys.argv[2])
print('{}')`,
        path,
        again,
      );
      expect(readFileSync(again, 'utf8')).toBe(text);
      const back = readLbphYaml(text);
      expect(back.threshold).toBe(threshold);
      expect(back.labelsInfo).toEqual(model.labelsInfo);
      // OpenCV prints -0 as "0.", so it comes back as +0; every other value is bit-identical.
      const want = h.map((v) => (Object.is(v, -0) ? 0 : v));
      expect(Buffer.from(back.histograms[0].buffer).equals(Buffer.from(want.buffer))).toBe(true);
    }
  });

  it('writes an untrained model the way OpenCV does', () => {
    const model: LbphModel = {
      radius: 2,
      neighbors: 4,
      gridX: 3,
      gridY: 2,
      threshold: 123.456,
      histograms: [],
      labels: new Int32Array(0),
    };
    const path = join(tmp, 'empty.yml');
    python(
      `import sys, cv2
cv2.face.LBPHFaceRecognizer_create(radius=2, neighbors=4, grid_x=3, grid_y=2, threshold=123.456).write(sys.argv[1])
print('{}')`,
      path,
    );
    const theirs = readFileSync(path, 'utf8');
    expect(writeLbphYaml(model)).toBe(theirs);
    expect(readLbphYaml(theirs)).toMatchObject({ radius: 2, neighbors: 4, gridX: 3, gridY: 2, histograms: [], labelsInfo: [] });
  });
});

describe('readLbphYaml on other inputs', () => {
  const small = `%YAML:1.0
---
# a comment
opencv_lbphfaces:
   threshold: 0.   # zero means "not set", as in OpenCV
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

  it('reads comments, wrapped flow data, octal ints, inline flow maps and CRLF', () => {
    for (const text of [small, small.replace(/\n/g, '\r\n')]) {
      const m = readLbphYaml(text);
      expect(m.threshold).toBe(Number.MAX_VALUE);
      expect([...m.histograms[0]]).toEqual([0.5, 0.25, 0, 0.25]);
      expect([...m.labels]).toEqual([10]); // strtol base 0: "012" is octal, as OpenCV reads it
      expect(m.labelsInfo).toEqual([{ label: 10, value: 'ten' }]);
    }
  });

  it('parses generic FileStorage nodes', () => {
    const v = parseOpenCvYaml("%YAML:1.0\n---\na: [ 1, -.Inf, .nan, 'it''s', \"x\\ty\" ]\nb:\n- 1\n- two\nc: { x:1, y: 2 }\n") as {
      entries: Map<string, { items?: unknown[]; entries?: Map<string, unknown> }>;
    };
    const a = v.entries.get('a')?.items as unknown[];
    expect(a.slice(0, 2)).toEqual([1, -Infinity]);
    expect(Number.isNaN(a[2])).toBe(true);
    expect(a.slice(3)).toEqual(["it's", 'x\ty']);
    expect(v.entries.get('b')?.items).toEqual([1, 'two']);
    expect([...(v.entries.get('c')?.entries ?? [])]).toEqual([
      ['x', 1],
      ['y', 2],
    ]);
  });

  const bad: [string, string, RegExp][] = [
    ['empty text', '', /%YAML/],
    ['XML storage', '<?xml version="1.0"?>\n<opencv_storage/>', /XML/],
    ['JSON storage', '{ "opencv_lbphfaces": {} }', /JSON/],
    ['another recognizer', '%YAML:1.0\n---\nopencv_eigenfaces:\n   num_components: 3\n', /not an LBPH model.*opencv_eigenfaces/],
    ['a missing field', small.replace('   radius: 1\n', ''), /no "radius"/],
    ['a wrong value count', small.replace('cols: 4', 'cols: 5'), /1x5 matrix has 4 values/],
    ['a histogram of the wrong size', small.replace('neighbors: 2', 'neighbors: 3'), /need 8/],
    ['double histograms', small.replace('dt: f', 'dt: d'), /float32/],
    [
      'labels that do not match',
      small.replace('rows: 1\n      cols: 1', 'rows: 1\n      cols: 2').replace('[ 012 ]', '[ 1, 2 ]'),
      /1 histograms but 2 labels/,
    ],
    ['truncated data', small.slice(0, small.indexOf('.25')), /unterminated flow|expected/],
    ['a bad number', small.replace('.25,', '.2.5,'), /invalid number/],
    ['tabs', small.replace('   radius', '\tradius'), /tabs/],
    ['bad indentation', small.replace('   radius', '    radius'), /indentation/],
    [
      'base64 data',
      small.replace('data: [ 5.00000000e-01,', 'data: !!binary |\n            AAAA\n         x: [').replace('.25, 0., 2.5e-01 ]', ''),
      /binary|base64/,
    ],
  ];
  for (const [what, text, message] of bad) {
    it(`rejects ${what} with a clear error`, () => {
      expect(() => readLbphYaml(text)).toThrow(message);
    });
  }
});
