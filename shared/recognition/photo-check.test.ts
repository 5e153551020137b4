/**
 * The photo check on the repository's real photos and degraded copies of them (sharp): each verdict from a photo
 * that has that problem, and the thresholds' margins on the measurements photo-check.ts cites.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { rgbToGray } from '../image/ops.js';
import type { GrayImage, Rect } from '../image/types.js';
import { eyeCandidates } from '../vision/eye-alignment.js';
import { detectMultiScale, parseHaarCascade } from '../vision/haar-cascade.js';
import {
  checkPhoto,
  enrollmentSummary,
  findSmallFaces,
  MAX_CLIPPED,
  measuredFace,
  MIN_FACE_PX,
  MIN_HIGHLIGHTS,
  MIN_SHARPNESS,
  pickFace,
  type PhotoCheck,
} from './photo-check.js';
import { CASCADE_DEFAULTS, detectOptionsOf } from './pipeline.js';

const ROOT = process.cwd();
const cascade = parseHaarCascade(readFileSync(resolve(ROOT, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
const eyeCascade = parseHaarCascade(readFileSync(resolve(ROOT, 'public/models/haarcascade_eye.xml'), 'utf8'));
const fixture = (rel: string) => readFileSync(resolve(ROOT, 'test/fixtures/images', rel));

async function grayOf(bytes: Buffer): Promise<GrayImage> {
  const { data, info } = await sharp(bytes).rotate().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return rgbToGray({ width: info.width, height: info.height, channels: 3, data: new Uint8Array(data) });
}

/** What the vision worker does: detect, find the measured face's eye candidates, check. */
async function check(bytes: Buffer, pick?: Rect): Promise<PhotoCheck & { boxes: Rect[] }> {
  const gray = await grayOf(bytes);
  let faces = detectMultiScale(cascade, gray, detectOptionsOf(CASCADE_DEFAULTS));
  if (faces.length === 0) faces = findSmallFaces(gray, cascade, detectOptionsOf(CASCADE_DEFAULTS));
  const face = measuredFace(faces, pick);
  const eyes = face ? eyeCandidates(eyeCascade, gray, face) : undefined;
  return { ...checkPhoto({ gray, faces, ...(pick ? { pick } : {}), ...(eyes ? { eyes } : {}) }), boxes: faces };
}

