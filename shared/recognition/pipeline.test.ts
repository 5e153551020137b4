import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it, vi } from 'vitest';
import { rgbToGray } from '../image/ops.js';
import type { Rect, RgbImage } from '../image/types.js';
import { lbpHistogram, LBPH_DEFAULTS } from '../lbph/lbph.js';
import { trainEmbedding } from '../embedding/matcher.js';
import { largestBox, normalizeFace } from '../vision/face-region.js';
import { detectMultiScale, parseHaarCascade } from '../vision/haar-cascade.js';
import { namesFromLabelIds } from './face-results.js';
import {
  CASCADE_DEFAULTS,
  detectOptionsOf,
  FacePipeline,
  faceQuality,
  predictEmbeddingFaces,
  predictLbphFaces,
  ruleFor,
} from './pipeline.js';
import { defaultRule, QUALITY_FLOORS } from './rules.js';

const LBPH_RULE = defaultRule('lbph');
// These synthetic pictures are a few pixels wide: the quality floors (tested below) would call every face low_quality.
const EMBEDDING_RULE = { ...defaultRule('embedding'), quality: null };

const ROOT = process.cwd();
const cascade = parseHaarCascade(readFileSync(resolve(ROOT, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
const detect = (gray: Parameters<typeof detectMultiScale>[1]) => detectMultiScale(cascade, gray, detectOptionsOf(CASCADE_DEFAULTS));

async function image(rel: string): Promise<{ rgb: RgbImage; gray: ReturnType<typeof rgbToGray> }> {
  const { data, info } = await sharp(resolve(ROOT, 'test/fixtures/images', rel))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const rgb: RgbImage = { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data) };
  return { rgb, gray: rgbToGray(rgb) };
}

const names = namesFromLabelIds({ grace: 0 });

describe('cascade parameters', () => {
  it('has the server settings defaults, as detectMultiScale takes them', () => {
    expect(CASCADE_DEFAULTS).toEqual({ scaleFactor: 1.1, minNeighbors: 5, minSize: 30 });
    expect(detectOptionsOf({ scaleFactor: 1.2, minNeighbors: 3, minSize: 40 })).toEqual({
      scaleFactor: 1.2,
      minNeighbors: 3,
      minSize: { width: 40, height: 40 },
    });
  });

  it("picks the recognizer's rule, the calibrated default where none is given", () => {
    expect(ruleFor('lbph')).toEqual(LBPH_RULE);
    expect(ruleFor('embedding')).toEqual(defaultRule('embedding'));
    expect(ruleFor('embedding', {}, 'faceres-1024')).toEqual(defaultRule('embedding', 'faceres-1024'));
    const own = { ...EMBEDDING_RULE, max: 0.55 };
    expect(ruleFor('embedding', { embedding: own })).toEqual(own);
  });
});

describe('FacePipeline', () => {
  it('trains on the largest face and recognises the person with LBPH, as the steps do one by one', async () => {
    const photo = await image('faces/grace_hopper.jpg');
    const pipeline = new FacePipeline({ detect });
    const sample = await pipeline.sample(photo);
    const boxes = detect(photo.gray);
    expect(sample.boxes).toEqual(boxes);
    expect(sample.face).toEqual(largestBox(boxes));
    expect(sample.histogram).toEqual(lbpHistogram(normalizeFace(photo.gray, sample.face!)));
    expect(sample.descriptor).toBeNull();

    // Untrained: the faces are found, all unknown, and the answer says no model was used.
    const before = await pipeline.recognize(photo, { recognizer: 'lbph', rule: LBPH_RULE });
    expect(before.trained).toBe(false);
    expect(before.faces.map((f) => f.label)).toEqual(boxes.map(() => 'unknown'));

    const model = { ...LBPH_DEFAULTS, histograms: [sample.histogram!], labels: Int32Array.of(0) };
    pipeline.setModels({ lbph: { model, names } });
    const after = await pipeline.recognize(photo, { recognizer: 'lbph', rule: { ...LBPH_RULE, min: 0 } });
    expect(after.trained).toBe(true);
    const face = after.faces.find((f) => f.x === sample.face!.x && f.y === sample.face!.y)!;
    expect(face).toMatchObject({ label: 'grace', confidence: 100, distance: 0 });
    // The same as the steps on their own.
    expect(after.faces.length).toBe(predictLbphFaces(photo.gray, boxes, model).length);
  });

  it('takes boxes found elsewhere instead of running its cascade', async () => {
    const photo = await image('faces/grace_hopper.jpg');
    const hostDetect = vi.fn(detect);
    const pipeline = new FacePipeline({ detect: hostDetect });
    const given: Rect[] = [{ x: 1, y: 2, width: 40, height: 40 }];
    const r = await pipeline.recognize(photo, { recognizer: 'lbph', rule: LBPH_RULE, boxes: given });
    expect(hostDetect).not.toHaveBeenCalled();
    expect(r.faces).toEqual([{ x: 1, y: 2, w: 40, h: 40, label: 'unknown', confidence: 0, reason: 'not_trained' }]);
  });

  it('a host without a detector needs the boxes with the job', async () => {
    const pipeline = new FacePipeline({});
    await expect(pipeline.detect({ width: 1, height: 1, data: new Uint8Array(1) })).rejects.toThrow(/no face detector/);
  });

  it('embedding: describes only when there is a model, and names the nearest descriptor within the window', async () => {
    const rgb: RgbImage = { width: 4, height: 4, channels: 3, data: new Uint8Array(48) };
    const boxes: Rect[] = [
      { x: 0, y: 0, width: 2, height: 2 },
      { x: 2, y: 2, width: 2, height: 2 },
    ];
    const near = new Float32Array(128).fill(0.01);
    const far = new Float32Array(128).fill(0.5);
    const describe = vi.fn(async (_rgb: RgbImage, b: Rect[]) => b.map((_, i) => (i === 0 ? near : far)));
    const pipeline = new FacePipeline({ describe });

    const untrained = await pipeline.recognize({ rgb }, { recognizer: 'embedding', rule: EMBEDDING_RULE, boxes });
    expect(describe).not.toHaveBeenCalled();
    expect(untrained).toMatchObject({ trained: false, faces: [{ label: 'unknown' }, { label: 'unknown' }] });

    const model = trainEmbedding([{ label: 0, descriptor: new Float32Array(128) }]);
    pipeline.setModels({ embedding: { model, names } });
    const r = await pipeline.recognize({ rgb }, { recognizer: 'embedding', rule: EMBEDDING_RULE, boxes });
    expect(describe).toHaveBeenCalledTimes(1);
    expect(r.trained).toBe(true);
    expect(r.faces.map((f) => f.label)).toEqual(['grace', 'unknown']);
    expect(r.faces[1].distance).toBeCloseTo(Math.sqrt(128 * 0.25), 3);
    // The step on its own gives the same ids.
    expect((await predictEmbeddingFaces(rgb, boxes, model, describe)).map((f) => f.ranked?.[0]?.labelId)).toEqual([0, 0]);
    expect(r.descriptors).toBeUndefined();

    // Asked for, the descriptors it computed come back in the faces' order (the server's sightings reuse them),
    // null for a face the nets could not describe; none when nothing was described.
    const some = vi.fn(async (_rgb: RgbImage, b: Rect[]) => b.map((_, i) => (i === 0 ? near : undefined)) as Float32Array[]);
    const keeping = new FacePipeline({ describe: some });
    const step = { recognizer: 'embedding' as const, rule: EMBEDDING_RULE, boxes, descriptors: true };
    expect((await keeping.recognize({ rgb }, step)).descriptors).toBeUndefined();
    keeping.setModels({ embedding: { model, names } });
    const kept = await keeping.recognize({ rgb }, step);
    expect(some).toHaveBeenCalledTimes(1);
    expect(kept.descriptors).toEqual([near, null]);
    expect(kept.faces.map((f) => f.label)).toEqual(['grace', 'unknown']);
  });

  it('a model swap applies whole, from the next recognition on', async () => {
    const pipeline = new FacePipeline({ describe: async (_rgb, b) => b.map(() => new Float32Array(128)) });
    const model = trainEmbedding([{ label: 3, descriptor: new Float32Array(128) }]);
    pipeline.setModels({ embedding: { model, names: namesFromLabelIds({ ada: 3 }) } });
    const step = { recognizer: 'embedding' as const, rule: EMBEDDING_RULE, boxes: [{ x: 0, y: 0, width: 1, height: 1 }] };
    const rgb: RgbImage = { width: 1, height: 1, channels: 3, data: new Uint8Array(3) };
    expect((await pipeline.recognize({ rgb }, step)).faces[0].label).toBe('ada');
    pipeline.setModels({ lbph: null });
    expect(pipeline.models.embedding).not.toBeNull(); // untouched by a swap of the other recognizer
    pipeline.setModels({ embedding: null });
    expect(await pipeline.recognize({ rgb }, step)).toMatchObject({ trained: false, faces: [{ label: 'unknown' }] });
  });
});

describe('FacePipeline: quality and the background cohort (#34)', () => {
  const photo = async () => {
    const { data, info } = await sharp(resolve(ROOT, 'test/fixtures/images/faces/grace_hopper.jpg'))
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { width: info.width, height: info.height, channels: 3 as const, data: new Uint8Array(data) };
  };
  const face: Rect = { x: 145, y: 99, width: 239, height: 239 };
  const zero = new Float32Array(128);
  const at = (d: number) => new Float32Array(128).fill(d / Math.sqrt(128));
  const model = trainEmbedding([{ label: 0, descriptor: zero }]);
  const names = namesFromLabelIds({ grace: 0 });

  it('measures the face from the colour picture as from its gray one (the server has only colour for embedding)', async () => {
    const rgb = await photo();
    const fromRgb = faceQuality({ rgb }, face);
    const fromGray = faceQuality({ gray: rgbToGray(rgb) }, face);
    expect(fromRgb).toEqual(fromGray);
    expect(fromRgb?.facePx).toBe(239);
    expect(fromRgb?.sharpness).toBeGreaterThan(QUALITY_FLOORS.sureSharpness);
  });

  it('a face under the floors is unknown, low_quality, with its candidate; a poor one is never high', async () => {
    const rgb = await photo();
    const pipeline = new FacePipeline({ describe: async (_rgb, b) => b.map(() => at(0.2)) });
    pipeline.setModels({ embedding: { model, names } });
    const rule = { ...defaultRule('embedding'), cohortRatio: null };
    const good = await pipeline.recognize({ rgb }, { recognizer: 'embedding', rule, boxes: [face] });
    expect(good.faces[0]).toMatchObject({ label: 'grace', certainty: 'high' });
    // The same descriptor on a face 20 px wide: too small to tell people apart.
    const tiny = await pipeline.recognize({ rgb }, { recognizer: 'embedding', rule, boxes: [{ x: 200, y: 150, width: 20, height: 20 }] });
    expect(tiny.faces[0]).toMatchObject({ label: 'unknown', reason: 'low_quality', candidate: { label: 'grace' } });
    // 40 px: named, but only `unsure`.
    const small = await pipeline.recognize({ rgb }, { recognizer: 'embedding', rule, boxes: [{ x: 200, y: 150, width: 40, height: 40 }] });
    expect(small.faces[0]).toMatchObject({ label: 'grace', certainty: 'unsure' });
  });

  it('holds each person to their cohort bound, and to the sure bound when the host has no cohort', async () => {
    const rgb = await photo();
    // Cohort faces at 0.5 from grace's sample: her bound is 0.5, her limit 0.8 * 0.5 = 0.4.
    // (each on an axis of its own, so they lie far from the faces asked about: the cohort's part in the margin rule
    // stays out of this test)
    const cohortFaces = new Float32Array(128 * 5);
    for (let i = 0; i < 5; i++) cohortFaces[i * 128 + i] = 0.5;
    const cohort = { descriptorModel: 'faceapi-128', dim: 128, descriptors: cohortFaces };
    const rule = { ...defaultRule('embedding'), max: 0.55, sureMax: 0.45, cohortRatio: 0.8, quality: null };
    const decide = async (d: number, withCohort: boolean) => {
      const pipeline = new FacePipeline({
        describe: async (_rgb, b) => b.map(() => at(d)),
        ...(withCohort ? { cohort: () => cohort } : {}),
      });
      pipeline.setModels({ embedding: { model, names } });
      return (await pipeline.recognize({ rgb }, { recognizer: 'embedding', rule, boxes: [face] })).faces[0];
    };
    expect(await decide(0.38, true)).toMatchObject({ label: 'grace' });
    expect(await decide(0.42, true)).toMatchObject({ label: 'unknown', reason: 'below_threshold', candidate: { label: 'grace' } });
    // The site's corrections join the cohort: three "not this person" faces 0.3 from grace (taken for someone
    // else) bring her bound to 0.3 and her limit to 0.24, so the face at 0.38 is no longer named.
    const corrections = [10, 11, 12].map((axis) => {
      const f = new Float32Array(128);
      f[axis] = 0.3;
      return f;
    });
    const corrected = new FacePipeline({ describe: async (_rgb, b) => b.map(() => at(0.38)), cohort: () => cohort });
    corrected.setModels({ embedding: { model, names } });
    corrected.setNegatives({ embedding: new Map([['someone-else', corrections]]) });
    expect((await corrected.recognize({ rgb }, { recognizer: 'embedding', rule, boxes: [face] })).faces[0]).toMatchObject({
      label: 'unknown',
      reason: 'below_threshold',
      candidate: { label: 'grace' },
    });
    // No cohort: the sure bound (0.45) is the limit, never the looser max (0.55).
    expect(rule.sureMax).toBe(0.45);
    expect(await decide(0.44, false)).toMatchObject({ label: 'grace' });
    expect(await decide(0.5, false)).toMatchObject({ label: 'unknown', reason: 'below_threshold' });
  });
});
