import { defaultRule } from './rules.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { GrayImage } from '../image/types.js';
import { lbpHistogram, predictLbph } from '../lbph/lbph.js';
import { readLbphYaml } from '../lbph/opencv-yaml.js';
import { FACE_ALIGNMENT } from '../vision/eye-alignment.js';
import { normalizeFace } from '../vision/face-region.js';
import { detectMultiScale, parseHaarCascade } from '../vision/haar-cascade.js';
import { encodeLbphFile } from './model-files.js';
import { FacePipeline } from './pipeline.js';
import { assembleModels } from './training.js';

// A face upright and the same face turned by 12 degrees (OpenCV-made, scripts/fixtures/alignment_fixtures.py).
const FIX = resolve(process.cwd(), 'test/fixtures/opencv/alignment/faces');
const models = resolve(process.cwd(), 'public/models');
const faceCascade = parseHaarCascade(readFileSync(resolve(models, 'haarcascade_frontalface_alt2.xml'), 'utf8'));
const eyeCascade = parseHaarCascade(readFileSync(resolve(models, 'haarcascade_eye.xml'), 'utf8'));
const detect = (gray: GrayImage) =>
  detectMultiScale(faceCascade, gray, { scaleFactor: 1.1, minNeighbors: 5, minSize: { width: 30, height: 30 } });

async function grayPng(file: string): Promise<GrayImage> {
  const { data, info } = await sharp(resolve(FIX, file)).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

async function distanceOfTiltedQuery(pipeline: FacePipeline): Promise<{ distance: number; faceAlignment?: string }> {
  const sample = await pipeline.sample({ gray: await grayPng('p2_a0.png') });
  const assembled = assembleModels([
    {
      label: 'p2',
      histogram: sample.histogram!,
      descriptor: null,
      ...(sample.faceAlignment ? { faceAlignment: sample.faceAlignment } : {}),
    },
  ]);
  pipeline.setModels({ lbph: { model: assembled.lbph, names: new Map([[0, 'p2']]) } });
  const r = await pipeline.recognize({ gray: await grayPng('p2_a-12.png') }, { recognizer: 'lbph', rule: defaultRule('lbph') });
  return { distance: r.faces[0].distance!, ...(assembled.lbph.faceAlignment ? { faceAlignment: assembled.lbph.faceAlignment } : {}) };
}

describe('LBPH with eye-tilt alignment in the pipeline', () => {
  it('marks models trained with the eye cascade, and a tilted query of the same person comes much nearer', async () => {
    const plain = await distanceOfTiltedQuery(new FacePipeline({ detect }));
    const aligned = await distanceOfTiltedQuery(new FacePipeline({ detect, eyeCascade }));
    expect(plain.faceAlignment).toBeUndefined();
    expect(aligned.faceAlignment).toBe(FACE_ALIGNMENT);
    expect(aligned.distance).toBeLessThan(plain.distance * 0.8);
  });

  it('queries a model without the mark (made by OpenCV or before alignment) with the plain crop it was trained on', async () => {
    const up = await grayPng('p2_a0.png');
    const tilted = await grayPng('p2_a-12.png');
    const [b0] = detect(up);
    const [b1] = detect(tilted);
    const plainModel = assembleModels([{ label: 'p2', histogram: lbpHistogram(normalizeFace(up, b0)), descriptor: null }]).lbph;
    const pipeline = new FacePipeline({ detect, eyeCascade });
    pipeline.setModels({ lbph: { model: plainModel, names: new Map([[0, 'p2']]) } });
    const r = await pipeline.recognize({ gray: tilted }, { recognizer: 'lbph', rule: defaultRule('lbph') });
    const expected = predictLbph(plainModel, lbpHistogram(normalizeFace(tilted, b1))).distance;
    expect(r.faces[0].distance).toBeCloseTo(expected, 4);
  });

  it('keeps the mark through training.yml, and refuses to mix normalisations in one model', async () => {
    const h = new Float32Array(256 * 64);
    const { lbph, labelIds } = assembleModels([{ label: 'a', histogram: h, descriptor: null, faceAlignment: FACE_ALIGNMENT }]);
    expect(readLbphYaml(encodeLbphFile(lbph, labelIds)).faceAlignment).toBe(FACE_ALIGNMENT);
    expect(() =>
      assembleModels([
        { label: 'a', histogram: h, descriptor: null, faceAlignment: FACE_ALIGNMENT },
        { label: 'b', histogram: h, descriptor: null },
      ]),
    ).toThrow(/normalised in different ways/);
  });
});
