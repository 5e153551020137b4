/**
 * Camera-like pictures of two people for the face step's tests, made from licensed photos of
 * test/fixtures/images (SOURCES.md): each person's face cut from a photo with room around it, then re-lit, moved
 * and re-compressed, so enrollment and sign-in see different captures (never the same pixels, which LBPH refuses
 * as a replay), as JPEG base64 the way a page's canvas sends them.
 */
import path from 'node:path';
import sharp from 'sharp';
import { TESTDATA } from '../helpers/test-server.js';

interface Person {
  file: string;
  /** The face's box in the photo. */
  box: { x: number; y: number; w: number; h: number };
}

export const PERSON_A: Person = { file: 'faces/grace_hopper.jpg', box: { x: 145, y: 99, w: 239, h: 239 } };
export const PERSON_B: Person = { file: 'faces/sample1.jpg', box: { x: 364, y: 363, w: 244, h: 244 } };

/** Variations of a capture: brightness, contrast (1 / gamma), a shift of the crop, a size and the JPEG quality. */
const VARIANTS = [
  { brightness: 1, gamma: 1, dx: 0, dy: 0, size: 320, quality: 92 },
  { brightness: 1.12, gamma: 1, dx: 0.04, dy: 0, size: 300, quality: 88 },
  { brightness: 0.9, gamma: 1.4, dx: -0.04, dy: 0.02, size: 340, quality: 90 },
  { brightness: 1.05, gamma: 1.2, dx: 0.02, dy: -0.03, size: 310, quality: 85 },
  { brightness: 0.95, gamma: 1, dx: -0.02, dy: 0.04, size: 330, quality: 80 },
  { brightness: 1.08, gamma: 1.3, dx: 0.03, dy: 0.03, size: 290, quality: 86 },
];

/** Capture `n` (0..5) of a person: the face with half its size around it, as base64 JPEG. */
export async function capture(person: Person, n: number): Promise<string> {
  const v = VARIANTS[n % VARIANTS.length];
  const file = path.join(TESTDATA, person.file);
  const { width = 0, height = 0 } = await sharp(file).metadata();
  const { x, y, w, h } = person.box;
  const side = Math.round(w * 2);
  const left = Math.max(0, Math.round(x + w / 2 - side / 2 + v.dx * w));
  const top = Math.max(0, Math.round(y + h / 2 - side / 2 + v.dy * h));
  const buf = await sharp(file)
    .removeAlpha()
    .extract({ left, top, width: Math.min(side, width - left), height: Math.min(side, height - top) })
    .resize(v.size, v.size, { fit: 'inside' })
    .linear(1 / v.gamma, 128 * (1 - 1 / v.gamma))
    .modulate({ brightness: v.brightness })
    .jpeg({ quality: v.quality })
    .toBuffer();
  return buf.toString('base64');
}

/** A picture without any face (a grey card), as base64 JPEG. */
export async function noFace(): Promise<string> {
  return (
    await sharp({ create: { width: 320, height: 240, channels: 3, background: { r: 128, g: 128, b: 120 } } })
      .jpeg()
      .toBuffer()
  ).toString('base64');
}
