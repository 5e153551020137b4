/**
 * How a detected face becomes recognizer input, identical in training and recognition, on the server and
 * in the browser: crop the box from the grayscale image, then resize to one fixed size. (The original
 * service upscaled training faces to 550x550 but recognised faces at their native size, so small real
 * photos never matched; one normalisation for both sides is the fix.)
 */
import type { GrayImage, Rect } from '../image/types.js';
import { cropGray, resizeLinearExact } from '../image/ops.js';

/** Side of the square face image the recognizers see, in pixels. */
export const FACE_SIZE = 100;

/** Crops a face box (clipped to the image) and resizes it to FACE_SIZE x FACE_SIZE with OpenCV's bit-exact bilinear. */
export function normalizeFace(gray: GrayImage, box: Rect, size: number = FACE_SIZE): GrayImage {
  const crop = cropGray(gray, box);
  return resizeLinearExact(crop, size, size);
}

/** The largest box by area (ties: the first), or undefined for none. The enrolling person is nearest the camera. */
export function largestBox<T extends Rect>(boxes: readonly T[]): T | undefined {
  let best: T | undefined;
  for (const box of boxes) if (!best || box.width * box.height > best.width * best.height) best = box;
  return best;
}
