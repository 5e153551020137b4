/**
 * Identity sets for functional tests, built from the licensed photos in test/fixtures/images (no labelled
 * multi-person face set can be installed here): each single-person photo is one identity; variations are flips,
 * brightness changes, crops and rescales made with sharp.
 */
import sharp from 'sharp';
import { readTestImage } from './test-server.js';

/** One photo per person: each holds a single frontal face. */
export const PEOPLE = {
  grace: 'faces/grace_hopper.jpg',
  eileen: 'faces/astronaut.png',
  lionel: 'faces/messi5.jpg',
} as const;

export type Person = keyof typeof PEOPLE;

export async function photo(person: Person): Promise<Buffer> {
  return readTestImage(PEOPLE[person]);
}

/** Training captures of a person: the photo, its mirror image, a brighter and a darker copy. */
export async function trainingCaptures(person: Person): Promise<Buffer[]> {
  const original = await photo(person);
  return Promise.all([
    sharp(original).jpeg({ quality: 92 }).toBuffer(),
    sharp(original).flop().jpeg({ quality: 92 }).toBuffer(),
    sharp(original).modulate({ brightness: 1.15 }).jpeg({ quality: 92 }).toBuffer(),
    sharp(original).modulate({ brightness: 0.85 }).jpeg({ quality: 92 }).toBuffer(),
  ]);
}

/** The same person in "another photo": rescaled to a different size (and re-encoded). */
export async function rescaled(person: Person, scale: number): Promise<Buffer> {
  const original = await photo(person);
  const meta = await sharp(original).metadata();
  return sharp(original)
    .resize(Math.round(meta.width! * scale), Math.round(meta.height! * scale))
    .jpeg({ quality: 90 })
    .toBuffer();
}

export function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64');
}

/** A crop of a face in its photo, widened by `margin` of the box each side, `size` px wide, lit by `light`, as a JPEG. */
export async function faceCrop(
  photo: Buffer,
  box: { x: number; y: number; width: number; height: number },
  margin: number,
  size: number,
  light = 1,
): Promise<Buffer> {
  const meta = await sharp(photo).metadata();
  const left = Math.max(0, Math.round(box.x - box.width * margin));
  const top = Math.max(0, Math.round(box.y - box.height * margin));
  const width = Math.min(meta.width! - left, Math.round(box.width * (1 + 2 * margin)));
  const height = Math.min(meta.height! - top, Math.round(box.height * (1 + 2 * margin)));
  return sharp(photo).extract({ left, top, width, height }).resize(size).modulate({ brightness: light }).jpeg({ quality: 88 }).toBuffer();
}