describe('checkPhoto on real photos', () => {
  it('a single clear face is ok (grace_hopper: eyeglasses hide the eyes, so frontal is unknown, not a problem)', async () => {
    const c = await check(fixture('faces/grace_hopper.jpg'));
    expect(c).toMatchObject({ verdict: 'ok', problems: [], faces: 1, picked: false });
    expect(c.message).toMatch(/good photo/i);
    expect(c.measures!.face_px).toBeGreaterThan(200);
    expect(c.measures!.sharpness).toBeGreaterThan(10 * MIN_SHARPNESS);
    expect(c.measures!.frontal).toBeNull();
  });

  it('astronaut: ok, both eyes seen where a frontal face has them', async () => {
    const c = await check(fixture('faces/astronaut.png'));
    expect(c.verdict).toBe('ok');
    expect(c.measures).toMatchObject({ eyes: 2, frontal: true });
    // 97 px wide and in focus: above both limits, with room.
    expect(c.measures!.face_px).toBeGreaterThanOrEqual(MIN_FACE_PX + 10);
    expect(c.measures!.sharpness).toBeGreaterThan(3 * MIN_SHARPNESS);
  });

  it('a photo without a face (brick) is no_face, and so is every negative and object photo without one', async () => {
    for (const rel of ['negatives/brick.png', 'negatives/coins.png', 'objects/chelsea.png', 'objects/coffee.png']) {
      const c = await check(fixture(rel));
      expect(c, rel).toMatchObject({ verdict: 'no_face', faces: 0, face: null, measures: null });
    }
    expect((await check(fixture('negatives/brick.png'))).message).toMatch(/no face/i);
  });

  it('two faces (sample4) is several_faces with the largest measured; picking one measures that one', async () => {
    const c = await check(fixture('faces/sample4.jpg'));
    expect(c.verdict).toBe('several_faces');
    expect(c.faces).toBe(2);
    expect(c.message).toMatch(/^Two faces: pick one/);
    const other = c.boxes.find((b) => b.x !== c.face!.x)!;
    const picked = await check(fixture('faces/sample4.jpg'), other);
    expect(picked.picked).toBe(true);
    expect(picked.problems).not.toContain('several_faces');
    expect(picked.face).toEqual({ x: other.x, y: other.y, w: other.width, h: other.height });
  });

  it('a pick that matches no face gives no_face, not picked', async () => {
    const c = await check(fixture('faces/sample4.jpg'), { x: 0, y: 0, width: 50, height: 50 });
    expect(c).toMatchObject({ verdict: 'no_face', picked: false, face: null });
  });

  it('a tiny face is too_small: messi5 (41 px) and grace_hopper at a quarter size', async () => {
    const messi = await check(fixture('faces/messi5.jpg'));
    expect(messi.verdict).toBe('too_small');
    expect(messi.measures!.face_px).toBeLessThan(MIN_FACE_PX / 1.5);
    expect(messi.message).toMatch(/Too small: the face is \d+ px wide/);
    const small = await check(await sharp(fixture('faces/grace_hopper.jpg')).resize({ width: 128 }).jpeg().toBuffer());
    expect(small.verdict).toBe('too_small');
  });

  it('a face too small for the cascade (28 px) is found again and is too_small, not no_face (#36)', async () => {
    const photo = fixture('faces/grace_hopper.jpg');
    const { width } = await sharp(photo).metadata();
    // grace's face is 239 px wide in the 512 px photo.
    const small = await grayOf(
      await sharp(photo)
        .resize({ width: Math.round((width! * 28) / 239) })
        .jpeg({ quality: 92 })
        .toBuffer(),
    );
    expect(detectMultiScale(cascade, small, detectOptionsOf(CASCADE_DEFAULTS))).toEqual([]);
    const c = await check(
      await sharp(photo)
        .resize({ width: Math.round((width! * 28) / 239) })
        .jpeg({ quality: 92 })
        .toBuffer(),
    );
    expect(c.verdict).toBe('too_small');
    expect(c.measures!.face_px).toBeLessThan(45);
  });

  it('a blurred copy is blurred (Gaussian sigma 4 on grace, 2 on astronaut)', async () => {
    const grace = await check(await sharp(fixture('faces/grace_hopper.jpg')).blur(4).jpeg({ quality: 92 }).toBuffer());
    expect(grace.verdict).toBe('blurred');
    expect(grace.measures!.sharpness).toBeLessThan(MIN_SHARPNESS / 1.5);
    const astronaut = await check(await sharp(fixture('faces/astronaut.png')).blur(2).jpeg({ quality: 92 }).toBuffer());
    expect(astronaut.verdict).toBe('blurred');
  });

  it('an underexposed copy is too_dark; a dark skin in good light is not', async () => {
    const dark = await check(await sharp(fixture('faces/grace_hopper.jpg')).modulate({ brightness: 0.3 }).jpeg().toBuffer());
    expect(dark.verdict).toBe('too_dark');
    expect(dark.measures!.highlights).toBeLessThan(MIN_HIGHLIGHTS);
    // sample5: the face of mean gray 58 (the darkest main face of the fixtures) has highlights well above the limit.
    const group = await check(fixture('faces/sample5.jpg'));
    const gray = await grayOf(fixture('faces/sample5.jpg'));
    const measured = group.boxes.filter((b) => b.width >= 200).map((b) => checkPhoto({ gray, faces: group.boxes, pick: b }));
    const darkSkin = measured.reduce((a, c) => (c.measures!.brightness < a.measures!.brightness ? c : a));
    expect(darkSkin.measures!.brightness).toBeLessThan(70);
    expect(darkSkin.problems).not.toContain('too_dark');
    expect(darkSkin.measures!.highlights).toBeGreaterThan(MIN_HIGHLIGHTS + 10);
  });

  it('an overexposed copy is too_bright', async () => {
    const bright = await check(await sharp(fixture('faces/grace_hopper.jpg')).modulate({ brightness: 1.6 }).jpeg().toBuffer());
    expect(bright.verdict).toBe('too_bright');
    expect(bright.measures!.clipped).toBeGreaterThan(MAX_CLIPPED);
    const original = await check(fixture('faces/grace_hopper.jpg'));
    expect(original.measures!.clipped).toBeLessThan(MAX_CLIPPED / 2);
    // The washed-out background faces of sample6 too; its well-lit main faces not.
    const gray = await grayOf(fixture('faces/sample6.jpg'));
    const faces = detectMultiScale(cascade, gray, detectOptionsOf(CASCADE_DEFAULTS));
    const verdicts = faces.map((f) => checkPhoto({ gray, faces, pick: f }).problems.includes('too_bright'));
    expect(verdicts.filter(Boolean).length).toBe(3);
  });

  it('the main faces of the group photos pass sharpness and exposure when picked', async () => {
    for (const rel of ['faces/sample1.jpg', 'faces/sample3.jpg', 'faces/sample6.jpg']) {
      const gray = await grayOf(fixture(rel));
      const faces = detectMultiScale(cascade, gray, detectOptionsOf(CASCADE_DEFAULTS));
      const main = faces.filter((f) => f.width >= 230);
      expect(main.length, rel).toBeGreaterThan(0);
      for (const f of main) {
        const c = checkPhoto({ gray, faces, pick: f });
        expect(c.problems, `${rel} ${JSON.stringify(f)}`).toEqual([]);
      }
    }
  });
});

describe('frontal, from the eyes only', () => {
  const gray: GrayImage = { width: 200, height: 200, data: new Uint8Array(200 * 200).map((_, i) => (i * 37) % 251) };
  const box: Rect = { x: 50, y: 50, width: 100, height: 100 };
  const at = (fx: number, fy: number) => ({ x: box.x + fx * box.width, y: box.y + fy * box.height });

  it('two eyes level and centred: frontal', () => {
    expect(checkPhoto({ gray, faces: [box], eyes: [at(0.3, 0.38), at(0.68, 0.38)] }).measures!.frontal).toBe(true);
  });
  it('eyes shifted to one side (a turned head): not_frontal', () => {
    const c = checkPhoto({ gray, faces: [box], eyes: [at(0.12, 0.38), at(0.45, 0.38)] });
    expect(c.measures!.frontal).toBe(false);
    expect(c.problems).toContain('not_frontal');
  });
  it('a roll beyond what alignment undoes: not_frontal', () => {
    expect(checkPhoto({ gray, faces: [box], eyes: [at(0.3, 0.25), at(0.68, 0.55)] }).measures!.frontal).toBe(false);
  });
  it('one eye or none: cannot tell (null), never a problem', () => {
    expect(checkPhoto({ gray, faces: [box], eyes: [at(0.3, 0.38)] }).measures).toMatchObject({ eyes: 1, frontal: null });
    expect(checkPhoto({ gray, faces: [box] }).measures).toMatchObject({ eyes: null, frontal: null });
  });
});

describe('pickFace', () => {
  const faces: Rect[] = [
    { x: 0, y: 0, width: 100, height: 100 },
    { x: 300, y: 0, width: 100, height: 100 },
  ];
  it('matches by overlap, and nothing below 0.3', () => {
    expect(pickFace(faces, { x: 310, y: 5, width: 95, height: 95 })).toBe(1);
    expect(pickFace(faces, { x: 0, y: 0, width: 100, height: 100 })).toBe(0);
    expect(pickFace(faces, { x: 150, y: 0, width: 100, height: 100 })).toBeNull();
  });
});

describe('enrollmentSummary', () => {
  it('advises as the issue asks', () => {
    expect(enrollmentSummary(['ok'])).toEqual({
      photos: 1,
      good: 1,
      problems: 0,
      unchecked: 0,
      enough: false,
      advice: '1 photo: add 2 more from other angles',
    });
    expect(enrollmentSummary(['ok', 'no_face']).advice).toBe('2 photos, 1 with a problem: add 2 more from other angles');
    expect(enrollmentSummary(['ok', 'ok', 'ok'])).toMatchObject({ enough: true, advice: '3 photos: enough to train' });
    expect(enrollmentSummary([null, null, 'ok', 'blurred'])).toMatchObject({ unchecked: 2, problems: 1, enough: true });
    expect(enrollmentSummary([]).advice).toMatch(/No photos yet/);
  });
});
